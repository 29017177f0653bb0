"""Identifying an unknown matrix unit from what it returned.

``identify(obs, space, plan)`` keeps the hypotheses of the space that
reproduce every observed row bit for bit:

1. With a plan of the same k, the rows that are plan vectors are read
   along the plan's tree first: each observed d picks a branch, and only
   the classes below the last node reached are candidates. A d no branch
   holds is a row no hypothesis explains.
2. Every candidate is run on every row (tcsmt.sim.evaluate), the
   scalar interpreter screening them on a few rows first. A plan class
   whose members build one circuit ("identical"), or were proved equal on
   the plan's domain ("proved") with every row inside that domain, is run
   once, through its first member; so is every class when every row is a
   plan vector (a class's members agree on every plan vector).
   The rows are taken in stages (64, 1024, all: ``_staged``), each stage
   running only the hypotheses the one before left.
3. What remains is grouped into classes (the plan's, or by outputs on a
   pool of candidates when there is no plan); when more than one remains,
   the vector to run next is the plan's next node, else the candidate
   that splits the remaining hypotheses best.

When no hypothesis reproduces every row, ``Identification.failure`` names
the first row after which none is left, with the closest hypotheses: how
many rows each reproduces and by how many units in the last place (ulps)
and bits the others are off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tcsmt.errors import UserError
from tcsmt.identify.classes import classes_of, say
from tcsmt.identify.hypspace import HypSpace
from tcsmt.identify.plan import Plan
from tcsmt.interp.memo import RowsInterp
from tcsmt.model.formats import Format
from tcsmt.observed.observations import ObservationSet
from tcsmt.search.vectors import Vector
from tcsmt.sim.evaluate import SCREEN_ROWS, evaluate, screen, screening_rows

STAGES = (64, 1024)     # rows of the first evaluation stages (see _staged)
NEXT_POOL = 1500        # candidates tried for the next vector without a plan
SCREEN_MIN = 256        # hypotheses from which the scalar screening pays (see _screened)
ROUND_MIN = 32
"""Hypotheses left from which another round of screening pays: the batch
stages cost about 27 ms a hypothesis on their first 64 rows (recording its
datapath), a round about 0.3 s (its rows chosen) and 1 ms a hypothesis."""
CLOSEST = 5
SCREEN_ROUNDS = 3
"""Rounds of screening at most: each screens the hypotheses the round before
left on rows chosen for them (tcsmt.sim.evaluate.screening_rows), while at
least SCREEN_MIN (after the first round ROUND_MIN) are left. On the H100
e4m3 rows three rows chosen for the whole space (a cheap one of no
products first) leave 335 of 30816 hypotheses (229 runs), which the next
rows of 32 products do not tell apart; rows chosen for those rule out all
but one before the batch stages record any."""


@dataclass
class Identification:
    obs: ObservationSet
    source: str
    space: HypSpace
    plan: Plan | None
    consistent: list[int] = field(default_factory=list)
    classes: list[list[int]] = field(default_factory=list)
    class_status: list[str] = field(default_factory=list)
    walked: list[tuple[int, int]] = field(default_factory=list)   # (row, plan vector)
    next_vector: Vector | None = None
    next_note: str = ""
    failure: dict | None = None
    evaluated: int = 0
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        if self.failure:
            return "none"
        return "identified" if len(self.classes) == 1 else "narrowed"


def check_formats(obs: ObservationSet, space: HypSpace) -> None:
    from tcsmt.identify.plan import formats_record
    from tcsmt.observed.observations import check_scales
    p = space.base
    if obs.formats() != formats_record(p):
        raise UserError(f"the observations are {obs.fin.name} x {(obs.fb or obs.fin).name} + "
                        f"{obs.fc.name} -> {obs.fout.name}; the space is {p.fin.name} x "
                        f"{p.fb.name} + {p.fc.name} -> {p.fout.name}")
    check_scales(p, obs.fscale, obs.scale_block, "observations")


def row_arrays(obs: ObservationSet):
    """a, b, c, d of the rows (row_scales: their scales)."""
    n = len(obs.rows)
    a = np.array([r.a for r in obs.rows], dtype=np.uint64).reshape(n, obs.k)
    b = np.array([r.b for r in obs.rows], dtype=np.uint64).reshape(n, obs.k)
    c = np.array([r.c for r in obs.rows], dtype=np.uint64)
    d = np.array([r.d for r in obs.rows], dtype=np.uint64)
    return a, b, c, d


def row_scales(obs: ObservationSet):
    """The scales of a and b of the rows, [N, k / scale_block] (None, None
    without block scales)."""
    if obs.fscale is None:
        return None, None
    n, ns = len(obs.rows), obs.k // obs.scale_block
    sa = np.array([r.scale_a for r in obs.rows], dtype=np.uint64).reshape(n, ns)
    sb = np.array([r.scale_b for r in obs.rows], dtype=np.uint64).reshape(n, ns)
    return sa, sb


def _key(r) -> tuple:
    """An observed row as _plan_keys gives a plan vector: a, b, c and the scales."""
    return (tuple(r.a), tuple(r.b), r.c, tuple(r.scale_a), tuple(r.scale_b))


def _plan_keys(plan: Plan) -> list[tuple]:
    pad = (0,) * plan.k
    return [(v.a + pad[len(v.a):], v.b + pad[len(v.b):], v.c, v.sa, v.sb) for v in plan.vectors]


def _slice(s, end):
    return None if s is None else s[:end]


# ---------------------------------------------------------------------------
# Reading the plan's tree
# ---------------------------------------------------------------------------

def classes_under(node: dict) -> list[int]:
    if "class" in node:
        return [node["class"]]
    return [j for ch in node["outputs"].values() for j in classes_under(ch)]


def walk(plan: Plan, obs: ObservationSet):
    """Follow the tree with the rows that are plan vectors. Returns (node
    reached, [(row, vector)], failure or None). A failure is (row, node):
    the row's d is none of the node's branches."""
    by_vec: dict[tuple, int] = {}
    for n, r in enumerate(obs.rows):
        by_vec.setdefault(_key(r), n)
    keys = _plan_keys(plan)
    node, path = plan.tree, []
    while "vector" in node:
        row = by_vec.get(keys[node["vector"]])
        if row is None:
            break
        path.append((row, node["vector"]))
        child = node["outputs"].get(plan.fout.hex(obs.rows[row].d))
        if child is None:
            return node, path, (row, node)
        node = child
    return node, path, None


# ---------------------------------------------------------------------------
# Identification
# ---------------------------------------------------------------------------

def identify(obs: ObservationSet, space: HypSpace, plan: Plan | None = None, source: str = "",
             log=None, progress=None) -> Identification:
    """``progress(what, done, total)`` is called as the hypotheses run."""
    t0 = time.monotonic()
    check_formats(obs, space)
    models = space.models()
    res = Identification(obs, source, space, plan)
    usable = plan if plan is not None and plan.k == obs.k else None      # the plan, if it fits
    if plan is not None and usable is None:
        say(log, f"the plan is for k = {plan.k}, the observations have k = {obs.k}: "
                  "every hypothesis is run on every row instead")
        res.plan = None
    cand_classes: list[list[int]] | None = None
    under: list[int] = []
    if usable is not None:
        node, res.walked, fail = walk(usable, obs)
        under = classes_under(fail[1] if fail else node)
        cand_classes = [usable.classes[j].members for j in under]
    a, b, c, d = row_arrays(obs)
    sa, sb = row_scales(obs)
    if usable is None or cand_classes is None:
        cand_classes = [[i] for i in range(len(models))]
        statuses = ["single"] * len(models)
    else:
        statuses = [usable.classes[j].status for j in under]
    # whether every row lies in the plan's domain (only a "proved" class reads it)
    in_domain = usable is not None and any(cl.status == "proved" for cl in usable.classes) and \
        _in_domain(usable, obs)
    if usable is not None and _all_plan_vectors(usable, obs):
        # every member of a plan class gives the same bits on every plan
        # vector (that is how the classes were made): one member per class
        statuses = ["identical"] * len(statuses)
    out, idx, match, end = _staged(models, cand_classes, statuses, in_domain, a, b, c, d, log,
                                   progress, sa=sa, sb=sb)
    res.evaluated = len(idx)
    full = match.all(axis=1) if end == len(obs.rows) else np.zeros(len(idx), dtype=bool)
    res.consistent = sorted(i for i, ok in zip(idx, full) if ok)
    if not res.consistent and usable is not None and len(under) < len(usable.classes):
        # the closest hypotheses may lie off the path the rows took: run them all
        say(log, "no hypothesis left on the plan's path: running every class for the closest ones")
        under = list(range(len(usable.classes)))
        sts = [("identical" if _all_plan_vectors(usable, obs) else cl.status) for cl in usable.classes]
        out, idx, match, end = _staged(models, [cl.members for cl in usable.classes], sts,
                                       in_domain, a, b, c, d, log, progress, screen_first=False,
                                       sa=sa, sb=sb)
    failure = None
    if res.consistent and obs.other:           # rows of another k, judged at their own k
        from tcsmt.identify.atk import keep_at_own_k
        n = len(res.consistent)
        res.consistent, miss = keep_at_own_k(models, res.consistent, obs)
        failure = None if miss is None else _other_k_failure(models, obs, n, *miss)
        say(log, f"{len(res.consistent)} hypotheses reproduce the rows of k = "
                 f"{', '.join(map(str, sorted(obs.other)))} too")
    if failure is not None:
        res.failure = failure
    elif not res.consistent:
        res.failure = failure_report(models, idx, out, match, obs, end)
    else:
        _group(res, usable, out, idx, full)
        if len(res.consistent) > 1 and usable is None:
            _next_from_pool(res, models, log)     # splits the consistent set into classes
        elif len(res.classes) > 1:
            _next(res, plan, models, log)
    res.seconds = time.monotonic() - t0
    return res


def _all_plan_vectors(plan: Plan, obs: ObservationSet) -> bool:
    keys = set(_plan_keys(plan))
    return all(_key(r) in keys for r in obs.rows)


def _in_domain(plan: Plan, obs: ObservationSet) -> bool:
    """Whether every row lies in the plan's domain (the rows share their
    inputs' unpacking: RowsInterp)."""
    I = RowsInterp()
    return all(plan.domain.contains(obs.fin, obs.fc, list(r.a), list(r.b), r.c, I=I)
               for r in obs.rows) and _finite_scales(obs)


