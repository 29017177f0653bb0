"""How far a modelled unit's results lie from the exact ones: exact sums of
products (exact.py), random inputs of several kinds (inputs.py), and the
error of C + A @ B under each model (error.py)."""
