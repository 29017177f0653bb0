"""Generated dot products that reach the corners of a model: subnormal
products, cancellation, ties at the output's precision, overflow to
infinity, NaN and infinity inputs, signed zeros, random bit patterns.

Rows are bit patterns: a and b [N, K] in the model's in_format, c [N] in its
c_format. Values are encoded with tcsmt.model.formats (exact Fractions), so every
row is what its kind says it is.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams

KINDS = ("random_values", "subnormal_products", "cancellation", "output_ties",
         "overflow", "nan_inf", "signed_zeros", "random_bits")


def enc(fmt: Format, value) -> int:
    """Bits of an exactly representable value (rounded to nearest if not)."""
    return fmt.round_value(Fraction(value), "rne")


def rand_value(fmt: Format, rng, lo: int | None = None, hi: int | None = None) -> int:
    """Bits of a random finite value with unbiased exponent in [lo, hi]."""
    lo = fmt.emin - fmt.frac_bits if lo is None else lo
    hi = min(fmt.emax, 6) if hi is None else hi
    e = int(rng.integers(lo, hi + 1))
    sig = int(rng.integers(1 << fmt.frac_bits, 1 << (fmt.frac_bits + 1)))
    v = Fraction(sig, 1 << fmt.frac_bits) * Fraction(2) ** e
    bits = enc(fmt, -v if rng.random() < 0.5 else v)
    return bits if fmt.classify(bits) not in ("inf", "nan") else enc(fmt, 1)


def _row(p: ModelParams, kind: str, k: int, rng) -> tuple[list[int], list[int], int]:
    fin, fc = p.fin, p.fc
    if kind == "random_values":
        return ([rand_value(fin, rng) for _ in range(k)], [rand_value(fin, rng) for _ in range(k)],
                rand_value(fc, rng, -8, 8))
    if kind == "subnormal_products":
        tiny = fin.emin - fin.frac_bits
        a = [rand_value(fin, rng, tiny, fin.emin + 1) for _ in range(k)]
        b = [rand_value(fin, rng, fin.emin - 2, 0) for _ in range(k)]
        c = enc(fc, 0) if rng.random() < 0.5 else rand_value(fc, rng, fc.emin - fc.frac_bits, fc.emin)
        return a, b, c
    if kind == "cancellation":
        x = [rand_value(fin, rng, -4, 4) for _ in range(k)]
        a = x[:]
        b = [rand_value(fin, rng, -4, 4) for _ in range(k)]
        for i in range(0, k - 1, 2):               # pairs a_i*b_i = -(a_{i+1}*b_{i+1})
            a[i + 1] = a[i]
            b[i + 1] = b[i] ^ (1 << (fin.bits - 1))
        if rng.random() < 0.5:                     # a small survivor
            a[-1] = rand_value(fin, rng, -10, -6)
        big = fin.value(a[0]) * fin.value(b[0])
        c = enc(fc, -big) if rng.random() < 0.5 else enc(fc, 0)
        return a, b, c
    if kind == "output_ties":
        return _tie_row(p, k, rng)
    if kind == "overflow":
        top = fin.max_finite_bits(0)
        a = [top] * k
        b = [top if rng.random() < 0.8 else rand_value(fin, rng) for _ in range(k)]
        c = fc.max_finite_bits(int(rng.integers(0, 2)))
        return a, b, c
    if kind == "nan_inf":
        a = [rand_value(fin, rng) for _ in range(k)]
        b = [rand_value(fin, rng) for _ in range(k)]
        specials = [fin.nan_bits()] if fin.has_nan else []
        if fin.has_inf:
            specials += [fin.inf_bits(0), fin.inf_bits(1), enc(fin, 0)]
        specials = specials or [enc(fin, 0), fin.max_finite_bits(1)]     # fp6, fp4: no specials
        for _ in range(int(rng.integers(1, 3))):
            i = int(rng.integers(0, k))
            (a if rng.random() < 0.5 else b)[i] = specials[int(rng.integers(0, len(specials)))]
        c_opts = [rand_value(fc, rng, -4, 4), fc.inf_bits(1), fc.inf_bits(0), fc.nan_bits()]
        return a, b, c_opts[int(rng.integers(0, len(c_opts)))]
    if kind == "signed_zeros":
        sign = 1 << (fin.bits - 1)
        a = [int(rng.integers(0, 2)) * sign for _ in range(k)]
        b = [rand_value(fin, rng) if rng.random() < 0.5 else 0 for _ in range(k)]
        return a, b, int(rng.integers(0, 2)) << (fc.bits - 1)
    if kind == "random_bits":
        return ([int(v) for v in rng.integers(0, 1 << fin.bits, k)],
                [int(v) for v in rng.integers(0, 1 << fin.bits, k)], int(rng.integers(0, 1 << fc.bits)))
    raise ValueError(kind)


def _tie_row(p: ModelParams, k: int, rng):
    """c plus one product equal to half a unit in the last place of the
    output at c (or 1.5 units), the other products zero: a tie for RNE."""
    fin, fc, out = p.fin, p.fc, p.fout
    e = int(rng.integers(-3, 4))
    sig = int(rng.integers(1 << out.frac_bits, 1 << (out.frac_bits + 1)))
    cval = Fraction(sig, 1 << out.frac_bits) * Fraction(2) ** e
    c = fc.round_value(cval, "rz")
    cval = fc.value(c)
    half_ulp = Fraction(2) ** (e - out.frac_bits - 1)
    prod = half_ulp * (3 if rng.random() < 0.3 else 1)
    if rng.random() < 0.5:
        prod = -prod
    a, b = [enc(fin, 0)] * k, [enc(fin, 0)] * k
    i = int(rng.integers(0, k))
    pe = prod.numerator.bit_length() - prod.denominator.bit_length()
    split = max(fin.emin, min(fin.emax, pe // 2))
    a[i] = enc(fin, Fraction(2) ** split)
    b[i] = enc(fin, prod / Fraction(2) ** split)
    return a, b, c


def rows(p: ModelParams, n: int, k: int, seed: int = 0):
    """n rows cycling through KINDS: (a [n, k], b [n, k], c [n]) as uint64."""
    rng = np.random.default_rng(seed)
    a, b, c = [], [], []
    for i in range(n):
        ra, rb, rc = _row(p, KINDS[i % len(KINDS)], k, rng)
        a.append(ra)
        b.append(rb)
        c.append(rc)
    return (np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64),
            np.array(c, dtype=np.uint64))
