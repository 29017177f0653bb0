"""The vectors that confirm an identification, parameter by parameter.

* Property vectors (tcsmt.properties): for every property that applies to
  the identified model, the vectors that separate its hypotheses. Where the
  identified model is a shipped one (the same arithmetic), they are read
  from its result files (results/<model>/<property>.json); otherwise they
  are asked on the spot with find's machinery (tcsmt.search.find: the
  candidate pool first, then the solvers, briefly), each a vector that
  separates the identified model from one of the property's hypotheses.
* Random rows of every kind tcsmt.observed.random_rows makes (values, near,
  cancel, tiny, zeros, large, specials, bits).
* Splitting rows: where other models reproduce every row seen so far,
  rows of a pool (the plan's candidates over every finite input, random
  rows, c alone at every exponent, one product alone) on which they differ
  from the identified model, chosen greedily.

A vector is fitted to the instruction's k: padded with zero products (and
scales of 1), or cut where its products beyond k are zero.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcsmt.enums import PairVerdict, PropertyKind
from tcsmt.errors import UserError
from tcsmt.identify.classes import say
from tcsmt.model.params import ModelParams
from tcsmt.observed.random_rows import KINDS, Rows, random_rows
from tcsmt.observed.vectors import scale_one
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector

ASK_TIMEOUT = 1.5       # seconds per solver question when properties are asked on the spot
RANDOM_ROWS = 512       # random rows per confirmation (64 of each kind)
POOL_SIZE = 2000        # candidate rows of the splitting pool (and as many random rows)


# ---------------------------------------------------------------------------
# Vectors as rows of the instruction
# ---------------------------------------------------------------------------

def fit(v: Vector, k: int, p: ModelParams) -> Vector | None:
    """v with k products: zero products (and scales of 1) added, or the
    products beyond k cut when they are zero; None when it cannot be."""
    n = len(v.a)
    if n > k and any(x and y for x, y in zip(v.a[k:], v.b[k:])):
        return None
    a, b = (tuple(v.a[:k]) + (0,) * max(0, k - n), tuple(v.b[:k]) + (0,) * max(0, k - n))
    if p.fscale is None:
        return Vector(a, b, v.c)
    ns, one = p.scale_count(k), scale_one(p.fscale)
    sa = (tuple(v.sa) + (one,) * ns)[:ns]
    sb = (tuple(v.sb) + (one,) * ns)[:ns]
    return Vector(a, b, v.c, sa, sb)


# ---------------------------------------------------------------------------
# Property vectors
# ---------------------------------------------------------------------------

def _properties(h: ModelParams):
    from tcsmt.properties.registry import all_properties
    return [p for p in all_properties().values() if p.kind == PropertyKind.SEPARATE and not p.applies(h)]


def results_roots() -> list[Path]:
    """Where property results are read: results/ here, then the source tree's."""
    here = Path(__file__).resolve().parents[2] / "results"
    return [Path("results")] + ([here] if here.is_dir() else [])


def shipped_vectors(h: ModelParams, same: ModelParams, k: int) -> list[tuple[Vector, str]] | None:
    """The vectors of the result files of ``same`` (a shipped model with h's
    arithmetic), or None when it has none."""
    from tcsmt.fileio import read_json
    from tcsmt.observed.vectors import parse_vectors
    from tcsmt.properties.run import result_path
    out, files = [], 0
    for prop in _properties(h):
        path = next((p for p in (result_path(same, prop, r) for r in results_roots()) if p.exists()), None)
        if path is None:
            continue
        files += 1
        data = read_json(path)
        if not data.get("vectors"):
            continue
        vs = parse_vectors(data, str(path))
        scales = vs.scales or [([], [])] * len(vs.vectors)
        for n, ((a, b, c), (sa, sb)) in enumerate(zip(vs.vectors, scales)):
            v = fit(Vector(tuple(a), tuple(b), c, tuple(sa), tuple(sb)), k, h)
            if v is not None:
                out.append((v, f"{prop.name} vector {n + 1} of {same.name} ({path.parent.name}/{path.name})"))
    return out if files else None


