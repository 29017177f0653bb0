"""Blind identification: from a unit's outputs alone to a verdict and a model.

The unit is a device of tcsmt.identify.loop (a name and run(rows)):
every launch goes through tcsmt.identify.device.Seen, which keeps what it
returned; nothing else is read from the unit (a simulated unit's own
parameters are read only afterwards, by tcsmt.identify.simdevice, to say
whether the verdict was right). What it starts from, knowing only the
unit's formats, is tcsmt.identify.setting's. Two phases:

1. The plan's adaptive search (tcsmt.identify.loop.walk_plan): run the
   plan's first vector, follow the branch of the output, run the next,
   until one class of the plan's space is left (a run is one vector on
   the plan's path; ``batch`` says what one launch holds). Without a plan
   for the formats this phase is skipped and a first launch of random
   rows is run instead.
2. Confirmation, parameter by parameter. The centres are the shipped models
   of the formats and the class phase 1 ended in; tcsmt.identify.explain
   finds the models one or two parameters around them that reproduce every
   row seen. With only phase 1's few rows, the shipped model that
   explains them (else the one that misses fewest) is confirmed first.
   Then, round after round:
   * explanations with other circuits than the best are split by rows of
     a pool, or settled by the solvers (tcsmt.identify.rivals);
   * the best is confirmed once: its property vectors (from its result
     files when it is a shipped model, else asked now) and random rows of
     every kind, in one launch. Rows it misses name the parameters they are
     about, and the search runs again over everything seen: the unit moves
     to the model that explains it all;
   * the models one parameter away from it that still reproduce every row
     are split or settled the same way.
   The verdict is "identified" (with the rivals the proofs could not
   settle, if any) or "unexplained": nothing within two parameters of a
   known model reproduces the rows, which are shown.
"""

from __future__ import annotations

import time

import numpy as np

from tcsmt.identify.classes import say
from tcsmt.identify.confirm import property_vectors, random_probe
from tcsmt.identify.device import Seen
from tcsmt.identify.explain import Explanation, Search, describe, explaining, missed, nan_patterns, outputs
from tcsmt.identify.loop import vector_rows
from tcsmt.identify.neighbours import arithmetic, differs, neighbours
from tcsmt.identify.rivals import distinct, settle_all, split
from tcsmt.model.params import ModelParams

MAX_ROUNDS = 12
FEW_ROWS = 64           # rows below which phase 2 first probes around the nearest shipped model
CLASS_CENTRES = 4       # circuits of phase 1's class taken as centres
SHOWN = 12              # rows shown when nothing explains the unit


def _key(p: ModelParams) -> str:
    return repr(sorted(arithmetic(p).items()))


def unique(models: list[ModelParams]) -> list[ModelParams]:
    """The models, each arithmetic once (the first of equals kept)."""
    out, keys = [], set()
    for m in models:
        if _key(m) not in keys:
            keys.add(_key(m))
            out.append(m)
    return out


# ---------------------------------------------------------------------------
# Phase 1: the plan's adaptive search
# ---------------------------------------------------------------------------

def phase1(plan, seen: Seen, batch: str = "one", log=None) -> dict:
    """Walk the plan's tree with the unit's outputs (tcsmt.identify.loop:
    a run is one vector on the plan's path; ``batch`` says what a launch
    holds)."""
    from tcsmt.identify.loop import walk_plan
    from tcsmt.identify.report import distinct_circuits
    seen.names = {v: f"plan vector {i}" for i, v in enumerate(_padded(plan.vectors, plan.k))}
    walk = walk_plan(plan, seen, batch, log)
    out = {"steps": walk.steps, **walk.counts()}
    if walk.failure:
        failure = {**walk.failure, "d": walk.failure["d"]}
        return {**out, "failure": failure, "centres": _near_branches(plan, walk.node,
                                                                     int(walk.failure["d"], 16))}
    cl = plan.classes[walk.node["class"]]
    models = plan.models()
    members = [models[i] for i in cl.members]
    return {**out, "class": walk.node["class"], "class_size": len(members), "class_status": cl.status,
            "members": [m.name for m in members[:40]],
            "centres": distinct_circuits(members, plan.k)[:CLASS_CENTRES]}


def _padded(vectors, k: int):
    from tcsmt.search.vectors import Vector
    pad = (0,) * k
    return [Vector(v.a + pad[len(v.a):], v.b + pad[len(v.b):], v.c, v.sa, v.sb) for v in vectors]