def _finite_scales(obs: ObservationSet) -> bool:
    """No NaN scale (the plan's domain, and its proofs, hold finite scales)."""
    f = obs.fscale
    return f is None or all(f.classify(x) != "nan" for r in obs.rows for x in r.scale_a + r.scale_b)




def _once(status: str, in_domain: bool) -> bool:
    """Whether a class's members all give its first member's bits here."""
    return status == "identical" or (status == "proved" and in_domain)


def _screened(models, cand_classes, statuses, in_domain, a, b, c, d, log, progress, sa=None, sb=None):
    """The candidates left after the scalar interpreter's screening rows
    (tcsmt.sim.evaluate.screen), or None when screening would not pay
    (few hypotheses or rows) or leaves none (the batch stages then find the
    closest hypotheses)."""
    runs = [i for m, st in zip(cand_classes, statuses) for i in (m[:1] if _once(st, in_domain) else m)]
    if len(runs) < SCREEN_MIN or a.shape[0] <= SCREEN_ROWS:
        return None
    kept = set(runs)
    for n in range(SCREEN_ROUNDS):
        left = [i for i in runs if i in kept]
        if len(left) < (SCREEN_MIN if n == 0 else ROUND_MIN):
            break
        kept = _screen_round([models[i] for i in left], left, a, b, c, d, log, progress, sa, sb)
        if not kept and n:
            kept = set(left)      # the batch stages find the closest of those the round before left
        if len(kept) == len(left):
            break
    pairs = [(m if _once(st, in_domain) and m[0] in kept else [i for i in m if i in kept], st)
             for m, st in zip(cand_classes, statuses)]
    pairs = [(m, st) for m, st in pairs if m]
    if not pairs:
        return None
    say(log, f"{sum(len(m) for m, _ in pairs)} hypotheses left after screening")
    return [m for m, _ in pairs], [st for _, st in pairs]


