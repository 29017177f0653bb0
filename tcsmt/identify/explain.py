"""Which models explain every row a unit returned: a search one and two
parameters around known models.

The centres are the shipped models of the unit's formats and the models
the plan's adaptive search ended with. A model explains the unit when it
reproduces every row seen, bit for bit. ``search`` looks, in this order:

* the centre itself;
* every model one move away from a centre (tcsmt.identify.neighbours):
  the scalar interpreter first runs each on a few rows its centre misses
  (a move that explains the unit must fix them), stopping at the first it
  gets wrong; those left run on every row (tcsmt.sim.evaluate);
* pairs of moves: the moves that fix at least one of up to SAMPLE rows
  the centre misses are paired with each other (two changes each fix the
  rows only they touch), then screened and run like single moves.

It goes level by level: a centre d parameters away from the nearest
shipped model (0 for a shipped model) is tried itself at level d, with one
move at level d + 1 and with two at d + 2, and the first level that holds
an explanation ends the search: an explanation is never farther from the
published behaviour of some unit than one the search passed over. When no
level explains the rows, the moves that fix some rows of the best centres
are paired with every move of theirs. The explanations of a level are
ranked by how many parameters they differ in from the nearest shipped
model, then by their changes from their centre, then an architecture's
default model (its primary published reading) before its variants. Nothing here reads a device's own
parameters: only the rows it returned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsmt.identify.classes import say
from tcsmt.identify.device import Seen
from tcsmt.identify.neighbours import apply, arithmetic, differs, distance, neighbours, word
from tcsmt.model.params import ModelParams
from tcsmt.sim.evaluate import evaluate, screen

SCREEN = 4          # missed rows every move is screened on first
SAMPLE = 24         # missed rows that tell which moves fix some
MAX_PAIRS = 6000    # pairs of moves tried from one centre when the fixing ones are not enough
FOLLOW = 2          # moves that fix most, each followed by the moves that fix what it still misses
WIDE_CENTRES = 2    # centres whose every move is paired with the fixing ones


@dataclass
class Explanation:
    model: ModelParams
    centre: ModelParams
    changes: dict           # what differs from the centre
    nearest: ModelParams    # the nearest shipped model
    distance: int           # parameters that differ from it

    def describe(self) -> str:
        return describe(self.nearest, self.model)

    def record(self) -> dict:
        return {"nearest_shipped": self.nearest.name, "differs": differs(self.nearest, self.model),
                "centre": self.centre.name, "changes_from_centre": self.changes}


def describe(base: ModelParams, model: ModelParams) -> str:
    """BASE with KEY = VALUE, ... (or BASE when nothing differs)."""
    diff = differs(base, model)
    if not diff:
        return base.name
    return f"{base.name} with " + ", ".join(f"{k} = {word(k, v)}" for k, v in diff.items())


@dataclass
class Centre:
    model: ModelParams
    bad: np.ndarray          # rows it misses


def outputs(models: list[ModelParams], seen: Seen, rows=None) -> tuple[np.ndarray, list[int]]:
    """Outputs of every model on the rows seen (or those given), each row
    at its own k, and the models the batch simulator cannot run (their
    outputs must not be read)."""
    rows = np.arange(len(seen)) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.zeros((len(models), len(rows)), dtype=np.uint64)
    bad: set[int] = set()
    for k in seen.ks():
        mine = np.nonzero(seen.kof[rows] == k)[0]
        if not len(mine):
            continue
        a, b, c, sa, sb = seen.arrays(k)
        i = seen.local[rows[mine]]
        ev = evaluate(models, a[i], b[i], c[i], sa=None if sa is None else sa[i],
                      sb=None if sb is None else sb[i])
        out[:, mine] = ev.outputs
        bad |= set(ev.unsupported)
    return out, sorted(bad)


def explaining(models: list[ModelParams], seen: Seen) -> list[int]:
    """The models that reproduce every row seen."""
    if not models:
        return []
    out, bad = outputs(models, seen)
    ok = (out == seen.d[None, :]).all(axis=1)
    return [i for i in range(len(models)) if ok[i] and i not in set(bad)]


def missed(models: list[ModelParams], seen: Seen) -> list[np.ndarray]:
    """The rows each model misses."""
    out, bad = outputs(models, seen)
    every = np.arange(len(seen))
    return [every if i in set(bad) else np.nonzero(out[i] != seen.d)[0] for i in range(len(models))]


def spread(rows: np.ndarray, n: int) -> list[int]:
    """Up to n of the rows, spread evenly (the seen rows come in kinds)."""
    if len(rows) <= n:
        return [int(r) for r in rows]
    return [int(rows[int(x)]) for x in np.linspace(0, len(rows) - 1, n)]


def _screened(models: list[ModelParams], seen: Seen, rows: list[int]) -> list[int]:
    """The models that reproduce the rows (numbers) of the plan's k among
    ``rows`` through the scalar interpreter (all of them when there are
    none: every row is checked after)."""
    a, b, c, sa, sb = seen.arrays()
    _, numbers = seen.at(seen.k)
    mine = [int(seen.local[r]) for r in rows if seen.kof[r] == seen.k]
    if not mine:
        return list(range(len(models)))
    return screen(models, a, b, c, seen.d[numbers], order=mine, sa=sa, sb=sb)


def nan_patterns(seen: Seen, fout) -> list[str]:
    """The NaN patterns the unit returned (values nan_bits may take)."""
    found = {fout.hex(int(x)) for x in np.unique(seen.d) if fout.classify(int(x)) == "nan"}
    return sorted(found)[:4]


class Search:
    """One search over the rows seen so far (see the module docstring)."""

    def __init__(self, seen: Seen, centres: list[ModelParams], shipped: list[ModelParams], log=None):
        self.seen, self.shipped, self.log = seen, shipped, log
        self.k = seen.k
        self.nans = nan_patterns(seen, centres[0].fout)
        bad = missed(centres, seen)
        self.centres = sorted((Centre(m, r) for m, r in zip(centres, bad)),
                              key=lambda c: (self._distance(c.model), len(c.bad)))

    def _distance(self, m: ModelParams) -> int:
        return min((distance(s, m) for s in self.shipped), default=0)

    def run(self) -> list[Explanation]:
        """Level by level: a centre d parameters from the nearest shipped
        model is tried itself at level d, with one move at d + 1 and with
        two at d + 2; the first level with explanations ends the search."""
        dist = [self._distance(c.model) for c in self.centres]
        for level in range(max(dist, default=0) + 3):
            found = []
            for c, d in zip(self.centres, dist):
                if d == level and not len(c.bad):
                    found.append(self._explained(c, c.model))
                elif d == level - 1:
                    found += self._singles(c)
                elif d == level - 2:
                    found += self._pairs(c)
            if found:
                return self._ranked(found)
        return self._ranked([e for c in self.centres[:WIDE_CENTRES] for e in self._wide(c)])

    def _explained(self, c: Centre, model: ModelParams) -> Explanation:
        near = min(self.shipped, key=lambda s: distance(s, model)) if self.shipped else c.model
        return Explanation(model, c.model, differs(c.model, model), near, distance(near, model))

    def _ranked(self, found: list[Explanation]) -> list[Explanation]:
        seen, out = set(), []
        order = {id(c.model): n for n, c in enumerate(self.centres)}
        for e in sorted(found, key=lambda e: (e.distance, len(e.changes), not e.centre.default,
                                              order[id(e.centre)])):
            key = repr(sorted(arithmetic(e.model).items()))
            if key not in seen:
                seen.add(key)
                out.append(e)
        return out

    def _check(self, c: Centre, models: list[ModelParams]) -> list[Explanation]:
        """Screen on a few rows c misses, then every row."""
        if not models:
            return []
        keep = _screened(models, self.seen, spread(c.bad, SCREEN))
        kept = [models[i] for i in keep]
        return [self._explained(c, kept[i]) for i in explaining(kept, self.seen)]

    def _singles(self, c: Centre) -> list[Explanation]:
        if not len(c.bad):
            return []
        say(self.log, f"looking one parameter away from {c.model.name} ({len(c.bad)} rows missed)")
        return self._check(c, [q for _, q in neighbours(c.model, self.k, self.nans)])

    def _fixing(self, c: Centre) -> list[tuple[dict, ModelParams]]:
        """The moves from c that fix at least one of SAMPLE rows it misses."""
        return [m for m, _ in self._fixes(c.model, c.bad)]

    def _fixes(self, p: ModelParams, bad) -> list[tuple[tuple[dict, ModelParams], int]]:
        """The moves from p that fix some of SAMPLE rows of bad, with how many."""
        moves = neighbours(p, self.k, self.nans)
        sample = spread(bad, SAMPLE)
        out, unsupported = outputs([q for _, q in moves], self.seen, sample)
        fixed = (out == self.seen.d[sample][None, :]).sum(axis=1)
        return [(m, int(fixed[i])) for i, m in enumerate(moves) if fixed[i] and i not in set(unsupported)]

    def _pairs(self, c: Centre) -> list[Explanation]:
        """Pairs of moves that each fix some missed row, and each of the
        FOLLOW moves that fix most followed by the moves that fix some row
        it still misses: two changes that each alter the rows the other
        does (3 carry bits under rz where the unit rounds to nearest) fix
        no row alone, only one after the other."""
        if not len(c.bad):
            return []
        fixes = self._fixes(c.model, c.bad)
        fixing = [m for m, _ in fixes]
        pairs = _paired(c.model, fixing, fixing)
        for (change, q), _ in sorted(fixes, key=lambda x: -x[1])[:FOLLOW]:
            still = missed([q], self.seen)[0]
            if len(still):
                after = [(cy, qy) for (cy, qy), _ in self._fixes(q, still) if not set(cy) & set(change)]
                pairs += _paired(c.model, [(change, q)], after)
        say(self.log, f"looking two parameters away from {c.model.name} "
                      f"({len(c.bad)} rows missed; {len(fixing)} moves fix some)")
        kept = {repr(sorted(arithmetic(q).items())): q for q in pairs}
        return self._check(c, list(kept.values()))

    def _wide(self, c: Centre) -> list[Explanation]:
        if not len(c.bad):
            return []
        fixing = self._fixing(c)
        every = neighbours(c.model, self.k, self.nans)
        say(self.log, f"pairing {len(fixing)} moves from {c.model.name} with all {len(every)}")
        return self._check(c, _paired(c.model, fixing, every)[:MAX_PAIRS])


def _paired(p: ModelParams, xs, ys) -> list[ModelParams]:
    """p with one move of xs and one of ys on other parameters (each pair once)."""
    out, keys = [], set()
    for i, (cx, _) in enumerate(xs):
        for cy, _ in ys[i + 1:] if xs is ys else ys:
            if set(cx) & set(cy):
                continue
            q = apply(p, {**cx, **cy})
            if q is None:
                continue
            key = repr(sorted(arithmetic(q).items()))
            if key not in keys:
                keys.add(key)
                out.append(q)
    return out
