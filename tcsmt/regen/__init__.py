"""regen"""
