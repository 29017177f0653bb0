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
    in order: first the bumped rows (``rows_x``, ``bumped``), then
    MOVE_SEEDS batches of moved rows (``moved_rows``); the caller replays
    each on the concrete model (tcsmt.search.monotonic.check_witness)
    before taking it."""
    rng = random.Random(seed)
    a, b, c = rows_x(p, k, rows, rng)
    src, ya, yb, yc = bumped(p, a, b, c, rng)
    yield from _unordered(p, k, (a, b, c), src, (ya, yb, yc), seed)
    for s in range(seed, seed + MOVE_SEEDS):
        xa, xb, xc, ya, yb, yc = moved_rows(p, k, MOVE_ROWS, s)
        yield from _unordered(p, k, (xa, xb, xc), np.arange(len(xc)), (ya, yb, yc), s)


def _unordered(p: ModelParams, k: int, x, src, y, seed: int) -> Iterator[tuple[Vector, Vector]]:
    """The pairs (x[src[j]], y[j]) the batch simulator orders f(x) > f(y)
    (x and y share their scales, drawn for the x rows)."""
    (a, b, c), (ya, yb, yc) = x, y
    rows = len(c)
    if rows == 0:
        return
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
        xv = Vector(tuple(int(v) for v in a[r]), tuple(int(v) for v in b[r]), int(c[r]), *scales)
        yv = Vector(tuple(int(v) for v in ya[j]), tuple(int(v) for v in yb[j]), int(yc[j]), *scales)
        yield xv, yv


MOVE_ROWS = 4000
"""Rows of each batch of moved rows (moved_rows)."""
MOVE_SEEDS = 3
"""Batches of moved rows after the bumped ones, each from its own seed."""


def _positive_rows(rng: np.random.Generator, fmt: Format, exps: np.ndarray, ones: np.ndarray) -> np.ndarray:
    """Non-negative finite encodings of fmt with exponents ``exps`` (clamped),
    random fractions, or every fraction bit set where ``ones``."""
    e = np.clip(exps + fmt.bias, 1, fmt.max_exp_field)
    f = rng.integers(0, 1 << fmt.frac_bits, len(e)) if fmt.frac_bits else np.zeros(len(e), np.int64)
    f = np.where(ones, (1 << fmt.frac_bits) - 1, f)
    if fmt.specials == "fn":
        f = np.where(e == fmt.max_exp_field, np.minimum(f, fmt.max_frac_at_emax), f)
    return (e.astype(np.uint64) << np.uint64(fmt.frac_bits)) | f.astype(np.uint64)


def moved_rows(p: ModelParams, k: int, n: int, seed: int):
    """x rows of products spread over a random span of binades below a top
    one (fractions random or all ones, some products zero; c of either sign
    near the top, often just below a power of two), and for each a y: the
    largest a_i (or a random one) raised to the next value or the next power
    of two, a b_i raised to the next value, or c raised to the next value or
    the next power of two. Rows whose y is not finite are dropped."""
    rng = np.random.default_rng(seed)
    fin, fb, fc = p.fin, p.fb, p.fc
    top = rng.integers(max(fin.emin, -6), min(fin.emax, 6) + 1, n)
    span = rng.integers(0, 14, n)
    a = np.zeros((n, k), np.uint64)
    b = np.zeros((n, k), np.uint64)
    for i in range(k):
        a[:, i] = _positive_rows(rng, fin, top - rng.integers(0, span + 1), rng.random(n) < 0.3)
        b[:, i] = _positive_rows(rng, fb, rng.integers(-1, 2, n), rng.random(n) < 0.3)
        a[rng.random(n) < rng.random(n) * 0.5, i] = 0
    ce = np.clip(top + rng.integers(-4, max(8, p.F), n) + fc.bias, 1, fc.max_exp_field - 1)
    cf = np.where(rng.random(n) < 0.4, (1 << fc.frac_bits) - 1, rng.integers(0, 1 << fc.frac_bits, n))
    sign = (rng.random(n) < 0.4).astype(np.uint64)
    c = (sign << np.uint64(fc.bits - 1)) | (ce.astype(np.uint64) << np.uint64(fc.frac_bits)) | \
        cf.astype(np.uint64)
    c[rng.random(n) < 0.15] = 0
    return _moved(p, a, b, c, rng)


def _moved(p: ModelParams, a, b, c, rng: np.random.Generator):
    n, k = a.shape
    fin, fc = p.fin, p.fc
    move = rng.integers(0, 5, n)
    rows = np.arange(n)
    idx = np.where(rng.random(n) < 0.6, np.argmax(a, axis=1), rng.integers(0, k, n))
    one, fbits = np.uint64(1), np.uint64(fin.frac_bits)
    ya, yb = a.copy(), b.copy()
    cur = a[rows, idx]
    ya[rows, idx] = np.where(move == 0, cur + one, np.where(move == 1, ((cur >> fbits) + one) << fbits, cur))
    yb[rows, idx] = np.where(move == 2, b[rows, idx] + one, b[rows, idx])
    neg = (c >> np.uint64(fc.bits - 1)) == 1
    mag = c & np.uint64((1 << (fc.bits - 1)) - 1)
    c_next = np.where(neg, np.where(mag > 0, c - one, c), c + one)
    c_power = np.where(neg, c, ((c >> np.uint64(fc.frac_bits)) + one) << np.uint64(fc.frac_bits))
    yc = np.where(move == 3, c_next, np.where(move == 4, c_power, c))
    keep = _finite(fin, ya, True) & _finite(p.fb, yb, True) & _finite(fc, yc[:, None], False)
    return a[keep], b[keep], c[keep], ya[keep], yb[keep], yc[keep]


def _finite(fmt: Format, bits: np.ndarray, positive: bool) -> np.ndarray:
    """Rows whose every encoding is a finite value of fmt (with its sign
    bit clear where ``positive``: the next value up of the largest one may
    wrap into the sign bit)."""
    ok = np.vectorize(lambda v: fmt.classify(int(v)) in ("normal", "subnormal", "zero"), otypes=[bool])
    sign = (bits >> np.uint64(fmt.bits - 1)) & np.uint64(1)
    return (ok(bits) & ((sign == 0) | (not positive))).all(axis=1)
