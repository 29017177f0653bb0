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
    random rows of this seed, and lone_rows."""
    from tcsmt.identify.plan import formats_record, plan_candidates
    key = (repr(formats_record(p)), p.scale_block if p.fscale else 0, k)
    if key not in _CANDIDATES:
        _CANDIDATES[key] = plan_candidates(p, k, Domain(), POOL_SIZE, 0)
    a, b, c, sa, sb = _CANDIDATES[key]
    rnd, rnd_why = random_probe(p, k, 1000 + seed, POOL_SIZE)
    lone = lone_rows(p, k)
    rows = _with_scales(p, k, [Rows(a, b, c, sa, sb), rnd, lone])
    why = ["candidate row"] * a.shape[0] + rnd_why + ["c alone, or one product alone"] * lone.a.shape[0]
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
