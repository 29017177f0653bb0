"""tcsmt: bit-accurate models of GPU matrix units (tensor cores, matrix
cores), interpreted as a simulator and as SMT formulas."""

__version__ = "0.1.0"