def _near_branches(plan, node: dict, d: int) -> list[ModelParams]:
    """A member of each class under the two outputs nearest to d (in ulps)."""
    from tcsmt.identify.narrow import classes_under
    from tcsmt.model.formats import parse_bits
    f = plan.fout

    def pos(bits: int) -> int:
        mag = bits & ((1 << (f.bits - 1)) - 1)
        return -mag if bits >> (f.bits - 1) else mag

    near = sorted(node["outputs"].items(), key=lambda kv: abs(pos(parse_bits(kv[0], f)) - pos(d)))
    models = plan.models()
    out = [models[plan.classes[j].members[0]] for _, ch in near[:2] for j in classes_under(ch)]
    return out[:CLASS_CENTRES]


# ---------------------------------------------------------------------------
# Phase 2: confirmation
# ---------------------------------------------------------------------------

class Confirmation:
    """The state of phase 2 (see the module docstring)."""

    def __init__(self, seen: Seen, centres, shipped, fmt: ModelParams, log=None, prove: bool = True):
        self.seen, self.centres, self.shipped, self.fmt, self.log = seen, centres, shipped, fmt, log
        self.prove = prove
        self.events: list[dict] = []
        self.confirmed: set[str] = set()
        self.settled: dict[tuple[str, str], dict] = {}     # (model, rival) -> the proof's record
        self.pooled: set[tuple] = set()           # (model, rival[, k]) a pool was tried on
        self.seed = 0
        self.found: list = []

    def run(self) -> dict:
        if not len(self.seen):
            rows, why = random_probe(self.fmt, self.seen.k, seed=1)
            self._probe(rows, why, "random rows of every kind: no plan vector was run")
            self.events.append({"launch": len(self.seen.launches), "vectors": len(why),
                                "first": "random rows of every kind (no plan vector was run)"})
        if len(self.seen) < FEW_ROWS:
            self._first_probe()
        for _ in range(MAX_ROUNDS):
            found = self._search()
            if not found:
                return self._unexplained()
            best = found[0]
            h = best.model
            if _key(h) not in self.confirmed:
                self.confirmed.add(_key(h))
                self._confirm(best)
                continue
            others = [e.model for e in found[1:]]
            if self._split(h, others, "other explanations"):
                continue
            near = self._neighbour_rivals(h)
            if self._split(h, near, "models one parameter away"):
                continue
            if self._other_k(h, others + near):
                continue
            return self._identified(best, found)
        return {"verdict": "undecided", "why": f"still moving after {MAX_ROUNDS} rounds",
                "events": self.events}

    def _first_probe(self) -> None:
        """With the few rows of phase 1, confirm the shipped model that
        explains them, else the one that misses fewest (its property
        vectors and random rows are the first probe of many vectors): a
        search beyond the shipped models on a handful of rows would find
        too many explanations and tell them apart slowly."""
        shipped = unique(self.shipped) or self.centres
        bad = missed(shipped, self.seen)
        c = shipped[int(np.argmin([len(x) for x in bad]))]
        self.confirmed.add(_key(c))
        self._confirm(Explanation(c, c, {}, c, 0))

    def _search(self):
        """The explanations of every row seen: those of the last search that
        still explain them all (more rows only rule explanations out, so
        they stay the nearest), else a new search."""
        kept = [self.found[i] for i in explaining([e.model for e in self.found], self.seen)]
        if not kept:
            kept = Search(self.seen, self.centres, self.shipped, self.log).run()
        self.found = kept
        return kept

    # -- running rows ------------------------------------------------------

    def _probe(self, rows, why: list[str], reason: str) -> np.ndarray:
        say(self.log, f"launch {len(self.seen.launches) + 1}: {len(why)} vector"
                      f"{'s' if len(why) != 1 else ''} ({reason})")
        return self.seen.run_rows(rows, why, reason)

    def _confirm(self, best) -> bool:
        """Run h's confirmation rows; whether it missed some (the event says
        which and what they are about)."""
        h = best.model
        vecs, notes = property_vectors(h, self.shipped, self.seen.k, best.centre, self.log)
        self.seed += 1
        rnd, rnd_why = random_probe(self.fmt, self.seen.k, seed=100 + self.seed)
        from tcsmt.identify.device import concat
        rows = concat(vector_rows([v for v, _ in vecs], self.seen.k), rnd) if vecs else rnd
        why = [o for _, o in vecs] + rnd_why
        first = len(self.seen)
        self._probe(rows, why, f"confirming {best.describe()}")
        got = missed([h], self.seen)[0]
        new = [int(r) for r in got if r >= first]
        ev = {"launch": len(self.seen.launches), "confirming": best.describe(), "vectors": len(why),
              "property_vectors": len(vecs), "random_rows": len(rnd_why), "notes": notes,
              "missed": [self._row(r) for r in new[:SHOWN]], "missed_count": len(new),
              "about": about([self.seen.origins[r] for r in new])}
        self.events.append(ev)
        return bool(new)

    def _row(self, n: int) -> dict:
        f = self.fmt
        return self.seen.row_json(n, (f.fin, f.fb, f.fc, f.fout, f.fscale))

    # -- rivals -------------------------------------------------------------

    def _neighbour_rivals(self, h: ModelParams) -> list[ModelParams]:
        from tcsmt.sim.evaluate import screen, screening_rows
        nb = [q for _, q in neighbours(h, self.seen.k, nan_patterns(self.seen, h.fout))]
        a, b, c, sa, sb = self.seen.arrays()
        d = self.seen.d[self.seen.at(self.seen.k)[1]]
        order = screening_rows(nb, a, b, c, d, sa=sa, sb=sb)
        kept = [nb[i] for i in screen(nb, a, b, c, d, order=order, sa=sa, sb=sb)]
        return [kept[i] for i in explaining(kept, self.seen)]

    def _split(self, h: ModelParams, rivals: list[ModelParams], what: str) -> bool:
        """Run rows that split h from its rivals (of other circuits, not yet
        settled); whether any were run."""
        rivals = [r for r in distinct(rivals, self.seen.k, h) if (_key(h), _key(r)) not in self.settled]
        if not rivals:
            return False
        fresh = [r for r in rivals if (_key(h), _key(r)) not in self.pooled]
        if fresh:
            self.seed += 1
            rows, why, left = split(h, fresh, self.seen.k, self.seed)
            self.pooled |= {(_key(h), _key(r)) for r in fresh}
            if rows is not None:
                self._probe(rows, why, f"splitting {len(fresh) - len(left)} of {len(rivals)} {what} "
                                       f"from {h.name}")
                self.events.append({"launch": len(self.seen.launches), "split": what, "rivals": len(rivals),
                                    "vectors": len(why)})
                return True
        left = rivals
        witnesses = []
        proofs: list[dict] = settle_all(h, left, self.seen.k, self.log) if self.prove else [
            {"rival": r, "verdict": "unknown", "how": "not asked (--no-prove)"} for r in left]
        for rec in proofs:
            r = rec.pop("rival")
            if rec["verdict"] == "sat":
                witnesses.append(rec.pop("witness"))
            else:
                self.settled[(_key(h), _key(r))] = {"rival": describe(h, r), "changes": differs(h, r),
                                                    **rec}
        if witnesses:
            self._probe(vector_rows(witnesses, self.seen.k), ["solver witness"] * len(witnesses),
                        f"solver witnesses splitting {what} from {h.name}")
            return True
        return False

    def _other_k(self, h: ModelParams, rivals: list[ModelParams]) -> bool:
        """Rivals that reproduce every row seen may still differ from h at
        the k tcsmt equiv asks (the larger block size of the two): a lone
        block of 4 sums c itself under separate chaining, which no row of
        16 products shows. At each such k, rows of a pool on which they
        differ, else the solvers' witnesses, are run on the unit at that k
        (then every hypothesis is judged on every k seen); whether any ran."""
        from tcsmt.search.diff import default_k
        by_k: dict[int, list[ModelParams]] = {}
        for r in unique(rivals):
            n = default_k(h, r)
            if n != self.seen.k and (_key(h), f"{_key(r)} at k = {n}") not in self.settled:
                by_k.setdefault(n, []).append(r)
        for n, rs in sorted(by_k.items()):
            rs = distinct(rs, n, h)
            if not rs:
                continue
            refused = self.seen.refusal(n)
            fresh = [r for r in rs if (_key(h), _key(r), n) not in self.pooled]
            if fresh and not refused:
                self.seed += 1
                rows, why, _ = split(h, fresh, n, self.seed)
                self.pooled |= {(_key(h), _key(r), n) for r in fresh}
                if rows is not None:
                    self._probe(rows, why, f"splitting {len(fresh)} rivals from {h.name} at k = {n}")
                    self.events.append({"launch": len(self.seen.launches), "split": f"rivals at k = {n}",
                                        "rivals": len(rs), "vectors": len(why), "k": n})
                    return True
            if self._settle_at(h, rs, n, refused):
                return True
        return False

    def _settle_at(self, h: ModelParams, rivals: list[ModelParams], n: int, refused: str | None) -> bool:
        """The solvers at k = n on rivals no pool row split: witnesses run
        on the unit at n; whether any ran. A unit that cannot run rows of
        n leaves the rivals undecided with the reason (no row it could not
        run is asked for)."""
        proofs: list[dict] = (
            [{"rival": r, "verdict": "unknown", "how": f"not run: {refused}"} for r in rivals] if refused else
            settle_all(h, rivals, n, self.log) if self.prove else
            [{"rival": r, "verdict": "unknown", "how": "not asked (--no-prove)"} for r in rivals])
        witnesses = []
        for rec in proofs:
            r = rec.pop("rival")
            if rec["verdict"] == "sat":
                witnesses.append(rec.pop("witness"))
                continue
            self.settled[(_key(h), f"{_key(r)} at k = {n}")] = {
                "rival": describe(h, r), "changes": differs(h, r), **rec, "k": n,
                "how": f"at k = {n}: {rec['how']}"}
        if refused:
            self.events.append({"launch": len(self.seen.launches), "refused": refused, "k": n,
                                "rivals": len(rivals)})
        if witnesses:
            self._probe(vector_rows(witnesses, n), ["solver witness"] * len(witnesses),
                        f"solver witnesses splitting rivals from {h.name} at k = {n}")
            return True
        return False

    # -- verdicts -----------------------------------------------------------

    def _identified(self, best, found) -> dict:
        h = best.model
        mine = [v for (m, _), v in self.settled.items() if m == _key(h)]
        open_ = [v for v in mine if v["verdict"] != "unsat"]
        return {"verdict": "identified", "model": h, "explanation": best.record(),
                "describe": best.describe(), "base": best.nearest, "same_behaviour": [v for v in mine
                                                                                     if v not in open_],
                "undecided": open_, "events": self.events,
                "explanations": [e.describe() for e in found[:8]]}

    def _unexplained(self) -> dict:
        """The rows the closest model tried misses (it is refuted, not named)."""
        cands = unique(self.centres)
        bad = missed(cands, self.seen)
        best = int(np.argmin([len(x) for x in bad]))
        rows = [self._row(int(r)) for r in bad[best][:SHOWN]]
        out = outputs([cands[best]], self.seen, [int(r) for r in bad[best][:SHOWN]])[0][0]
        for r, d in zip(rows, out):
            r["closest_model_gives"] = self.fmt.fout.hex(int(d))
        return {"verdict": "unexplained", "rows": rows, "rows_missed_by_closest": len(bad[best]),
                "rows_seen": len(self.seen),
                "centres": len(cands), "events": self.events}


