"""A pool of readable candidate vectors, run through every hypothesis at once.

Before a property asks the solvers anything, ``search`` builds a few
thousand inputs of the kind the papers' hand-made tests use (few non-zero
products; values 2^e, (1 + 2^-j) 2^e, (2 - 2^-j) 2^e, (1 - 2^-j) 2^e, their
negatives; c near a product or far below it; signed zeros, ``zero_rows``),
runs them through every
hypothesis with the batch simulator (the datapath with the NumPy
interpretation) and picks, greedily, vectors that separate the most pairs.
What it separates is read off the concrete model, like any witness; the
solvers are left the pairs the pool does not separate, the question whether
one vector can do all, and every proof.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np

from tcsmt.datapath.sparse import random_mask
from tcsmt.errors import UserError
from tcsmt.model.formats import Format
from tcsmt.model.integers import int_format
from tcsmt.search.domain import Domain
from tcsmt.search.scaled_pool import scaled_rows
from tcsmt.search.vectors import Hypothesis, Vector

POOL_SIZE = 3000
SCALAR_ROWS = 300
"""Rows run on the scalar simulator when a block-scaled model is too wide
for the batch one (the last rows: its targeted rows)."""


def nice_values(fmt: Format, span: int = 12) -> list[int]:
    """Bit patterns of fmt with few significant bits near 1, both signs."""
    vals: set[int] = set()
    fb = fmt.frac_bits
    shapes = [Fraction(1)]
    for j in range(1, fb + 1):
        shapes += [1 + Fraction(1, 2**j), 2 - Fraction(1, 2**j), Fraction(3, 2) + Fraction(1, 2**j)]
    for e in range(-span, span + 1):
        for m in shapes:
            v = m * Fraction(2) ** e
            for s in (1, -1):
                bits = fmt.round_value(s * v, "rz")
                if fmt.value(bits) == s * v:
                    vals.add(bits)
    for e_extreme in (fmt.emin, fmt.emin - fb, fmt.emax):   # smallest normal, subnormal, largest
        v = Fraction(2) ** e_extreme
        bits = fmt.round_value(v, "rz")
        if fmt.value(bits) == v:
            vals.add(bits)
    if fmt.bits <= 8:
        vals = {x for x in range(1 << fmt.bits) if fmt.classify(x) in ("normal", "subnormal")}
    return sorted(vals)


def c_values(fc: Format, span: int = 30) -> list[int]:
    """c candidates: zero, powers of two, and values one unit below or above
    them; for an integer c (s32) also the ends of its range and values a
    little inside them, where wrapping and saturating act."""
    vals = {0}
    if fc.is_integer:
        fi = int_format(fc)
        vals |= {fi.encode(fi.highest - j) for j in (0, 1, 100, 10000)}
        vals |= {fi.encode(fi.lowest + j) for j in (0, 1, 100, 10000)}
    for e in range(-span, span + 1):
        base = Fraction(2) ** e
        ulp = Fraction(2) ** (e - fc.frac_bits)
        for v in (base, base - ulp / 2, base + ulp, base * 3 / 2, base - ulp):
            for s in (1, -1):
                bits = fc.round_value(s * v, "rz")
                if fc.value(bits) == s * v:
                    vals.add(bits)
    return sorted(vals)


def candidates(fin: Format, fc: Format, k: int, domain: Domain, size: int = POOL_SIZE,
               seed: int = 0, fb: Format | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[size, k] a and b bit patterns (b in ``fb``, by default fin) and
    [size] c bit patterns."""
    rng = random.Random(seed)
    nice, nice_b, cs = nice_values(fin), nice_values(fb or fin), c_values(fc)
    a = np.zeros((size, k), dtype=np.uint64)
    b = np.zeros((size, k), dtype=np.uint64)
    c = np.zeros(size, dtype=np.uint64)
    lo = max(1, domain.nonzero_min)
    hi = min(k, domain.nonzero_max if domain.nonzero_max is not None else k)
    counts = [m for m in (1, 2, 3, 4, k) if lo <= m <= hi] or [hi]
    for i in range(size):
        m = rng.choice(counts)
        for pos in rng.sample(range(k), m):
            a[i, pos] = rng.choice(nice)
            b[i, pos] = rng.choice(nice_b)
        c[i] = rng.choice(cs)
    return a, b, c


