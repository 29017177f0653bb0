"""diff and equiv: inputs on which two models give different bits, or a proof
that no input of the domain does.

The formula runs ``datapath.dot`` with the SMT interpretation once per model
(two for diff, any number for a property query), on the same free inputs
a0..a{K-1}, b0..b{K-1}, c, and asserts that the outputs of some pair differ.
It also declares the outputs as d0, d1, ..., so every witness checks the
solver's outputs against the concrete model's too. Models with the same
parameters build the very same terms (hash-consing), so their formula folds
to ``(assert false)``.

Speed: besides the full formula, restricted ones are raced: "support-m"
keeps m products free and fixes the others to +0, which constant folding
removes from the circuit. A witness of a restriction is a witness of the
full question (the zeros are inputs like any other); only the full formula
can prove that there is none. Each restriction has a short budget so the
full formula always gets its turn (see benchmarks/bench_diff.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector, outputs
from tcsmt.smt import service
from tcsmt.smt.service import Job, Run
from tcsmt.smt.smtlib import Formula, build_formula

FULL = "full"
SUPPORT_BUDGET = 0.6      # CPU seconds a solver may spend on a restriction


class WitnessError(Exception):
    """A satisfying assignment that does not replay on the concrete model:
    a bug in tcsmt or in a solver. Never written, never printed as a result."""


def check_comparable(pa: ModelParams, pb: ModelParams) -> None:
    """Both models read the same a, b and c formats and write the same d format."""
    for what, x, y in (("input", pa.in_format, pb.in_format), ("c", pa.c_format, pb.c_format),
                       ("output", pa.out_format, pb.out_format)):
        if x != y:
            raise UserError(f"{pa.name} and {pb.name} have different {what} formats "
                            f"({x} and {y}): only models of the same formats can be compared")


def default_k(pa: ModelParams, pb: ModelParams) -> int:
    return max(pa.block_size, pb.block_size)


def support_positions(k: int, m: int) -> tuple[int, ...]:
    """m product positions spread over 0..k-1, the last one always included."""
    if m >= k:
        return tuple(range(k))
    if m == 1:
        return (k - 1,)
    return tuple(sorted({round(i * (k - 1) / (m - 1)) for i in range(m)}))


def declare_inputs(I, p: ModelParams, k: int, support: tuple[int, ...] | None = None):
    """Free inputs a{i}, b{i} (for i in support; +0 elsewhere) and c."""
    fin, fc = p.fin, p.fc
    free = set(range(k)) if support is None else set(support)
    a = [I.var(f"a{i}", fin.bits) if i in free else I.const(0, fin.bits) for i in range(k)]
    b = [I.var(f"b{i}", fin.bits) if i in free else I.const(0, fin.bits) for i in range(k)]
    return a, b, I.var("c", fc.bits)


Pairs = list[tuple[int, int]]


def all_pairs(n: int) -> Pairs:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def diff_formula(hyps: list[Hypothesis], k: int, domain: Domain,
                 support: tuple[int, ...] | None = None, pairs: Pairs | None = None) -> Formula:
    """Inputs of the domain on which the outputs of some pair of hypotheses
    differ (``pairs`` of indices; every pair by default). d{j} holds the
    output of hypothesis j."""
    pa = hyps[0].params
    pairs = pairs or all_pairs(len(hyps))

    def build(I):
        a, b, c = declare_inputs(I, pa, k, support)
        out = domain.constraints(I, pa.fin, pa.fc, a, b, c)
        dots = [datapath.dot(I, h.params, a, b, c) for h in hyps]
        out += [I.eq(I.var(f"d{j}", I.width(d)), d) for j, d in enumerate(dots)]
        # identical terms (models with the same parameters) fold to false
        return out + [I.or_(*[I.not_(I.eq(dots[i], dots[j])) for i, j in pairs])]

    where = "all products free" if support is None else f"products {list(support)} free, others +0"
    names = " ".join(h.label for h in hyps)
    return build_formula(build, description=f"tcsmt diff {names} k={k} ({where}; "
                                            f"domain {domain.describe()})")


def domain_formula(p: ModelParams, k: int, domain: Domain) -> Formula:
    """Satisfiable exactly when the domain holds some input."""
    def build(I):
        a, b, c = declare_inputs(I, p, k)
        return domain.constraints(I, p.fin, p.fc, a, b, c)
    return build_formula(build, description=f"tcsmt domain k={k} {domain.describe()}")


def formulations(hyps: list[Hypothesis], k: int, domain: Domain, pairs: Pairs | None = None,
                 restrictions: bool = True) -> list[tuple[str, Formula]]:
    """Restricted formulas (fewer free products) first, then the full one.
    The restrictions only help to find inputs: leave them out for a proof
    (``restrictions=False``), and when the full formula folds to false (the
    models build the same terms)."""
    full = diff_formula(hyps, k, domain, pairs=pairs)
    if full.trivially_unsat or not restrictions:
        return [(FULL, full)]
    levels = [m for m in (1, 2) if m < k]
    out = [(f"support-{m}", diff_formula(hyps, k, domain, support_positions(k, m), pairs))
           for m in levels]
    return out + [(FULL, full)]


# ---------------------------------------------------------------------------
# Witnesses
# ---------------------------------------------------------------------------

def decode(values: dict[str, int], k: int) -> Vector:
    """Input bit patterns from a satisfying assignment (absent inputs are +0)."""
    return Vector(tuple(values.get(f"a{i}", 0) for i in range(k)),
                  tuple(values.get(f"b{i}", 0) for i in range(k)), values.get("c", 0))


def replayed_witness(values: dict[str, int], hyps: list[Hypothesis], k: int, domain: Domain,
                     pairs: Pairs | None = None) -> Vector:
    """The witness, after checking on the concrete model that it lies in the
    domain, that each output equals the solver's, and that some pair differs."""
    vec = decode(values, k)
    p = hyps[0].params
    if not domain.contains(p.fin, p.fc, list(vec.a), list(vec.b), vec.c):
        raise WitnessError(f"the solver's witness {vec} is outside the domain {domain.describe()}")
    outs = outputs(vec, hyps)
    for j, h in enumerate(hyps):
        if f"d{j}" in values and values[f"d{j}"] != outs[h.id]:
            raise WitnessError(f"witness {vec}: the solver says {h.id} gives {values[f'd{j}']:#x}, "
                               f"the concrete model gives {outs[h.id]:#x}")
    pairs = pairs or all_pairs(len(hyps))
    if all(outs[hyps[i].id] == outs[hyps[j].id] for i, j in pairs):
        raise WitnessError(f"witness {vec} separates none of the pairs {pairs} on the concrete model")
    return vec