def asked_vectors(h: ModelParams, k: int, log=None) -> tuple[list, list[str]]:
    """For every property that applies to h, vectors separating h from each
    of its hypotheses, asked now (find's pool, then the solvers for
    ASK_TIMEOUT on each pair the pool leaves: the vectors are all run, so
    no question asks for one vector for several pairs); and what was not
    answered. Every property is asked, however long the answers took."""
    from tcsmt.properties.registry import resolve_hypotheses
    from tcsmt.search.find import find_vectors
    from tcsmt.search.vectors import outputs
    out, notes = [], []
    me = repr(sorted(h.parameter_dict().items()))
    for prop in _properties(h):
        try:
            ms = resolve_hypotheses(prop, h)
        except UserError:
            continue
        hyps = [Hypothesis("identified", h)] + [
            Hypothesis(label, m) for label, m in zip(ms.labels, ms.models)
            if repr(sorted(m.parameter_dict().items())) != me]
        if len(hyps) < 2:
            continue
        say(log, f"asking {prop.name} for {h.name} ({len(hyps) - 1} other hypotheses)")
        found = find_vectors(hyps, k, prop.domain(h), timeout=ASK_TIMEOUT, cross_check=False,
                             lemma=prop.lemma, pairs=[(0, j) for j in range(1, len(hyps))], sweep=False,
                             together=False)
        for n, v in enumerate(found.vectors):
            outs = outputs(v, hyps)
            apart = [x.id for x in hyps[1:] if outs[x.id] != outs["identified"]]
            out.append((fit(v, k, h), f"{prop.name} vector {n + 1}, asked now (separates "
                                      f"{', '.join(apart)})"))
        left = [hyps[pv.pair[1]].id for pv in found.pairs if pv.verdict == PairVerdict.UNKNOWN]
        if left:
            notes.append(f"{prop.name}: no vector found for {', '.join(left)}")
    return [x for x in out if x[0] is not None], notes


def property_vectors(h: ModelParams, shipped: list[ModelParams], k: int, centre: ModelParams | None = None,
                     log=None):
    """(vectors with their origins, notes): from the result files of the
    shipped model h is, else asked on the spot, with those of the shipped
    model h was found next to (``centre``) beside them."""
    from tcsmt.identify.neighbours import distance
    for s in shipped:
        if distance(s, h) == 0:
            got = shipped_vectors(h, s, k)
            if got is not None:
                return got, [f"property vectors from the result files of {s.name}"]
    got, notes = asked_vectors(h, k, log=log)
    if centre is None or centre not in shipped:
        return got, [f"property vectors asked now for {h.name}"] + notes
    near = shipped_vectors(centre, centre, k)
    return got + (near or []), [f"property vectors asked now for {h.name}"] + notes + (
        [f"and those of the result files of {centre.name}"] if near else [])


def random_probe(p: ModelParams, k: int, seed: int, n: int = RANDOM_ROWS) -> tuple[Rows, list[str]]:
    """n random rows, the kinds of random_rows in turn, scales as read."""
    r = random_rows(p, k, n, seed)
    sa, sb = r.scale_bits(p)
    why = [f"random {KINDS[i % len(KINDS)]} row (seed {seed})" for i in range(n)]
    return Rows(r.a, r.b, r.c, sa, sb), why


# ---------------------------------------------------------------------------
# Rows that split rival models
# ---------------------------------------------------------------------------