def zero_rows(fin: Format, fb: Format, fc: Format, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of signed zeros: every product -0 (a = -0, b = +0) or +0, the
    first product's sign flipped, c = +0 or -0 (where the formats have a
    -0): the sign of a zero sum tells apart models that read a zero input's
    sign differently (flushing every step reads every zero as +0)."""
    za, zb, zc = (1 << (f.bits - 1) if f.has_negative_zero else 0 for f in (fin, fb, fc))
    rows = []
    for prods in ([za] * k, [0] * k, [za] + [0] * (k - 1), [0] + [za] * (k - 1)):
        for c in (zc, 0):
            rows.append((prods, [0] * k, c))
    rows.append(([za] * k, [zb] * k, zc))
    return (np.array([r[0] for r in rows], dtype=np.uint64), np.array([r[1] for r in rows], dtype=np.uint64),
            np.array([r[2] for r in rows], dtype=np.uint64))


def scale_candidates(fs: Format | None, rows: int, n: int, seed: int = 0):
    """[rows, n] scale bit patterns (None without a scale format): mostly
    2^-2..2^2, now and then the smallest and largest scales, never NaN."""
    if fs is None:
        return None
    rng = random.Random(seed + 1)
    finite = [x for x in range(1 << fs.bits) if fs.classify(x) not in ("nan", "inf")]
    near = [x for x in finite if Fraction(1, 4) <= fs.value(x) <= 4]
    extreme = [min(finite, key=fs.value), max(finite, key=fs.value)]
    out = np.zeros((rows, n), dtype=np.uint64)
    for i in range(rows):
        for j in range(n):
            out[i, j] = rng.choice(extreme if rng.random() < 0.1 else near)
    return out


def mask_candidates(p, rows: int, k: int, seed: int = 0) -> np.ndarray | None:
    """[rows, k] masks a sparse model's metadata can spell (in every group
    of four, two positions chosen at random; TF32's 1:2, one of two), None
    for a dense model."""
    if p.sparsity == "dense":
        return None
    rng = random.Random(seed + 3)
    return np.array([random_mask(rng, p.sparsity, k) for _ in range(rows)], dtype=np.uint64)


def evaluate(hyps: list[Hypothesis], a, b, c, sa=None, sb=None, mask=None) -> np.ndarray | None:
    """[len(hyps), rows] outputs, or None when a model is too wide for the
    batch simulator."""
    from tcsmt.sim.batch import dot_batch
    outs = []
    for h in hyps:
        try:
            outs.append(dot_batch(h.params, a, b, c, sa_bits=sa, sb_bits=sb, mask_bits=mask))
        except UserError:
            return None
    return np.stack(outs)


def evaluate_scalar(hyps: list[Hypothesis], a, b, c, sa=None, sb=None) -> np.ndarray:
    """The same outputs with the scalar simulator (the datapath on Python ints)."""
    from tcsmt.sim.dot import dot_bits
    rows = range(a.shape[0])
    scales = [((None, None) if sa is None else ([int(x) for x in sa[r]], [int(x) for x in sb[r]]))
              for r in rows]
    return np.array([[dot_bits(h.params, [int(x) for x in a[r]], [int(x) for x in b[r]], int(c[r]),
                               *scales[r]) for r in rows] for h in hyps], dtype=object)


def search(hyps: list[Hypothesis], k: int, domain: Domain, pairs: list[tuple[int, int]],
           size: int = POOL_SIZE, seed: int = 0) -> list[Vector]:
    """Vectors from the pool, greedily, each separating the most pairs not
    yet separated; only vectors inside the domain are taken."""
    p = hyps[0].params
    a, b, c = candidates(p.fin, p.fc, k, domain, size, seed, p.fb)
    if not p.fin.is_integer and not p.fc.is_integer:
        a, b, c = (np.concatenate([x, y]) for x, y in zip((a, b, c), zero_rows(p.fin, p.fb, p.fc, k)))
        size = a.shape[0]
    sa = scale_candidates(p.fscale, size, p.scale_count(k), seed)
    sb = scale_candidates(p.fscale, size, p.scale_count(k), seed + 7)
    if p.fscale is not None:
        more = scaled_rows(p, k, domain, size, nice_values(p.fin), nice_values(p.fb), seed)
        a, b, c, sa, sb = (np.concatenate([x, y]) for x, y in zip((a, b, c, sa, sb), more))
    mask = mask_candidates(p, a.shape[0], k, seed)
    outs = evaluate(hyps, a, b, c, sa, sb, mask)
    if outs is None and p.fscale is None:
        return []
    if outs is None:            # a block-scaled model too wide for the batch simulator (exact
        #                         groups of fp8 products): its targeted rows on the scalar one
        a, b, c = a[-SCALAR_ROWS:], b[-SCALAR_ROWS:], c[-SCALAR_ROWS:]
        sa = None if sa is None else sa[-SCALAR_ROWS:]
        sb = None if sb is None else sb[-SCALAR_ROWS:]
        outs = evaluate_scalar(hyps, a, b, c, sa, sb)
    open_pairs = list(pairs)
    chosen: list[Vector] = []
    rejected: set[int] = set()
    while open_pairs:
        score = np.zeros(a.shape[0], dtype=np.int64)
        for i, j in open_pairs:
            score += outs[i] != outs[j]
        # fewer non-zero products first among equal scores: more readable
        nonzero = (a != 0).sum(axis=1)
        order = np.lexsort((nonzero, -score))
        pick = next((int(r) for r in order if score[r] > 0 and int(r) not in rejected), None)
        if pick is None:
            break
        scales = ((), ()) if sa is None else (tuple(int(x) for x in sa[pick]),
                                              tuple(int(x) for x in sb[pick]))
        sel = () if mask is None else tuple(int(x) for x in mask[pick])
        vec = Vector(tuple(int(x) for x in a[pick]), tuple(int(x) for x in b[pick]), int(c[pick]),
                     *scales, sel)
        if not domain.contains(p.fin, p.fc, list(vec.a), list(vec.b), vec.c, p.fb):
            rejected.add(pick)
            continue
        chosen.append(vec)
        open_pairs = [(i, j) for i, j in open_pairs if outs[i, pick] == outs[j, pick]]
    return chosen