def _screen_round(hyps, runs, a, b, c, d, log, progress, sa, sb) -> set[int]:
    """The hypotheses (of runs) that reproduce the rows chosen for them."""
    rows = screening_rows(hyps, a, b, c, d, sa=sa, sb=sb)
    say(log, f"screening {len(runs)} hypotheses on rows {', '.join(map(str, rows))} "
              "(scalar interpreter)")
    tick = progress and (lambda done, total: progress(f"screening {len(runs)} hypotheses", done, total))
    return {runs[j] for j in screen(hyps, a, b, c, d, progress=tick, order=rows, sa=sa, sb=sb)}


def _staged(models, cand_classes, statuses, in_domain, a, b, c, d, log, progress=None,
            screen_first: bool = True, sa=None, sb=None):
    """Screen the candidates on a few rows with the scalar interpreter, then
    run those left on the first STAGES[0] rows, then on the first STAGES[1],
    then on every row: most hypotheses fail on the first rows, so thousands
    of recorded rows cost little more than a hundred.
    Returns (outputs, hypotheses, matches, rows) of the last stage run: on
    every row when some hypothesis is left, else on the rows up to the stage
    where none was."""
    n = a.shape[0]
    left = _screened(models, cand_classes, statuses, in_domain, a, b, c, d, log,
                     progress, sa, sb) if screen_first else None
    if left is not None:
        cand_classes, statuses = left
    ends = sorted({min(n, s) for s in STAGES} | {n})
    for end in ends:
        out, idx = _run(models, cand_classes, statuses, in_domain, a[:end], b[:end], c[:end], log,
                        progress, _slice(sa, end), _slice(sb, end))
        match = out == d[None, :end]
        keep = {i for i, ok in zip(idx, match.all(axis=1)) if ok}
        if not keep or end == n:
            return out, idx, match, end
        pairs = [([i for i in m if i in keep], st) for m, st in zip(cand_classes, statuses)]
        cand_classes = [m for m, _ in pairs if m]
        statuses = [st for m, st in pairs if m]
    raise AssertionError("unreachable")


