"""Candidate vectors for block-scaled models, beside the readable pool.

The choices of block-scaled hardware show on inputs that random readable
vectors rarely hit: two to four products inside one scale block (so they
share a group of some size but not of a smaller one), a c that sets the
block's window so that those products land on its last bits (their
truncated parts then add up differently when they are summed exactly
first, or when c is added after them), and scales that are 1, near 1,
extreme, zero or NaN. ``scaled_rows`` draws such rows; tcsmt.search.pool
runs them through every hypothesis with the batch simulator like its own,
so what they separate is read off the concrete model.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np

from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain

EDGE_SHAPES = (Fraction(1), Fraction(3, 2), Fraction(7, 4), Fraction(5, 4))


def _finite(fs: Format) -> list[int]:
    return [x for x in range(1 << fs.bits) if fs.classify(x) not in ("nan", "inf")]


def scale_values(fs: Format, finite: bool) -> dict[str, list[int]]:
    """Scale bit patterns by kind: one, near 1, extreme, zero, NaN (NaN only
    where the domain allows non-finite values)."""
    fin = _finite(fs)
    one = next(x for x in fin if fs.value(x) == 1)
    return {"one": [one],
            "near": [x for x in fin if Fraction(1, 4) <= fs.finite_value(x) <= 4],
            "extreme": [min(fin, key=fs.finite_value), max(fin, key=fs.finite_value)],
            "zero": [x for x in fin if fs.value(x) == 0],
            "nan": [] if finite else [x for x in range(1 << fs.bits) if fs.classify(x) == "nan"]}


def scale_exponents(fs: Format) -> dict[int, int]:
    """The exponent of every non-zero finite scale, in increasing order."""
    return {x: _exp(fs, x) for x in sorted(_finite(fs), key=fs.finite_value) if fs.finite_value(x) > 0}


def _scales(rng: random.Random, kinds: dict[str, list[int]], n: int) -> list[int]:
    """n scales: all 1, or near 1, with now and then one extreme, zero or NaN."""
    pick = "one" if rng.random() < 0.5 else "near"
    out = [rng.choice(kinds[pick]) for _ in range(n)]
    for special in ("extreme", "zero", "nan"):
        if kinds[special] and rng.random() < 0.15:
            out[rng.randrange(n)] = rng.choice(kinds[special])
    return out


def _edge_c(rng: random.Random, p: ModelParams, prods: list[Fraction]) -> int:
    """c whose window puts the largest product near its last kept bit, or
    (one time in three) c a little below that product with a low bit far
    under it, which a coarser window drops."""
    big = max((abs(x) for x in prods), default=Fraction(0))
    if big == 0:
        return 0
    F = p.facc.frac_bits + p.align_bits
    top = math.floor(math.log2(big))
    if rng.random() < 0.35:
        low = rng.randint(min(8, p.fc.frac_bits), p.fc.frac_bits)
        v = (1 + Fraction(1, 2**low)) * Fraction(2) ** (top - rng.randint(0, 6))
    else:
        v = rng.choice(EDGE_SHAPES) * Fraction(2) ** (top + F + rng.randint(-4, 3))
    v *= rng.choice((1, -1))
    bits = p.fc.round_value(v, "rz")
    return bits if p.fc.value(bits) == v else 0


def _exp(fs: Format, x: int) -> int:
    return math.floor(math.log2(fs.finite_value(x)))


def _spread(rng: random.Random, p: ModelParams, exps: dict[int, int], sa, sb, j: int, k: int,
            m: int) -> list[int]:
    """Scale block j at large scales and another block at scales about the
    window's width F below them (as near as the scale format reaches): one
    product in j, the others in the other block; their positions."""
    blk, n = p.scaling()[1], len(sa)
    F = p.facc.frac_bits + p.align_bits
    other = rng.choice([x for x in range(n) if x != j])
    usable = list(exps)
    big = usable[-1 - rng.randrange(min(3, len(usable)))]
    sa[j] = sb[j] = big
    target = 2 * exps[big] - F + rng.randint(-6, 6)
    sa[other] = min(usable, key=lambda x: abs(2 * exps[x] - target))
    sb[other] = min(usable, key=lambda x: abs(exps[x] + exps[int(sa[other])] - target))
    rest = range(other * blk, min(k, (other + 1) * blk))
    return [rng.randrange(j * blk, min(k, (j + 1) * blk))] + rng.sample(rest, min(len(rest), m - 1))


def scaled_rows(p: ModelParams, k: int, domain: Domain, size: int, nice_a: list[int],
                nice_b: list[int], seed: int = 0):
    """[size, k] a and b (drawn from the bit patterns nice_a and nice_b),
    [size] c, [size, n] scales of a and of b."""
    rng = random.Random(seed + 11)
    n, (fs, blk) = p.scale_count(k), p.scaling()
    kinds = scale_values(fs, domain.finite)
    a = np.zeros((size, k), dtype=np.uint64)
    b = np.zeros((size, k), dtype=np.uint64)
    c = np.zeros(size, dtype=np.uint64)
    sa = np.zeros((size, n), dtype=np.uint64)
    sb = np.zeros((size, n), dtype=np.uint64)
    lo = max(2, domain.nonzero_min)
    hi = min(4, domain.nonzero_max if domain.nonzero_max is not None else 4)
    for i in range(size):
        j = rng.randrange(n)
        span = range(j * blk, min(k, (j + 1) * blk)) if rng.random() < 0.8 else range(k)
        m = min(len(span), rng.randint(lo, max(lo, hi)))
        sa[i], sb[i] = _scales(rng, kinds, n), _scales(rng, kinds, n)
        places = rng.sample(span, m)
        if n > 1 and rng.random() < 0.25:
            places = _spread(rng, p, scale_exponents(fs), sa[i], sb[i], j, k, m)
        prods = []
        for pos in places:
            a[i, pos], b[i, pos] = rng.choice(nice_a), rng.choice(nice_b)
            s = [fs.value(int(x[i, pos // blk])) for x in (sa, sb)]
            if isinstance(s[0], Fraction) and isinstance(s[1], Fraction):      # not a NaN scale
                prods.append(p.fin.finite_value(int(a[i, pos])) * p.fb.finite_value(int(b[i, pos]))
                             * s[0] * s[1])
        c[i] = _edge_c(rng, p, prods) if rng.random() < 0.7 else 0
    return a, b, c, sa, sb
