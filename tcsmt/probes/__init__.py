"""Probe writing: self-contained CUDA and HIP programs that run vectors on
a real matrix unit and print the bits it returned, with their calibration
vectors and build commands."""