def lone_rows(p: ModelParams, k: int) -> Rows:
    """c alone at every exponent of its format (both signs), and one
    product alone at every exponent its products can have: where floors of
    the alignment point act."""
    rng = np.random.default_rng(7)
    fc = p.fc
    cs = [fc.pack(s, e, int(rng.integers(0, 1 << fc.frac_bits)))
          for e in range(0, fc.max_exp_field) for s in (0, 1)]
    a = np.zeros((len(cs), k), dtype=np.uint64)
    rows = [Rows(a, a.copy(), np.array(cs, dtype=np.uint64), None, None)]
    fa, fb = p.fin, p.fb
    pa, pb = [], []
    for ea in range(0, fa.max_exp_field, max(1, fa.max_exp_field // 16)):
        for eb in range(0, fb.max_exp_field):
            pa.append(fa.pack(int(rng.integers(0, 2)), ea, int(rng.integers(0, 1 << fa.frac_bits))))
            pb.append(fb.pack(int(rng.integers(0, 2)), eb, int(rng.integers(0, 1 << fb.frac_bits))))
    x = np.zeros((len(pa), k), dtype=np.uint64)
    y = x.copy()
    x[:, 0], y[:, 0] = pa, pb
    rows.append(Rows(x, y, np.zeros(len(pa), dtype=np.uint64), None, None))
    return _with_scales(p, k, rows)


FLOOR_ROWS = 1500
"""Random rows of floor_rows (cut_rows are made beside them)."""


def _exact(fmt, v) -> int | None:
    """The encoding of the value v in fmt when v is one, else None."""
    if v == 0 or abs(v) > fmt.max_finite() or abs(v) < fmt.min_subnormal():
        return None
    bits = fmt.round_value(v, "rz")
    return bits if fmt.value(bits) == v else None


def _products(fa, fb, v, below: int | None = None, most: int = 256) -> list[tuple[int, int]] | None:
    """Pairs (a, b) of encodings whose exact products sum to the positive
    dyadic value v: v's bits in chunks of a's precision, each chunk a
    times a power of two b (None when some chunk has no such pair). With
    ``below``, every product lies below 2^below: v less copies of
    2^(below - 1) until the rest lies below 2^below, then the rest's chunks
    (None when that takes more than ``most`` copies)."""
    from fractions import Fraction
    if below is not None:
        half = Fraction(2) ** (below - 1)
        copies = 0 if v < 2 * half else int(v / half) - 1
        if copies > most:
            return None
        v -= copies * half
        one = _products(fa, fb, half) if copies else []
        rest = _products(fa, fb, v) if v else []
        if one is None or rest is None:
            return None
        return one * copies + rest
    num, den = v.numerator, v.denominator
    low = -(den.bit_length() - 1)                 # v = num * 2^low, den a power of two
    out = []
    width = fa.frac_bits + 1
    while num:
        shift = (num & -num).bit_length() - 1
        num >>= shift
        low += shift
        m = num & ((1 << width) - 1)
        num >>= width
        chunk = Fraction(m) * Fraction(2) ** low
        low += width
        got = None
        for eb in range(fb.emin, fb.emax + 1):
            a = _exact(fa, chunk / Fraction(2) ** eb)
            b = _exact(fb, Fraction(2) ** eb)
            if a is not None and b is not None:
                got = (a, b)
                break
        if got is None:
            return None
        out.append(got)
    return out


def cut_rows(p: ModelParams, k: int) -> Rows:
    """For every floor f a unit may have (tcsmt.identify.neighbours.values),
    rows on which keeping bits down to 2^t, t = f - F (the last place the
    floor keeps), or not, changes the output: c zero and products (made of
    a's precision in chunks) summing to u - 2^t and 2^t, or to u/2 and 2^t
    (u: the output's last place at the bottom of its range), of either
    sign: with the bit at 2^t the sum is a unit (round toward zero) or
    above a tie (round to nearest); without, below the unit or on the tie.
    Those rows tell f from a higher floor. To tell f from no floor (or a
    lower one) the floor must act: every product below 2^f (copies of
    2^(f - 1) where the sum is larger), and the bit at 2^(f - F - 1), which
    f drops and the alignment at the products' own largest exponent keeps.
    Random products next to each other seldom land within 2^t of a unit."""
    from fractions import Fraction

    from tcsmt.identify.neighbours import values
    fo = p.fout
    u = Fraction(2) ** (fo.emin - fo.frac_bits)
    floors = sorted({f for f in values(p, k)["min_exponent"] if f is not None})
    room = min(k, p.block_size)
    pows = _scale_powers(p)
    made: list[tuple[int, list[tuple[int, int]], tuple]] = []
    for te, below in [(f - p.F - d, f if d else None) for f in floors for d in (0, 1)]:
        t = Fraction(2) ** te
        if t >= u / 2:
            continue
        for parts in ([u - t, t], [u / 2, t]):
            for shift, scales in _scale_shifts(p, pows, te, fo.emin - fo.frac_bits):
                got = [_products(p.fin, p.fb, v / Fraction(2) ** shift, below and below - shift, room)
                       for v in parts]
                prods = [pair for g in got if g is not None for pair in g]
                if all(g is not None for g in got) and len(prods) <= room:
                    made += [(sign, prods, scales) for sign in (0, 1)]
                    break
    x = np.zeros((len(made), k), dtype=np.uint64)
    y = x.copy()
    cs = np.zeros(len(made), dtype=np.uint64)
    sa = np.zeros((len(made), p.scale_count(k)), dtype=np.uint64)
    sb = sa.copy()
    for n, (sign, prods, (ea, eb)) in enumerate(made):
        for i, (a, b) in enumerate(prods):
            x[n, i] = a | (sign << (p.fin.bits - 1))
            y[n, i] = b
        cs[n] = p.fc.pack(sign, 0, 0) if p.fc.has_negative_zero else 0
        if pows:
            sa[n, :], sb[n, :] = pows[ea], pows[eb]
    if pows:
        return Rows(x, y, cs, sa, sb)
    return _with_scales(p, k, [Rows(x, y, cs, None, None)])


def _scale_shifts(p: ModelParams, pows: dict[int, int], t: int, u: int):
    """(shift, (ea, eb)): the powers of two the products of a cut row are
    scaled by, bringing 2^t and 2^u within the exact products' reach
    (for a model without scales, no shift)."""
    if not pows:
        yield 0, (0, 0)
        return
    fa, fb = p.fin, p.fb
    low = fa.emin - fa.frac_bits + fb.emin - fb.frac_bits      # a product's lowest bit
    high = fa.emax + fb.emax + 1                              # and its highest
    for shift in range(t - low, u - high - 1, -1):
        for ea in sorted(pows, key=lambda e: abs(shift / 2 - e)):
            if shift - ea in pows:
                yield shift, (ea, shift - ea)
                break


def floor_rows(p: ModelParams, k: int, rows: int = FLOOR_ROWS) -> Rows:
    """Rows where floors of the alignment point act: c zero (or a few units
    of its last place), and every product of one sign below a floor f a
    unit may have (tcsmt.identify.neighbours.values), its exponent between
    f - F - 2 and f. With every term below both floors, two floors keep
    the terms' bits down to their own cut-offs (2^(floor - F)), far below
    the output's last place: only the sum of the bits one of them drops,
    over many products, carries across a unit of the output (or across a
    tie), so a row needs many products at those exponents. A block-scaled
    unit's floors lie far below what its products reach unscaled: each row
    takes a pair of scales (powers of two, the same for every block) that
    brings some product exponent to the floor."""
    from tcsmt.identify.neighbours import values
    rng = np.random.default_rng(11)
    pows = _scale_powers(p)
    # products below 2^f sum below 2^(f + 2 + bits of k): a floor lower than
    # the output's last place less those bits shows in no output
    last = p.fout.last_exp
    floors = sorted({f for f in values(p, k)["min_exponent"]
                     if f is not None and f + 2 + k.bit_length() >= last})
    fa, fb, fc = p.fin, p.fb, p.fc
    ua = np.maximum(np.arange(0, fa.max_exp_field + 1), 1) - fa.bias   # a field's exponent
    ub = np.maximum(np.arange(0, fb.max_exp_field + 1), 1) - fb.bias
    by_sum: dict[int, list[tuple[int, int]]] = {}
    for i_a, u in enumerate(ua):
        for i_b, v in enumerate(ub):
            by_sum.setdefault(int(u + v), []).append((i_a, i_b))
    if not floors:
        rows = 0
    x = np.zeros((rows, k), dtype=np.uint64)
    y = x.copy()
    cs = np.zeros(rows, dtype=np.uint64)
    nsc = p.scale_count(k)
    sa = np.full((rows, nsc), scale_one(p.fscale) if p.fscale is not None else 0, dtype=np.uint64)
    sb = sa.copy()
    keys = sorted(by_sum)
    for n in range(rows):
        f = floors[int(rng.integers(0, len(floors)))]
        shift = 0
        if pows:
            want = f - keys[int(rng.integers(0, len(keys)))]
            ea = min(pows, key=lambda e: abs(want / 2 - e))       # half each, as near as they go
            eb = min(pows, key=lambda e: abs(want - ea - e))
            shift = ea + eb
            sa[n, :], sb[n, :] = pows[ea], pows[eb]
        sums = [e for e in range(f - p.F - 2 - shift, f + 1 - shift) if e in by_sum]
        if not sums:
            continue
        sign = int(rng.integers(0, 2))
        top = int(rng.integers(0, len(sums)))
        for i in range(k):
            e = sums[int(rng.integers(0, top + 1))]
            xa, yb = by_sum[e][int(rng.integers(0, len(by_sum[e])))]
            x[n, i] = fa.pack(sign, xa, int(rng.integers(0, 1 << fa.frac_bits)))
            y[n, i] = fb.pack(0, yb, int(rng.integers(0, 1 << fb.frac_bits)))
        if n % 3 == 1:
            cs[n] = fc.pack(1 - sign, 0, int(rng.integers(1, 4)))
    if pows:
        return Rows(x, y, cs, sa, sb)
    return _with_scales(p, k, [Rows(x, y, cs, None, None)])


def _scale_powers(p: ModelParams) -> dict[int, int]:
    """The scale format's powers of two (normal, fraction zero): exponent
    -> encoding; empty for a model without scales."""
    if p.fscale is None:
        return {}
    fs = p.fscale
    first = 1 if fs.subnormals else 0
    return {field - fs.bias: fs.pack(0, field, 0) for field in range(first, fs.max_exp_field + 1)
            if fs.classify(fs.pack(0, field, 0)) == "normal"}


def _with_scales(p: ModelParams, k: int, parts: list[Rows]) -> Rows:
    from tcsmt.identify.device import concat, empty_rows
    out = empty_rows(k, p.scale_count(k))
    one = scale_one(p.fscale) if p.fscale is not None else 0
    for r in parts:
        if p.fscale is not None and r.sa is None:
            s = np.full((r.a.shape[0], p.scale_count(k)), one, dtype=np.uint64)
            r = Rows(r.a, r.b, r.c, s, s.copy())
        out = concat(out, r)
    return out


_CANDIDATES: dict[tuple, tuple] = {}


def split_pool(p: ModelParams, k: int, seed: int) -> tuple[Rows, list[str]]:
    """The rows rivals are split on, with their origins: the plan's kinds of
    candidates over every finite input (made once per formats and k),
    random rows of this seed, lone_rows, floor_rows and cut_rows."""
    from tcsmt.identify.plan import formats_record, plan_candidates
    key = (repr(formats_record(p)), p.scale_block if p.fscale else 0, k)
    if key not in _CANDIDATES:
        _CANDIDATES[key] = plan_candidates(p, k, Domain(), POOL_SIZE, 0)
    a, b, c, sa, sb = _CANDIDATES[key]
    rnd, rnd_why = random_probe(p, k, 1000 + seed, POOL_SIZE)
    lone = lone_rows(p, k)
    floor = floor_rows(p, k)
    cuts = cut_rows(p, k)
    rows = _with_scales(p, k, [Rows(a, b, c, sa, sb), rnd, lone, floor, cuts])
    why = (["candidate row"] * a.shape[0] + rnd_why + ["c alone, or one product alone"] * lone.a.shape[0]
           + ["products below a floor"] * floor.a.shape[0]
           + ["products within a last place of a floor's cut"] * cuts.a.shape[0])
    return rows, why


def splitting_rows(outs: np.ndarray, chosen: int = 0) -> list[int]:
    """Pool rows (columns of outs) on which every other model (row of outs)
    differs from model ``chosen``, greedily: each next row the one that
    tells the most of those left apart."""
    differ = outs != outs[chosen][None, :]
    differ[chosen] = False
    left = differ.any(axis=1)
    picked: list[int] = []
    while left.any():
        gain = (differ & left[:, None]).sum(axis=0)
        j = int(np.argmax(gain))
        picked.append(j)
        left &= ~differ[:, j]
    return picked
