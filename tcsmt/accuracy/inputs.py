"""Random matrices of several kinds, for measuring a unit's error.

Each kind draws float64 values from NumPy's generator (seeded, so a run is
repeatable); they are then rounded to nearest (ties to even) into the
model's input formats, as a program converts its data before a GEMM.

- normal: every entry N(0, 1).
- uniform: every entry uniform in [0, 1): all terms positive, the sum grows
  like K and no cancellation happens.
- positive: |N(0, 1)| * exp(N(0, 1)): all positive, magnitudes spread over
  several binades.
- cancelling: ill-conditioned sums. The second half of each row of A
  repeats the first half, and the second half of B's columns is the
  negated first half plus a small N(0, 2^-10) change, so
  sum a_i*b_i is small beside sum |a_i*b_i|: most of each sum cancels.
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError

KINDS = ("normal", "uniform", "positive", "cancelling")
DESCRIPTIONS = {
    "normal": "N(0,1) entries",
    "uniform": "uniform [0,1) entries (all positive)",
    "positive": "|N(0,1)|*exp(N(0,1)) entries (positive, several binades)",
    "cancelling": "sums that cancel: second half of K undoes the first, up to N(0,2^-10)",
}


def draw(kind: str, m: int, n: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A (m x k) and B (k x n) of this kind, as float64."""
    if kind == "normal":
        return rng.standard_normal((m, k)), rng.standard_normal((k, n))
    if kind == "uniform":
        return rng.random((m, k)), rng.random((k, n))
    if kind == "positive":
        def spread(shape):
            return np.abs(rng.standard_normal(shape)) * np.exp(rng.standard_normal(shape))
        return spread((m, k)), spread((k, n))
    if kind == "cancelling":
        h = k // 2
        A, B = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        A[:, h:2 * h] = A[:, :h]
        B[h:2 * h] = -B[:h] + rng.standard_normal((h, n)) * 2.0**-10
        return A, B
    raise UserError(f"unknown distribution {kind!r} (known: {', '.join(KINDS)})")