def _run(models, cand_classes, statuses, in_domain, a, b, c, log, progress=None, sa=None, sb=None):
    """Outputs of every candidate on every row: [len(idx), rows], with idx
    the hypothesis of each output row (members of a class run once get the
    output of its first member)."""
    runs: list[int] = []
    for members, st in zip(cand_classes, statuses):
        runs += members[:1] if _once(st, in_domain) else members
    what = f"running {len(runs)} hypotheses on {a.shape[0]} rows"
    say(log, what)
    tick = progress and (lambda done, total: progress(what, done, total))
    ev = evaluate([models[i] for i in runs], a, b, c, progress=tick, sa=sa, sb=sb)
    bad = set(ev.unsupported)                 # positions in runs
    row_of = {i: n for n, i in enumerate(runs) if n not in bad}
    ran = set(runs)
    idx, rows = [], []
    for members in cand_classes:
        for i in members:
            n = row_of.get(i) if i in ran else row_of.get(members[0])
            if n is None:
                continue                      # the model (or its class's) cannot be run here
            idx.append(i)
            rows.append(n)
    if not rows:
        return np.zeros((0, a.shape[0]), dtype=ev.outputs.dtype), idx
    return ev.outputs[rows], idx


def _group(res: Identification, plan: Plan | None, out, idx, full) -> None:
    if plan is not None:
        cls_of = {i: j for j, cl in enumerate(plan.classes) for i in cl.members}
        groups: dict[int, list[int]] = {}
        for i in res.consistent:
            groups.setdefault(cls_of[i], []).append(i)
        res.classes = list(groups.values())
        res.class_status = [plan.classes[j].status if len(g) > 1 else "single"
                            for j, g in groups.items()]
        return
    res.classes = [res.consistent]
    res.class_status = ["single" if len(res.consistent) == 1 else "open"]


def _next(res: Identification, plan: Plan | None, models, log) -> None:
    """The vector to run next: the plan's next node whose vector splits what
    is left, else the candidate that splits it best."""
    if plan is not None:
        node = plan.tree
        left = {j for j, cl in enumerate(plan.classes) if set(cl.members) & set(res.consistent)}
        while "vector" in node:
            kids = [ch for ch in node["outputs"].values() if set(classes_under(ch)) & left]
            if len(kids) > 1:
                res.next_vector = plan.vectors[node["vector"]]
                res.next_note = "the plan's next vector"
                return
            node = kids[0]
        return
    _next_from_pool(res, models, log)


def _next_from_pool(res: Identification, models, log) -> None:
    from tcsmt.identify.plan import plan_domain
    from tcsmt.identify.plantree import pick
    from tcsmt.search.candidates import candidate_scales, candidate_vectors
    obs = res.obs
    dom = plan_domain(obs.fin, obs.fout)
    a, b, c = candidate_vectors(obs.fin, obs.fc, obs.k, dom, NEXT_POOL, seed=1, fb=obs.fb)
    ns = obs.k // obs.scale_block if obs.fscale is not None else 0
    sa, sb = (candidate_scales(obs.fscale, a.shape[0], ns, seed) for seed in (1, 2))
    group = res.consistent
    say(log, f"looking for the next vector: {len(group)} hypotheses on {a.shape[0]} candidates")
    ev = evaluate([models[i] for i in group], a, b, c, sa=sa, sb=sb)
    ok = [n for n in range(len(group)) if n not in set(ev.unsupported)]
    parts = classes_of(ev.outputs, ok)
    res.classes = [[group[n] for n in p] for p in parts]
    res.class_status = ["single" if len(p) == 1 else "open" for p in parts]
    if len(parts) > 1:
        reps = ev.outputs[[p[0] for p in parts]]
        col = pick(reps, (a[:, :] != 0).sum(axis=1))
        scales = () if sa is None else (tuple(int(x) for x in sa[col]), tuple(int(x) for x in sb[col]))
        res.next_vector = Vector(tuple(int(x) for x in a[col]), tuple(int(x) for x in b[col]), int(c[col]),
                                 *scales)
        res.next_note = (f"splits the {len(group)} hypotheses left into "
                         f"{len(set(reps[:, col].tolist()))} groups")
    else:
        res.next_note = ("no candidate splits the hypotheses left: they may be equal on every "
                         "input (tcsmt equiv can prove it)")