# ---------------------------------------------------------------------------
# Running a diff
# ---------------------------------------------------------------------------

@dataclass
class Outcome:
    verdict: str                       # sat, unsat, unknown
    reason: str
    full: Formula                      # the whole question (what --emit-smt2 writes)
    answered: Formula | None = None    # the formula whose answer is reported
    tag: str = ""
    vector: Vector | None = None
    runs: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def winner(self) -> Run | None:
        want = "sat" if self.verdict == "sat" else "unsat"
        return next((r for r in self.runs if r.status == want and r.tag == self.tag), None)

    @property
    def proved_by(self) -> list[str]:
        if self.verdict != "unsat":
            return []
        return [r.solver for r in self.runs if r.status == "unsat" and r.tag == FULL]


def run_diff(hyps: list[Hypothesis], k: int, domain: Domain, solver: str = "portfolio",
             timeout: float = service.DEFAULT_TIMEOUT, cross_check: bool = False,
             forms: list[tuple[str, Formula]] | None = None, pairs: Pairs | None = None,
             order: Callable[[list[tuple[str, Formula]], list[str]], list[Job]] | None = None,
             parallel: int | None = None) -> Outcome:
    """Race the formulations on the chosen solvers; replay a witness; on
    unsat, cross-check if asked and make sure the domain is not empty.
    ``pairs`` (indices into hyps, every pair by default) are the pairs a
    witness must separate one of. ``order`` (forms, solvers) -> jobs sets
    which solver starts on which formula first (default: every solver on
    the first formula, then on the next)."""
    t0 = time.monotonic()
    names, notes = service.choose_solvers(solver)
    forms = forms or formulations(hyps, k, domain, pairs)
    full = forms[-1][1]
    if order is not None:
        jobs = order(forms, names)
    else:
        jobs = [Job(f, s, tag, None if tag == FULL else SUPPORT_BUDGET) for tag, f in forms for s in names]
    votes = {FULL: 2 if cross_check and len(names) > 1 else 1}
    runs = service.race(jobs, timeout, stop=lambda r: r.status == "sat" or r.tag == FULL,
                        unsat_votes=votes, parallel=parallel)
    out = _outcome(runs, forms, hyps, k, domain, pairs)
    out.notes += notes
    if out.verdict == "unsat":
        if cross_check and len(out.proved_by) < 2:
            left = timeout - (time.monotonic() - t0)
            out.runs += service.confirm_unsat(full, out.proved_by, left, FULL)
            _refuse_disagreement(out.runs)
            if len(out.proved_by) < 2:
                out.notes.append("cross-check: no second solver proved it within the time limit")
        out.notes += _refuse_empty_domain(hyps[0].params, k, domain, timeout)
    out.seconds = time.monotonic() - t0
    return out


def _refuse_disagreement(runs: list[Run]) -> None:
    """A sat answer (on any formulation: each is a restriction of the full
    one) beside an unsat answer on the full formula: one solver is wrong."""
    sat = [r for r in runs if r.status == "sat"]
    unsat_full = [r for r in runs if r.status == "unsat" and r.tag == FULL]
    if sat and unsat_full:
        raise WitnessError("solvers disagree: " + ", ".join(
            f"{r.solver} {r.status} ({r.tag})" for r in sat + unsat_full))


def _outcome(runs: list[Run], forms, hyps, k, domain, pairs) -> Outcome:
    by_tag = dict(forms)
    full = by_tag[FULL]
    _refuse_disagreement(runs)
    sat = [r for r in runs if r.status == "sat"]
    unsat_full = [r for r in runs if r.status == "unsat" and r.tag == FULL]
    if sat:
        r = sat[0]
        vec = replayed_witness(r.values, hyps, k, domain, pairs)
        return Outcome("sat", "", full, by_tag[r.tag], r.tag, vec, runs)
    if unsat_full:
        return Outcome("unsat", "", full, full, FULL, None, runs)
    reasons = sorted({f"{r.solver}: {r.reason}" for r in runs if r.tag == FULL and r.reason})
    return Outcome("unknown", "; ".join(reasons) or "no answer", full, None, "", None, runs)


def _refuse_empty_domain(p: ModelParams, k: int, domain: Domain, timeout: float) -> list[str]:
    """An unsat diff over an empty domain proves nothing: say so (UserError);
    a note when the solvers cannot tell."""
    if domain == Domain():
        return []                      # finite inputs: +0 everywhere is one
    answer = service.solve(domain_formula(p, k, domain), "portfolio", min(timeout, 30.0))
    if answer.status == "unsat":
        raise UserError(f"the input domain is empty (no inputs satisfy {domain.describe()}): "
                        "there is nothing to compare")
    if answer.status != "sat":
        return [f"could not check that the domain holds any input ({answer.reason})"]
    return []