def about(origins: list[str]) -> list[str]:
    """What rows are about: the parameters of the properties whose vectors
    they are, and the kinds of random rows."""
    from tcsmt.properties.registry import all_properties
    props = all_properties()
    out: list[str] = []
    for o in origins:
        name = o.split(" vector")[0]
        words = (f"{', '.join(props[name].parameters)} ({name} vectors)" if name in props else
                 f"random {o.split()[1]} rows" if o.startswith("random ") else o)
        if words not in out:
            out.append(words)
    return out


# ---------------------------------------------------------------------------
# The whole loop
# ---------------------------------------------------------------------------

def identify_blind(device, fmt: ModelParams, k: int, plan=None, shipped=(), log=None,
                   confirm: bool = True, prove: bool = True, batch: str = "one") -> dict:
    """Both phases on ``device`` (rows of k products in fmt's formats); the
    record of what was run and the verdict. ``confirm=False`` stops after
    phase 1; ``prove=False`` leaves rivals no row splits undecided instead
    of asking the solvers."""
    t0 = time.monotonic()
    seen = Seen(device, k, fmt.scale_count(k))
    every = sorted(shipped, key=lambda m: not m.default)
    shipped = unique(every)
    if plan is not None:
        p1 = phase1(plan, seen, batch, log)
    else:
        p1 = {"skipped": "no plan for these formats: phase 2 starts from the shipped models", "centres": []}
    centres = unique(shipped + p1.pop("centres"))
    seen.phase = 2
    if confirm:
        p2 = Confirmation(seen, centres, shipped, fmt, log, prove).run()
        if "base" in p2:
            p2["base_twins"] = [m.name for m in every if m is not p2["base"] and not differs(m, p2["base"])]
    else:
        p2 = {"verdict": "outside the plan's space" if "failure" in p1 else
              "narrowed" if "class" in p1 else "not run"}
    return {"device": device.name, "plan": plan.source if plan is not None else None, "k": k,
            "formats": fmt.formats_label, "fmt": fmt, "phase1": p1, "phase2": p2, "verdict": p2["verdict"],
            "launches": {"phase1": seen.count(1)[0], "phase2": seen.count(2)[0],
                         "vectors": len(seen), "list": [x.record() for x in seen.launches]},
            "seen": seen, "seconds": round(time.monotonic() - t0, 1)}
