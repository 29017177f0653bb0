"""The search of a plan on the classes the candidates leave together.

First fresh pools through the simulator (``Search.simulate``: rows that
split a class join the plan, as the solvers' witnesses do); then the
solvers, one query per difference pattern (the parameters a class's
members disagree on) per round, as independent jobs of tcsmt.runner; every
witness is replayed, run on the hypotheses of the classes still open (one
per circuit), and the classes split; a class the solvers prove equal is
"proved". Then classes apart in min_exponent are proved by the floor
lemma where it holds (``Search.settle``), and the fewer circuits it leaves
open get fresh pools of their own (``pool_limit``); last, the classes still open are
proved by sweeping (``Search.prove_open``) while the budget lasts. tcsmt.identify.plan.build_plan
calls ``Search(...).run``.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np

from tcsmt import runner
from tcsmt.enums import Verdict
from tcsmt.identify.classes import (
    LEMMA_TIMEOUT,
    MAX_ROUNDS,
    MAX_SEARCH_HYPS,
    PROOF_TIMEOUT,
    SEARCH_TIMEOUT,
    PlanClass,
    classes_of,
    say,
    vector_arrays,
)
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector
from tcsmt.sim.evaluate import evaluate, neighbour_runs, outputs

POOL_GROUP = 8
"""Fresh pools a plan's search evaluates at once (Search.simulate), memory
allowing (``_pools_at_once``). Recording a circuit costs about as much as
running it on five pools, and pools seldom split every class: in the fp8
space (e4m3:fp32) pools 5 to 8 still ran 10486 of the 10802 circuits that
pools 1 to 4 ran."""


POOL_HYPOTHESIS_ROWS = 20_000_000
"""Beyond simsplit's POOLS, a plan's search draws fresh pools while the
circuits still open times the rows of the pools drawn stay under this
(``pool_limit``), up to MAX_POOLS: a small space splits classes that only
rare rows tell apart. In the NVFP4 space (e2m1:fp32, ue4m3 scales per 16)
the rows aimed at the window split groups of 4 from groups of 8 products 8
to 76 times in 100 000 rows, and none in the first 16 000 for 8 of its
classes; the fp8 space (10 802 circuits) draws its 8 pools as before."""
MAX_POOLS = 64


def pool_limit(circuits: int) -> int:
    """The fresh pools a search may have drawn while ``circuits`` circuits
    are open: simsplit's POOLS, more while POOL_HYPOTHESIS_ROWS allows."""
    from tcsmt.identify.simsplit import POOLS, ROWS
    return max(POOLS, min(MAX_POOLS, POOL_HYPOTHESIS_ROWS // (max(1, circuits) * ROWS)))


def _pools_at_once(hypotheses: int, k: int, most: int) -> int:
    """The most pools, up to ``most`` (at least 1), whose joint evaluation
    fits in the memory there is (tcsmt.budget.available)."""
    from tcsmt.budget import available
    from tcsmt.identify.simsplit import ROWS
    from tcsmt.sim.evaluate import evaluation_bytes
    have, _ = available()
    n = most
    while n > 1 and have is not None and evaluation_bytes(hypotheses, n * ROWS, k) > have // 2:
        n -= 1
    return n


class Search:
    """Solver search on the open classes, one class per difference pattern
    (the parameters its members disagree on) per round: a witness for one
    class of a pattern usually splits the others of that pattern too, and
    every witness is run on one member per circuit of every open class."""

    def __init__(self, models, shape, k, domain, budget, log, first=()):
        self.models, self.shape, self.k, self.domain = models, shape, k, domain
        self.first = set(first)            # hypotheses whose classes are proved first
        self.budget, self.log = budget, log
        self.spent = 0.0
        self.counts = {"queries": 0, "sat": 0, "unsat": 0, "unknown": 0}
        self.dead: set[tuple] = set()      # patterns whose query found no witness
        self.simulation: dict = {}
        self.dtype = np.uint32 if models[0].fout.bits <= 32 else np.uint64

    def circuits(self, members: list[int]) -> list[int]:
        """One member per distinct circuit (by the evaluator's twin numbers)."""
        seen: dict[int, int] = {}
        for i in members:
            seen.setdefault(int(self.shape[i]), i)
        return list(seen.values())

    def pattern(self, members: list[int]) -> tuple:
        ms = [self.models[i] for i in members]
        keys = ms[0].parameter_dict()
        return tuple(sorted(k for k in keys if len({str(getattr(m, k)) for m in ms}) > 1))

    def mark(self, cl: PlanClass) -> PlanClass:
        if len(cl.members) > 1:
            cl.status = "identical" if len(self.circuits(cl.members)) == 1 else "open"
        return cl

    def run(self, groups: list[list[int]]):
        classes = [self.mark(PlanClass(g)) for g in groups]
        extra: list[Vector] = []
        extra_out = np.zeros((len(self.models), 0), dtype=self.dtype)
        classes, extra, extra_out = self.pooled(classes, extra, extra_out)
        for rnd in range(MAX_ROUNDS):
            todo: dict[tuple, PlanClass] = {}
            for cl in sorted((c for c in classes if c.status == "open"), key=lambda c: -len(c.members)):
                pat = self.pattern(cl.members)
                if pat not in self.dead:
                    todo.setdefault(pat, cl)
            if not todo or self.spent >= self.budget:
                break
            found = self.search_round(todo)
            if not found:
                continue
            extra += found
            extra_out = np.concatenate([extra_out, self.outputs_on(found, classes)], axis=1)
            classes = self.split(classes, extra_out)
            say(self.log, f"  round {rnd + 1}: {len(found)} witnesses, {len(classes)} classes, "
                           f"{sum(cl.status == 'open' for cl in classes)} open")
        self.settle(classes)
        if any(cl.status == "open" for cl in classes):
            # the floor lemma leaves fewer circuits open: more pools for the rest
            n = len(extra)
            classes, extra, extra_out = self.pooled(classes, extra, extra_out)
            if len(extra) > n:
                self.settle(classes)
        self.prove_open(classes)
        for cl in classes:
            if cl.status == "open" and not cl.note:
                cl.note = ("not split by the candidates" + (" or the solvers' search" if
                           self.pattern(cl.members) in self.dead else "") + "; not proved equal")
        return classes, extra, extra_out

    def pooled(self, classes: list[PlanClass], extra: list[Vector], extra_out: np.ndarray):
        """The classes split by the rows of fresh pools (``simulate``), with
        those rows and every hypothesis's outputs on them added."""
        found, known = self.simulate(classes)
        if found:
            extra = extra + found
            extra_out = np.concatenate([extra_out, self.outputs_on(found, classes, known)], axis=1)
            classes = self.split(classes, extra_out)
            say(self.log, f"  fresh pools: {len(found)} rows, {len(classes)} classes, "
                           f"{sum(cl.status == 'open' for cl in classes)} open")
        return classes, extra, extra_out

    def simulate(self, classes: list[PlanClass]) -> tuple[list[Vector], dict[int, list[int]]]:
        """(rows, outputs): rows of fresh pools (tcsmt.identify.simsplit.pool: for block-scaled
        spaces aimed at the window below the largest term) that split open
        classes: one member per circuit of every open class runs on each
        pool, and the first row that gives two outputs in a class joins the
        plan. Pools are drawn while some class is open, up to simsplit's
        ``pool_limit`` of the circuits open (no clock: the plan is the
        same on any machine). Up to
        POOL_GROUP pools are evaluated at once, for the circuits open when
        the first of them is drawn (recording a hypothesis's datapath costs
        the batch simulator more than running it on thousands of rows); each
        pool is then read in turn as if run alone, so the rows found are
        the same. ``outputs``: for every circuit the pools ran (one member
        per circuit of every open class), its outputs on the rows found,
        kept from the pools' evaluation for ``outputs_on``. A second call
        (after the floor lemma) draws pools the first did not, while the
        pools of both stay within ``pool_limit`` of the circuits open then
        (the fp8 space's stay 8), and the figures in ``simulation`` add up."""
        from tcsmt.identify.simsplit import ROWS, SEED, pool, row_vector
        t0 = time.monotonic()
        todo = [cl.members for cl in classes if cl.status == "open"]
        rows: dict[bytes, Vector] = {}
        known: dict[int, list[int]] = {}
        before = self.simulation
        drawn0 = before.get("pools", 0)
        r = 0
        while todo:
            run = sorted({i for m in todo for i in self.circuits(m)})
            limit = pool_limit(len(run)) - drawn0      # the search's pools in all, this call's first
            if r >= limit:
                break
            n = _pools_at_once(len(run), self.k, min(POOL_GROUP, limit - r))
            drawn = [pool(self.models[run[0]], self.k, self.domain, ROWS, SEED + drawn0 + r + j)
                     for j in range(n)]
            joined = [None if drawn[0][x] is None else np.concatenate([d[x] for d in drawn])
                      for x in range(5)]
            a, b, c, sa, sb = joined
            say(self.log, f"  fresh pools {r + 1}..{r + n}: {len(run)} circuits of {len(todo)} "
                           f"open classes on {n * ROWS} rows")
            ev = evaluate([self.models[i] for i in run], a, b, c, sa=sa, sb=sb)
            out_all, wide = ev.outputs, {run[j] for j in ev.unsupported}
            at = {i: j for j, i in enumerate(run)}
            start = 0
            for pa, pb, pc, psa, psb in drawn:
                if not todo:
                    break
                size = pa.shape[0]
                left = []
                for m in todo:
                    o = out_all[[at[i] for i in self.circuits(m)], start:start + size]
                    split = np.nonzero((o != o[0][None, :]).any(axis=0))[0]
                    if not len(split):
                        left.append(m)
                        continue
                    v = row_vector(pa, pb, pc, psa, psb, int(split[0]))
                    key = repr(v).encode()
                    if key not in rows:
                        rows[key] = v
                        column = out_all[:, start + int(split[0])]
                        for i, j in at.items():
                            if i not in wide:
                                known.setdefault(i, []).append(int(column[j]))
                todo, r, start = left, r + 1, start + size
        self.simulation = {"pools": drawn0 + r, "rows": before.get("rows", 0) + r * ROWS,
                           "vectors": before.get("vectors", 0) + len(rows),
                           "seconds": round(before.get("seconds", 0) + time.monotonic() - t0, 1)}
        return list(rows.values()), known

    def prove_open(self, classes: list[PlanClass]) -> None:
        """Classes still open after the search (MAX_SEARCH_HYPS circuits at
        most), proved one function on the domain by sweeping (tcsmt.search.sweeping.prove_pair:
        the first circuit against each other one, every lemma UNSAT by two
        solvers), while the solvers' budget lasts, PROOF_TIMEOUT seconds at
        most a class: the classes of ``first`` (the space's published
        readings), then those whose circuits part least (``apart``). A
        proved class keeps the proof's summary."""
        if self.spent >= self.budget:
            return
        todo = [c for c in classes
                if c.status == "open" and len(self.circuits(c.members)) <= MAX_SEARCH_HYPS]
        published = [c for c in todo if self.first & set(c.members)]
        rest = [c for c in todo if not self.first & set(c.members)]
        for group in (published, rest):
            if self.spent >= self.budget:
                return          # ``apart`` traces every circuit: not for classes no proof reaches
            for cl in self.ranked(group):
                if not self.prove(cl):
                    return

    def ranked(self, group: list[PlanClass]) -> list[PlanClass]:
        """``group`` by ``apart``, least first (ties in their order)."""
        values = self.aparts(group)
        return [group[j] for j in sorted(range(len(group)), key=values.__getitem__)]

    def aparts(self, group: list[PlanClass]) -> list[int]:
        """``apart`` of every class of ``group``: runs of classes as
        independent jobs (tcsmt.runner; tracing a class's circuits takes
        some 27 ms at k = 32, and thousands of fp8 classes may be open)."""
        circs = [self.circuits(cl.members) for cl in group]
        used = sorted({i for c in circs for i in c})
        at = {i: j for j, i in enumerate(used)}
        jobs = [[at[i] for i in c] for c in circs]
        runs = [[jobs[j] for j in run] for run in neighbour_runs(len(jobs))]
        tasks = [runner.Task(f"classes {n}", partial(_apart_job, r)) for n, r in enumerate(runs)]
        done = runner.run(tasks, shared=([self.models[i] for i in used], self.k),
                          workers=0 if len(runs) <= 1 else None)
        return [v for d in done for v in d.result()]

    def prove(self, cl: PlanClass) -> bool:
        """One class of ``prove_open``, its first circuit against each other
        one; False when the budget ran out."""
        from tcsmt.search.sweeping import prove_pair
        circ = self.circuits(cl.members)
        parts = []
        for j in circ[1:]:
            left = min(PROOF_TIMEOUT, self.budget - self.spent)
            if left <= 0:
                return False
            t0 = time.monotonic()
            got = prove_pair(Hypothesis("A", self.models[circ[0]]), Hypothesis("B", self.models[j]),
                             self.k, self.domain, timeout=left)
            self.spent += time.monotonic() - t0
            self.counts["proofs_tried"] = self.counts.get("proofs_tried", 0) + 1
            say(self.log, f"  proof {', '.join(self.pattern(cl.members))}: "
                           f"{'unsat' if got else 'no proof'} ({time.monotonic() - t0:.1f} s)")
            if got is None:
                break
            parts.append(got.summary())
        if len(parts) == len(circ) - 1:
            cl.status = "proved"
            cl.proved_by = sorted({s for part in parts for s in part["proved_by"]})
            cl.proof = parts
            self.counts["proved"] = self.counts.get("proved", 0) + 1
        return True

    def settle(self, classes: list[PlanClass]) -> None:
        """Open classes whose members differ in min_exponent, proved by the
        floor lemma (tcsmt.identify.lemmas.floor_lemma: on the plan's domain
        no block's alignment point with a non-zero term lies below the
        floor; UNSAT, cross-checked by a second solver): every circuit of
        the class with a floor the lemma proves moot is built again
        without it, and when they all build one circuit the class is
        proved, its proof the lemmas. Before the sweeping (prove_open),
        while the budget lasts: a lemma is a small formula (under a second
        on the NVFP4 space), a sweep of the whole dot product minutes."""
        from tcsmt.identify.lemmas import floor_lemma
        from tcsmt.sim.evaluate import trace
        for cl in classes:
            if cl.status != "open" or "min_exponent" not in self.pattern(cl.members):
                continue
            if self.spent >= self.budget:
                return
            lemmas, built = [], []
            for i in self.circuits(cl.members):
                m = self.models[i]
                if m.min_exponent is not None:
                    t0 = time.monotonic()
                    lem = floor_lemma(m, self.k, self.domain,
                                      timeout=min(LEMMA_TIMEOUT, max(1.0, self.budget - self.spent)))
                    self.spent += time.monotonic() - t0
                    self.counts["lemmas"] = self.counts.get("lemmas", 0) + 1
                    if lem["verdict"] != Verdict.UNSAT:
                        break
                    lemmas.append({"hypothesis": m.name, **lem})
                    m = m.replace(min_exponent=None)
                built.append(m)
            else:
                if len({r.id for r in trace(built, self.k)}) == 1:
                    cl.status = "proved"
                    cl.proved_by = sorted({s for lem in lemmas for s in lem["proved_by"]})
                    cl.proof = [{"method": "floor lemma", "verdict": "unsat", "proved_by": cl.proved_by,
                                 "lemmas": lemmas, "same_circuit": True}]
                    self.counts["proved_by_lemmas"] = self.counts.get("proved_by_lemmas", 0) + 1
            say(self.log, f"  floor lemma {', '.join(self.pattern(cl.members))}: "
                           f"{'proved' if cl.status == 'proved' else 'not proved'}")

    def apart(self, cl: PlanClass) -> int:
        """How many graph nodes one circuit of the class has that another
        lacks (all traced into one graph: what they compute alike is one
        node; a leading-zero count is one node, tcsmt.interp.trace.CountingTrace),
        summed over the circuits after the first."""
        return parting([self.models[i] for i in self.circuits(cl.members)], self.k)

    def search_round(self, todo: dict[tuple, PlanClass]) -> list[Vector]:
        """One query per pattern, as independent jobs (tcsmt.runner), as many
        as the budget left holds if each took its whole timeout."""
        room = max(1, math.ceil((self.budget - self.spent) / SEARCH_TIMEOUT))
        asked = list(todo.items())[:room]
        circs = [self.circuits(cl.members)[:MAX_SEARCH_HYPS] for _, cl in asked]
        tasks = [runner.Task(", ".join(pat), partial(_search_job, [self.models[i] for i in circ],
                                                     self.k, self.domain))
                 for (pat, _), circ in zip(asked, circs)]
        found: list[Vector] = []
        for (pat, cl), circ, done in zip(asked, circs, runner.run(tasks)):
            verdict, seconds, proved_by, vector = done.result()
            self.spent += seconds
            self.counts["queries"] += 1
            self.counts[verdict] = self.counts.get(verdict, 0) + 1
            say(self.log, f"  search {', '.join(pat)}: {verdict} ({seconds:.1f} s)")
            if verdict == Verdict.SAT:
                found.append(vector)
                continue
            self.dead.add(pat)
            if verdict == Verdict.UNSAT and len(circ) == len(self.circuits(cl.members)):
                cl.status, cl.proved_by = "proved", proved_by
            elif verdict == Verdict.UNSAT:
                cl.note = f"the first {len(circ)} circuits proved equal; the others not asked"
        return found

    def outputs_on(self, vecs: list[Vector], classes: list[PlanClass],
                   known: dict[int, list[int]] | None = None) -> np.ndarray:
        """[models, len(vecs)] outputs: one member per circuit of an open
        class, and the first member of every other class (its members are
        equal: one circuit, or proved), copied to the rest (hypotheses that
        build one circuit compute one function: the first evaluation's
        twins are not run again). ``known``: outputs already worked out on
        ``vecs`` (Search.simulate's), not run again."""
        known = {i: v for i, v in (known or {}).items() if len(v) == len(vecs)}
        need = sorted({i for cl in classes
                       for i in (self.circuits(cl.members) if cl.status == "open" else cl.members[:1])})
        run = [i for i in need if i not in known]
        say(self.log, f"  running {len(run)} hypotheses on {len(vecs)} witnesses"
                      + (f" ({len(need) - len(run)} known)" if len(run) < len(need) else ""))
        out = np.zeros((len(self.models), len(vecs)), dtype=self.dtype)
        if run:
            a, b, c, sa, sb = vector_arrays(vecs)
            out[run] = outputs([self.models[i] for i in run], a, b, c, sa=sa, sb=sb)
        for i in need:
            if i in known:
                out[i] = known[i]
        twin = {int(self.shape[i]): i for i in need}
        for cl in classes:
            if cl.status != "open":
                out[cl.members] = out[cl.members[0]]
            else:
                out[cl.members] = out[[twin[int(self.shape[i])] for i in cl.members]]
        return out

    def split(self, classes: list[PlanClass], extra_out: np.ndarray) -> list[PlanClass]:
        new: list[PlanClass] = []
        for cl in classes:
            if cl.status != "open":
                new.append(cl)
                continue
            new += [self.mark(PlanClass(g)) for g in classes_of(extra_out, cl.members)]
        return new

    def summary(self) -> dict:
        return {"fresh_pools": self.simulation, **self.counts, "seconds": round(self.spent, 1),
                "budget_seconds": self.budget,
                "timeout_per_query": SEARCH_TIMEOUT,
                "patterns_without_witness": [list(p) for p in sorted(self.dead)]}


def parting(circuits: list[ModelParams], k: int) -> int:
    """Search.apart of the circuits of one class (one model each)."""
    from tcsmt.sim.evaluate import no_collection, trace
    from tcsmt.smt.cut import cone
    with no_collection():
        roots = trace(circuits, k, counting=True)
        first = cone(roots[:1])
        return sum(len(cone([r]) ^ first) for r in roots[1:])


def _apart_job(job: list[list[int]], shared: tuple) -> list[int]:
    """``parting`` of a run of classes (in a worker): the circuits of each
    as indices into the shared models."""
    models, k = shared
    return [parting([models[i] for i in circ], k) for circ in job]


def _search_job(models: list[ModelParams], k: int, domain: Domain):
    """One class's query (in a worker): (verdict, seconds, proved_by, the
    replayed witness or None)."""
    from tcsmt.search.diff import run_diff
    out = run_diff([Hypothesis(f"H{j}", m) for j, m in enumerate(models)], k, domain,
                   timeout=SEARCH_TIMEOUT)
    return str(out.verdict), out.seconds, list(out.proved_by), out.vector if out.verdict == "sat" else None

