"""Two terms proved equal by merging what they compute alike (SAT sweeping).

Two hypotheses run into one hash-consing builder share every node they
compute alike; where they part (a product kept exactly in one, rounded to
fp32 in the other) the solvers get one large formula with two different
circuits, which no solver may answer in minutes. Equivalence checkers of
hardware answer such miters by sweeping: nodes are simulated on sample
inputs, a node of the second term whose values match a node of the first
on every sample is a candidate, and each candidate, taken from the inputs
upward, is proved equal to its match by a small formula (its own cone,
what the two share cut free where possible). A proved node is replaced by
its match; the nodes above it then often become the match's users by
hash-consing alone, so they need no proof. When the second term itself
becomes the first, the two are equal on every input that meets the
constraints, and the proof is the list of its lemmas, each UNSAT by two
solvers.

Every lemma's formula keeps the constraints (the domain), so each is a
fact about the inputs of the domain; replacing a node by one proved equal
to it there changes no value there. A lemma's solver may find the two
apart: with a cut (free shared nodes, an over-approximation) that is no
witness and the lemma is asked again without the cut; without one, the
inputs found become one more sample, which splits the candidates that
only looked alike.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tcsmt.enums import Status
from tcsmt.interp.graph import BOOL, Node, reachable
from tcsmt.smt import cut as cuts
from tcsmt.smt import service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import Formula, build_formula
from tcsmt.smt.terms import evaluate_all

SAMPLES = 48
"""Sample inputs simulated at the start (more come from the solvers)."""

WALL_PER_CPU = 10
"""A lemma's wall-clock limit, in units of its CPU budget: the budget is
what bounds a solver; on a loaded machine its wall time is many times its
CPU time, and a lemma cut by the clock is a proof lost."""


@dataclass
class Lemma:
    """One proved equality: the two nodes' ids, its formula, the solvers
    that answered UNSAT and their CPU seconds, and whether shared nodes
    were cut free."""
    left: int
    right: int
    formula: Formula
    proved_by: list[str]
    cpu_seconds: dict[str, float]
    cut: bool


@dataclass
class Sweep:
    """The outcome: ``equal`` when the second term was merged into the
    first; the lemmas that did it; what was tried."""
    equal: bool
    lemmas: list[Lemma] = field(default_factory=list)
    asked: int = 0
    refuted: int = 0
    unanswered: int = 0
    samples: int = 0
    seconds: float = 0.0
    lowest: list = field(default_factory=list)


def random_samples(order: list[Node], keep: list[Node], count: int, seed: int = 1,
                   tries: int = 50) -> list[dict[str, int]]:
    """Up to ``count`` random assignments of the inputs that meet every
    constraint of ``keep``."""
    rng = random.Random(seed)
    names = {n.static[0]: n.width for n in order if n.op == "input"}
    out: list[dict[str, int]] = []
    for _ in range(count * tries):
        if len(out) >= count:
            break
        v = {name: rng.getrandbits(max(w, 1)) for name, w in names.items()}
        if meets(keep, v):
            out.append(v)
    return out


def meets(keep: list[Node], inputs: dict[str, int]) -> bool:
    """Whether an assignment meets every constraint (only their cones run)."""
    vals = evaluate_all(reachable(keep)[0], inputs) if keep else {}
    return all(vals[k.id] for k in keep)


def completed(got: dict[str, int], samples: list[dict[str, int]], keep: list[Node]) -> dict | None:
    """A solver's inputs (those of its formula) completed from the first
    sample for the inputs the formula did not hold, if that meets the
    constraints."""
    if not samples:
        return None
    full = {**samples[0], **{name: v for name, v in got.items() if name in samples[0]}}
    return full if meets(keep, full) else None


def _rebuild(I, n: Node, made: dict[int, Node]) -> Node:
    """n rebuilt in I with ``made`` (ids already rebuilt, merges included)."""
    return cuts.rebuild(I, [n], set(), made)[0]


def lemma_formula(keep: list[Node], u: Node, v: Node, cut_at: set[int], description: str) -> Formula:
    """The constraints and u != v, the nodes of ``cut_at`` free."""
    def build(I):
        *rest, a, b = cuts.rebuild(I, [*keep, u, v], cut_at)
        if u.width == BOOL:
            return rest + [I.or_(I.and_(a, I.not_(b)), I.and_(I.not_(a), b))]
        return rest + [I.not_(I.eq(a, b))]
    return build_formula(build, description=description)


def sweep(I, keep: list[Node], x: Node, y: Node, names: list[str], budget: float = 30.0,
          timeout: float = 600.0, log: Callable[[str], None] | None = None) -> Sweep:
    """Merge y into x (module doc). ``I``: the builder x, y and ``keep``
    live in (the merged nodes are built into it). ``names``: two solvers
    or more; a lemma counts when the first two both answer UNSAT, each
    within ``budget`` CPU seconds."""
    t0 = time.monotonic()
    out = Sweep(False)
    order, _ = reachable([*keep, x, y])
    samples = random_samples(order, keep, SAMPLES)
    sims = [evaluate_all(order, s) for s in samples]
    x_cone = cuts.cone([x, *keep])
    made: dict[int, Node] = {}

    def signature(n: Node) -> tuple:
        return (n.width, tuple(s[n.id] for s in sims))

    classes: dict[tuple, Node] = {}
    for n in order:
        if n.id in x_cone:
            classes.setdefault(signature(n), n)
    for n in order:
        if n.id in x_cone:
            made[n.id] = n
    for n in order:
        if n.id in made or time.monotonic() - t0 > timeout:
            continue
        r = _rebuild(I, n, made)
        made[n.id] = r
        if r.id in x_cone or r.op in ("const", "input"):
            continue
        match = classes.get(signature(n))
        if match is None:
            match = _constant(I, n, sims)
        if match is None or match.id == r.id:
            continue
        got = _prove(keep, match, r, names, budget, out, log)
        if got is True:
            made[n.id] = match
        elif isinstance(got, dict) and (more := completed(got, samples, keep)) is not None:
            samples.append(more)                 # the solver's inputs: one more sample
            sims.append(evaluate_all(order, more))
            classes = {}
            for m in order:
                if m.id in x_cone:
                    classes.setdefault(signature(m), m)
    out.samples = len(samples)
    final = _rebuild(I, y, made)
    if final.id != x.id and final.id in x_cone and _prove(keep, x, final, names, budget, out, log) is True:
        final = x                     # y became a node of x's cone that x equals
    out.equal = final.id == x.id
    if not out.equal:
        rest, _ = reachable([final])
        out.lowest = [n for n in rest if n.id not in x_cone and n.op not in ("const", "input")
                      and all(a.id in x_cone or a.op in ("const", "input") for a in n.args)]
    out.seconds = time.monotonic() - t0
    return out


def _constant(I, n: Node, sims: list[dict[int, int]]) -> Node | None:
    vals = {s[n.id] for s in sims}
    if len(vals) != 1:
        return None
    (v,) = vals
    return I.bool_const(bool(v)) if n.width == BOOL else I.const(v, n.width)


def _prove(keep: list[Node], u: Node, v: Node, names: list[str], budget: float, out: Sweep,
           log) -> bool | dict | None:
    """True when two solvers prove u = v (first with the shared part cut
    free, then whole); the inputs of a real counterexample; None."""
    desc = f"tcsmt: sweep lemma #{u.id} = #{v.id}"
    for at in (cuts.frontier(u, v, keep), set()):
        f = lemma_formula(keep, u, v, at, desc + (" (shared part cut)" if at else ""))
        out.asked += 1
        first = service.race([Job(f, names[0], "lemma", budget)], budget * WALL_PER_CPU)[0]
        if log:
            log(f"#{u.id}=#{v.id} cut={len(at)} {names[0]}: {first.status} {first.cpu:.2f}s")
        if first.status == Status.SAT:
            if at:
                continue
            out.refuted += 1
            return dict(first.values or {})
        if first.status != Status.UNSAT:
            out.unanswered += 1
            return None
        second = service.race([Job(f, names[1], "lemma", budget)], budget * WALL_PER_CPU)[0]
        if log:
            log(f"#{u.id}=#{v.id} cut={len(at)} {names[1]}: {second.status} {second.cpu:.2f}s")
        if second.status != Status.UNSAT:
            out.unanswered += 1
            return None
        out.lemmas.append(Lemma(u.id, v.id, f, [first.solver, second.solver],
                                {first.solver: first.cpu, second.solver: second.cpu}, bool(at)))
        return True
    return None
