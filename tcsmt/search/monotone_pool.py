"""Candidate pairs for monotonicity: x, and y made from x by making one
input larger, run through the batch simulator; a pair with f(x) > f(y)
that replays on the concrete model (tcsmt.search.monotonic check_witness)
is a witness like any solver's.

Monotonicity breaks where making a term larger moves the block's alignment
point up and drops low bits of the other terms (truncation after
alignment), or carries a sum across a rounding boundary the wrong way. The
x rows have many non-zero products with low bits set, in a narrow range of
exponents (and c near their sum, of either sign); each y raises one a_i by
a power of two, to the next value up, or raises c. Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np

from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.search.pool import evaluate, evaluate_scalar, scale_candidates
from tcsmt.search.vectors import Hypothesis, Vector

ROWS = 600
BUMPS = (1, 2, 4, 12)          # exponent steps of the a_i raised


def _positive(rng: random.Random, fmt: Format, e: int) -> int:
    """A finite non-negative value of fmt with exponent near e, low bits set."""
    exp = min(max(e + fmt.bias + rng.randint(-2, 2), 1), fmt.max_exp_field)
    frac = rng.getrandbits(fmt.frac_bits) | 1 if fmt.frac_bits else 0
    if fmt.specials == "fn" and exp == fmt.max_exp_field:
        frac = min(frac, fmt.max_frac_at_emax)
    return fmt.pack(0, exp, frac)


def _up(fmt: Format, x: int, steps: int) -> int:
    """x with its exponent raised by ``steps`` (the largest finite value at
    most), or the next value up for steps == 0."""
    if steps == 0:
        nxt = x + 1
        return nxt if fmt.classify(nxt) in ("normal", "subnormal") else x
    exp = (x >> fmt.frac_bits) & ((1 << fmt.exp_bits) - 1)
    frac = x & ((1 << fmt.frac_bits) - 1)
    new = min(exp + steps, fmt.max_exp_field)
    y = fmt.pack(0, new, frac)
    return y if fmt.classify(y) in ("normal", "subnormal") else fmt.max_finite_bits(0)


def rows_x(p: ModelParams, k: int, n: int, rng: random.Random):
    """[n, k] a and b (non-negative, many non-zero) and [n] c: half of the
    rows with every product the same (F21's example), c just below a power
    of two at or above the products' sum (up to c's precision above it, where
    the products' last bits sit at the register's last place), so raising c
    to that power moves the alignment point up a binade; the other half random."""
    fin, fb, fc = p.fin, p.fb, p.fc
    a = np.zeros((n, k), dtype=np.uint64)
    b = np.zeros((n, k), dtype=np.uint64)
    c = np.zeros(n, dtype=np.uint64)
    for r in range(n):
        e = rng.randint(max(fin.emin, -4), min(fin.emax, 4))
        if r % 2:
            x, y = _positive(rng, fin, e), _positive(rng, fb, 0)
            a[r], b[r] = x, y
            total = k * fin.finite_value(x) * fb.finite_value(y)
            c[r] = _below_power(fc, total.numerator.bit_length() - total.denominator.bit_length()
                                + rng.randint(0, fc.frac_bits + 8))
            continue
        live = rng.sample(range(k), rng.randint(2, k)) if k > 1 else [0]
        for i in live:
            a[r, i] = _positive(rng, fin, e)
            b[r, i] = _positive(rng, fb, 0)
        sign = rng.getrandbits(1)
        c[r] = 0 if rng.random() < 0.3 else fc.pack(
            sign, min(max(e + fc.bias + rng.randint(-3, 4), 1), fc.max_exp_field - 1),
            rng.getrandbits(fc.frac_bits))
    return a, b, c


def _below_power(fc: Format, e: int) -> int:
    """The largest value of fc below 2^e (its largest finite value at most)."""
    exp = min(max(e - 1 + fc.bias, 1), fc.max_exp_field)
    frac = (1 << fc.frac_bits) - 1
    if fc.specials == "fn" and exp == fc.max_exp_field:
        frac = fc.max_frac_at_emax
    return fc.pack(0, exp, frac)


def bumped(p: ModelParams, a, b, c, rng: random.Random):
    """For every x row, y rows: one non-zero a_i raised by each of BUMPS
    and to the next value up, and c raised to the next value up (c's sign
    kept: -|c| moves toward zero). Returns (the x row of each y, y's a, b, c)."""
    src, ya, yb, yc = [], [], [], []
    for r in range(a.shape[0]):
        live = [i for i in range(a.shape[1]) if a[r, i]]
        i = rng.choice(live) if live else 0
        for steps in (0, *BUMPS):
            row = a[r].copy()
            row[i] = _up(p.fin, int(a[r, i]), steps)
            src.append(r)
            ya.append(row)
            yb.append(b[r])
            yc.append(c[r])
        src.append(r)
        ya.append(a[r])
        yb.append(b[r])
        yc.append(_c_up(p.fc, int(c[r])))
    return np.array(src), np.array(ya), np.array(yb), np.array(yc, dtype=np.uint64)


def _c_up(fc: Format, c: int) -> int:
    if c >> (fc.bits - 1):                      # negative: toward zero
        return c - 1 if c & ((1 << (fc.bits - 1)) - 1) else 0
    nxt = c + 1
    return nxt if fc.classify(nxt) in ("normal", "subnormal") else c


def order_key(fmt: Format, bits: np.ndarray) -> np.ndarray:
    """Signed ints ordered like the finite values the bits encode (-0 = +0)."""
    bits = bits.astype(np.int64)
    sign = (bits >> (fmt.bits - 1)) & 1
    mag = bits & ((1 << (fmt.bits - 1)) - 1)
    return np.where(sign == 1, -mag, mag)


def search(p: ModelParams, k: int, rows: int = ROWS, seed: int = 0) -> Iterator[tuple[Vector, Vector]]:
    """Pairs (x, y), x <= y, on which the batch simulator gives f(x) > f(y),
    in order; the caller replays each on the concrete model
    (tcsmt.search.monotonic.check_witness) before taking it."""
    rng = random.Random(seed)
    a, b, c = rows_x(p, k, rows, rng)
    src, ya, yb, yc = bumped(p, a, b, c, rng)
    sa = scale_candidates(p.fscale, rows, p.scale_count(k), seed)
    sb = scale_candidates(p.fscale, rows, p.scale_count(k), seed + 7)
    h = [Hypothesis("model", p)]
    ysa, ysb = (None, None) if sa is None else (sa[src], sb[src])
    fx, fy = evaluate(h, a, b, c, sa, sb), evaluate(h, ya, yb, yc, ysa, ysb)
    if fx is None or fy is None:
        fx, fy = evaluate_scalar(h, a, b, c, sa, sb), evaluate_scalar(h, ya, yb, yc, ysa, ysb)
    kx, ky = (order_key(p.fout, np.asarray(f[0], dtype=np.uint64)) for f in (fx, fy))
    for j in np.nonzero(ky < kx[src])[0]:
        r = int(src[j])
        scales = () if sa is None else (tuple(int(v) for v in sa[r]), tuple(int(v) for v in sb[r]))
        x = Vector(tuple(int(v) for v in a[r]), tuple(int(v) for v in b[r]), int(c[r]), *scales)
        y = Vector(tuple(int(v) for v in ya[j]), tuple(int(v) for v in yb[j]), int(yc[j]), *scales)
        yield x, y
