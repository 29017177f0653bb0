"""The exact value of C + A @ B, and how far a computed D lies from it.

Every input a matrix unit reads is a binary float of at most 24
significant bits, so each is an integer times a power of two, m * 2^e, and
so is each product: (ma * mb) * 2^(ea + eb). The exact sum is found without
any rounding: the integer parts of the products are added in one bin per
exponent (in float64, exact while a bin's sum stays below 2^53: at most
2^(53 - pa - pb) products are added before the bins are moved into int64),
and the bins then make one Python integer per element of D,
sum(bin_e * 2^e). No floating-point sum of products is ever formed.

The error of D is measured against that integer: in units in the last
place (ulps) of the output format at the exact value (the spacing of the
format's numbers around it: 2^(max(floor(log2 |x|), emin) - frac_bits)),
relative to the exact value, and by its direction (towards zero or away).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.formats import Format

CHUNK_ELEMENTS = 1 << 22      # products formed at once


@dataclass(frozen=True)
class Exact:
    """Per element of D: the exact value as ``ints[i] * 2^scale`` (Python ints)."""

    ints: list[int]
    scale: int
    shape: tuple[int, int]


def _split(x: np.ndarray, precision: int) -> tuple[np.ndarray, np.ndarray]:
    """x (finite float64, at most ``precision`` significant bits) as integers m and e, x = m * 2^e."""
    f, e = np.frexp(x)
    return np.ldexp(f, precision).astype(np.int64), e.astype(np.int64) - precision


def _lowest(fmt: Format) -> int:
    """The exponent of the last bit of fmt's smallest subnormal."""
    return fmt.emin - fmt.frac_bits


def exact_sum(A: np.ndarray, B: np.ndarray, C: np.ndarray, fa: Format, fb: Format, fc: Format,
              low: int) -> Exact:
    """C + A @ B exactly, for A (M x K), B (K x N) and C (M x N) holding
    finite values of fa, fb and fc (as float64); ``low`` at most the
    exponent of the smallest bit any input, product or output can have."""
    m, k = A.shape
    n = B.shape[1]
    pa, pb = fa.precision, fb.precision
    if pa + pb + max(k, 1).bit_length() > 62:
        raise UserError(f"exact sums of {fa.name} x {fb.name} products are not supported "
                        f"for K = {k} (the integer parts would pass 62 bits)")
    for name, x in (("A", A), ("B", B), ("C", C)):
        if not np.isfinite(x).all():
            raise UserError(f"{name} holds infinities or NaNs: the error is measured on finite inputs")
    ma, ea = _split(A, pa)
    mb, eb = _split(B, pb)
    top = max(2 * max(fa.emax, fb.emax) + 4, fc.emax + 2) - low
    bins = np.zeros(m * n * top, dtype=np.int64)
    cells = (np.arange(m)[:, None] * n + np.arange(n)[None, :]) * top
    step = max(1, min(CHUNK_ELEMENTS // max(m * n, 1), 1 << (53 - pa - pb)))
    for k0 in range(0, k, step):
        sl = slice(k0, k0 + step)
        ints = ma[:, None, sl] * mb.T[None, :, sl]
        where = cells[:, :, None] + (ea[:, None, sl] + eb.T[None, :, sl] - low)
        bins += np.rint(np.bincount(where.ravel(), weights=ints.ravel().astype(np.float64),
                                    minlength=bins.size)).astype(np.int64)
    mc, ec = _split(C, fc.precision)
    np.add.at(bins, (cells + ec - low).ravel(), mc.ravel())
    return Exact(_combine(bins.reshape(m * n, top)), low, (m, n))


def _combine(bins: np.ndarray) -> list[int]:
    """Each row's sum(bins[e] * 2^e) as a Python int: the carries moved up
    in NumPy, then the 0/1 bits packed into bytes and read as an integer."""
    bins = bins.copy()
    for e in range(bins.shape[1] - 1):
        carry = bins[:, e] >> 1
        bins[:, e] -= carry << 1
        bins[:, e + 1] += carry
    bits = np.packbits(bins[:, :-1].astype(np.uint8), axis=1, bitorder="little")
    top = bins.shape[1] - 1
    return [(int(t) << top) + int.from_bytes(row.tobytes(), "little")
            for t, row in zip(bins[:, -1], bits)]


@dataclass(frozen=True)
class Errors:
    """The error of every finite element of D against the exact value."""

    ulps: np.ndarray          # signed, in ulps of the output format at the exact value
    relative: np.ndarray      # signed, (d - x) / x; NaN where x = 0
    towards_zero: int         # inexact elements with |d| < |x|, d not of the other sign
    inexact: int
    nonfinite: int            # elements of D that are infinite or NaN (left out)


def errors(D: np.ndarray, exact: Exact, fout: Format) -> Errors:
    """D (float values of fout) against the exact values."""
    d = np.asarray(D, dtype=np.float64).ravel()
    finite = np.isfinite(d)
    md, ed = _split(np.where(finite, d, 0.0), fout.precision)
    ulps, rel = np.zeros(d.size), np.full(d.size, np.nan)
    towards = inexact = 0
    for i, x in enumerate(exact.ints):
        if not finite[i]:
            continue
        err = (int(md[i]) << int(ed[i] - exact.scale)) - x
        exp = max(abs(x).bit_length() - 1 + exact.scale, fout.emin) if x else fout.emin
        ulps[i] = err / (1 << (exp - fout.frac_bits - exact.scale))
        if x:
            rel[i] = err / x
        if err:
            inexact += 1
            got = x + err
            towards += (x > 0 and err < 0 and got >= 0) or (x < 0 and err > 0 and got <= 0)
    return Errors(ulps[finite], rel[finite], towards, inexact, int((~finite).sum()))