# ---------------------------------------------------------------------------
# When nothing fits: the first row no hypothesis explains, the closest ones
# ---------------------------------------------------------------------------

def ordered(bits: np.ndarray, fmt: Format) -> np.ndarray:
    """Bit patterns mapped to integers in the order of their values (so the
    difference of two is their distance in units in the last place)."""
    sign = (bits >> np.uint64(fmt.bits - 1)) & np.uint64(1)
    mag = (bits & np.uint64((1 << (fmt.bits - 1)) - 1)).astype(np.int64)
    return np.where(sign == 1, -mag, mag)


def _other_k_failure(models, obs: ObservationSet, left: int, i: int, k: int, row, d: int) -> dict:
    """The failure record of a row of another k that the ``left``
    hypotheses the file's rows leave all miss (tcsmt.identify.atk): the
    first of them, what it gives there and how far off."""
    rows = len(obs.rows) + sum(len(r) for r in obs.other.values())
    f = obs.fout
    pair = np.array([d, row.d], dtype=np.uint64)
    nan = any(f.classify(int(x)) == "nan" for x in pair)
    return {"row": row.index, "index": row.index, "observed": f.hex(row.d), "k": k, "rows_run": rows,
            "closest": [{"hypothesis": models[i].name, "same_outputs": left, "rows_matched": len(obs.rows),
                         "rows": rows, "max_ulps": None if nan else int(abs(np.diff(ordered(pair, f))[0])),
                         "max_bits_differing": bin(d ^ row.d).count("1"), "first_mismatch": row.index,
                         "at_failing_row": f.hex(d)}]}


def _popcount(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    n = np.zeros(x.shape, dtype=np.int64)
    for s in range(64):
        n += ((x >> np.uint64(s)) & np.uint64(1)).astype(np.int64)
    return n


def failure_report(models, idx, out, match, obs: ObservationSet, end: int | None = None) -> dict:
    """The first row no hypothesis explains together with the rows before it,
    and the closest hypotheses (on the first ``end`` rows, those run)."""
    rows_run = obs.rows[:end] if end else obs.rows
    if not idx:
        return {"row": 0, "index": obs.rows[0].index, "closest": []}
    alive = np.logical_and.accumulate(match, axis=1).any(axis=0)
    first = int(np.argmin(alive)) if not alive.all() else len(rows_run) - 1
    d = np.array([r.d for r in rows_run], dtype=np.uint64)
    counts = match.sum(axis=1)
    fout = obs.fout
    behaviours = classes_of(out)
    best = sorted(behaviours, key=lambda g: -int(counts[g[0]]))[:CLOSEST]
    closest = []
    for g in best:
        r = g[0]
        bad = ~match[r]
        ulps = np.abs(ordered(out[r][bad], fout) - ordered(d[bad], fout))
        nan = np.array([fout.classify(int(x)) == "nan" for x in np.concatenate([out[r][bad], d[bad]])])
        closest.append({
            "hypothesis": models[idx[r]].name, "same_outputs": len(g),
            "rows_matched": int(counts[r]), "rows": len(rows_run),
            "max_ulps": None if nan.any() or not bad.any() else int(ulps.max()),
            "max_bits_differing": int(_popcount(out[r][bad] ^ d[bad]).max()) if bad.any() else 0,
            "first_mismatch": int(rows_run[int(np.argmax(bad))].index) if bad.any() else None,
            "at_failing_row": fout.hex(int(out[r][first])),
        })
    return {"row": first, "index": rows_run[first].index, "observed": fout.hex(int(d[first])),
            "rows_run": len(rows_run), "closest": closest}
