"""Proofs of sufficiency: how many carry bits an accumulator needs.

``prove_carry_bits`` finds the fewest carry bits k with which the block's
accumulator gives the same bits as an unbounded one for every finite input:

* sufficiency, by a lemma: no finite input makes the block's sum leave the
  range a k-carry register holds (the unbounded register's sum, which is
  exact, always fits). Modular addition then gives the k-bit register the
  very same sum, so every later stage, and the output, is the same. The
  lemma is proved in parts where the block has one register
  (tcsmt.search.overflow: each aligned term within a bound, and words
  within those bounds summing inside the register), or whole; every part,
  or the whole lemma, is UNSAT by one solver and cross-checked by a second;
* necessity: a witness on which k - 1 carry bits give different output
  bits from the unbounded accumulator, found by the solvers and replayed on
  the concrete model before it is written.

The counts below the fewest are shown to overflow first by the largest
inputs themselves (concrete, no solver), else by the whole lemma (SAT).

``prove_carry_bits`` returns a ``CarryProof``; tcsmt.report.documents
writes it as a result document whose hypotheses are k - 1, k and unbounded
carry bits, whose vector is the witness, and whose proof is the lemma's
(its parts in ``query.parts``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from tcsmt.enums import Status, Verdict
from tcsmt.errors import SolverTimeout, UserError
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.search import diff
from tcsmt.search import overflow as ov
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.overflow import overflow_formula
from tcsmt.search.vectors import Hypothesis, Vector, separated_by
from tcsmt.smt import service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import Formula

MAX_CARRY = 12
PROVERS = ("bitwuzla", "boolector", "z3", "cvc5")
"""The order solvers take a proof's formulas in: the two that settle sums
of many aligned products in seconds first (Z3 and cvc5 give nothing in
minutes on NVFP4's groups). The portfolio's proofs add Boolector, when it
is installed, to the portfolio's solvers."""
QUICK = 2.0
"""CPU seconds the first two provers get on the whole lemma before it is
proved in parts (small blocks: the whole lemma in well under a second)."""
WHOLE_FIRST = 16
"""Blocks of up to this many products try the whole lemma first (QUICK);
larger ones go to the parts at once (NVFP4's 64: parts 4 CPU s in all,
the whole lemma 15 s of Bitwuzla)."""


def check_single_block(p: ModelParams) -> None:
    if p.normalisation != "block":
        raise UserError(f"{p.name} rounds after every addition: it has no block accumulator "
                        "whose carry bits could be counted")


@dataclass
class Part:
    """One part of a lemma proved in parts: its name ("term 0", "sum"),
    what it states, its formula (UNSAT: the statement holds) and answer."""
    name: str
    statement: str
    formula: Formula
    answer: service.Answer


@dataclass
class CarryProof:
    """The fewest carry bits and how it is known: the lemma's answer for
    every count asked (UNSAT: that many suffice; for the fewest, the parts
    that prove it when it was proved in parts), and the witness that one
    fewer gives other bits (None when the fewest is 0)."""
    base: ModelParams
    k: int
    domain: Domain
    fewest: int
    lemmas: dict[int, service.Answer]
    witness: sep.Outcome | None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)

    def hypothesis(self, carry: int | None) -> Hypothesis:
        word = "unbounded" if carry is None else str(carry)
        return Hypothesis(word, apply_overrides(self.base, [f"carry_bits={word}"]),
                          f"{self.base.name} --set carry_bits={word}")

    @property
    def formula(self) -> Formula:
        """The lemma that ``fewest`` carry bits suffice (the question; its
        parts, when proved in parts, are in ``parts``)."""
        return overflow_formula(self.base, self.k, self.fewest, self.domain)

    @property
    def proved_by(self) -> list[str]:
        """The solvers that proved the fewest's lemma: the whole lemma's, or
        every solver that proved a part (each part's in ``parts``)."""
        if self.parts:
            every = {s for p in self.parts for s in p.answer.proved_by}
            return sorted(every, key=lambda s: PROVERS.index(s) if s in PROVERS else len(PROVERS))
        return self.lemmas[self.fewest].proved_by

    @property
    def cross_checked(self) -> bool:
        if self.parts:
            return all(len(set(p.answer.proved_by)) >= 2 for p in self.parts)
        return len(set(self.lemmas[self.fewest].proved_by)) >= 2


def prove_carry_bits(base: ModelParams, solver: str = "portfolio",
                     timeout: float = service.DEFAULT_TIMEOUT, cross_check: bool = True,
                     prior: Vector | None = None) -> CarryProof:
    """From the fewest count the largest inputs do not overflow, move up
    until a count is proved (in parts, else whole); the count below it
    overflows (on those inputs, or by the lemma's SAT), and a witness shows
    that its outputs differ. A ``prior`` witness (an earlier result's) is
    tried before the solvers for one bit fewer."""
    check_single_block(base)
    t0 = time.monotonic()
    k, domain = base.block_size, Domain()
    est = ov.estimate(base, k, MAX_CARRY)
    carry, lemmas, parts = est.fewest_seen, {}, []
    if carry > 0:
        lemmas[carry - 1] = service.Answer(Status.SAT, "", [], [
            f"the largest inputs overflow a {carry - 1}-carry-bit register (concrete, no solver)"])
    while True:
        quick = k <= WHOLE_FIRST or est.bounds(carry) is None
        ans = _lemma(base, k, carry, domain, solver, timeout, cross_check, QUICK) if quick else None
        if ans is None or ans.status not in (Verdict.SAT, Verdict.UNSAT) or \
                (cross_check and len(set(ans.proved_by)) == 1):
            parts = prove_in_parts(base, k, domain, est, carry, solver, timeout, cross_check)
            if parts:
                lemmas[carry] = service.Answer(Status.UNSAT, "", [r for p in parts for r in p.answer.runs],
                                               [f"proved in {len(parts)} parts"])
                break
            ans = _lemma(base, k, carry, domain, solver, timeout, cross_check)
        lemmas[carry] = ans
        if ans.status == Verdict.UNSAT:
            break
        if carry >= MAX_CARRY:
            raise UserError(f"{base.name}: even {MAX_CARRY} carry bits overflow")
        carry += 1
    witness = None
    if carry > 0:
        witness = _witness(base, k, carry - 1, domain, solver, timeout, prior)
        if witness.verdict != Verdict.SAT:
            raise UserError(f"{base.name}: {carry - 1} carry bits overflow on some input, yet no "
                            f"input with different outputs was found ({witness.verdict}: "
                            f"{witness.reason})")
    return CarryProof(base, k, domain, carry, lemmas, witness, time.monotonic() - t0, parts=parts)


def part_statements(base: ModelParams, est: ov.Estimate, carry: int) -> list[tuple[str, str]]:
    """(name, statement) of each part of the lemma for ``carry`` (none when
    the parts do not apply): the bound of every aligned term, then the sum."""
    bounds = est.bounds(carry)
    if bounds is None:
        return []
    return [(f"term {i}", f"|aligned term {i}| <= {a}") for i, a in enumerate(bounds)] + \
        [("sum", f"{len(bounds)} terms within their bounds, added one at a time, stay inside a "
                 f"{carry}-carry-bit register")]


def prove_in_parts(base: ModelParams, k: int, domain: Domain, est: ov.Estimate, carry: int,
                   solver: str, timeout: float, cross_check: bool) -> list[Part]:
    """The lemma for ``carry`` in parts (tcsmt.search.overflow): every part
    UNSAT (each by two solvers with ``cross_check``), or [] when the parts
    do not apply, a bound does not hold, or a part has no answer in time."""
    statements, bounds = part_statements(base, est, carry), est.bounds(carry)
    if not statements or bounds is None or est.register is None:
        return []
    formulas = [ov.term_formula(base, k, i, a, domain) for i, a in enumerate(bounds)]
    formulas.append(ov.sum_formula(est.register, bounds, carry, base.name))
    names = _provers(solver)
    votes = 2 if cross_check and len(names) > 1 else 1
    t0 = time.monotonic()
    tags = [tag for tag, _ in statements]
    runs = _race_parts(tags, formulas, names[:votes], timeout, votes)
    left = [i for i, tag in enumerate(tags) if not _unsat(runs, tag, votes)]
    if left and not any(r.status == Status.SAT for r in runs) and len(names) > votes:
        runs += _race_parts([tags[i] for i in left], [formulas[i] for i in left], names,
                            timeout - (time.monotonic() - t0), votes, done=runs)
    parts = [Part(tag, what, f, service.verdict([r for r in runs if r.tag == tag], cross_check))
             for (tag, what), f in zip(statements, formulas)]
    return parts if all(p.answer.status == Verdict.UNSAT for p in parts) else []


def _unsat(runs, tag: str, votes: int) -> bool:
    return len({r.solver for r in runs if r.tag == tag and r.status == Status.UNSAT}) >= votes


def _race_parts(tags: list[str], formulas: list[Formula], names: list[str], timeout: float,
                votes: int, done=()) -> list:
    """The parts' formulas raced on ``names`` (the first provers: the other
    solvers are asked only about a part they leave unsettled, so which
    solvers prove a part does not depend on timing); a solver that already
    proved a part (in ``done``) is not asked again."""
    if timeout <= 0:
        return []
    proved = {(r.tag, r.solver) for r in done if r.status == Status.UNSAT}
    need = {tag: votes - sum(1 for t, _ in proved if t == tag) for tag in tags}
    settled: set[str] = set()

    def stop(run) -> bool:
        settled.add(run.tag)
        return run.status == Status.SAT or len(settled) == len(tags)

    jobs = [Job(f, s, tag) for s in names for tag, f in zip(tags, formulas) if (tag, s) not in proved]
    return service.race(jobs, timeout, stop=stop, unsat_votes=need)


def _provers(solver: str) -> list[str]:
    names, _ = service.choose_solvers(solver)
    if solver == "portfolio" and service.installed("boolector"):
        names = [*names, "boolector"]
    return sorted(names, key=lambda s: PROVERS.index(s) if s in PROVERS else len(PROVERS))


def _lemma(base, k, carry, domain, solver, timeout, cross_check, budget: float | None = None
           ) -> service.Answer:
    """The whole lemma for ``carry``; with a CPU ``budget`` per solver, the
    answer may be unknown (the caller then proves it in parts)."""
    formula = overflow_formula(base, k, carry, domain)
    if budget is not None:
        names = _provers(solver)[:2]
        runs = service.race([Job(formula, s, "", budget) for s in names], timeout,
                            unsat_votes=2 if cross_check and len(names) > 1 else 1)
        return service.verdict(runs, cross_check)
    ans = service.solve(formula, solver, timeout, cross_check)
    if ans.status not in (Verdict.SAT, Verdict.UNSAT):
        raise SolverTimeout(f"no answer on whether {carry} carry bits suffice for {base.name} "
                        f"within {timeout:g} s ({ans.reason})")
    return ans


def _witness(base, k, carry, domain, solver, timeout, prior: Vector | None) -> sep.Outcome:
    """Inputs on which ``carry`` carry bits and unbounded ones give different
    outputs; equal products (one multiplier) race the full formula. A prior
    witness that still separates them is taken without asking."""
    short = Hypothesis(str(carry), apply_overrides(base, [f"carry_bits={carry}"]),
                       f"{base.name} --set carry_bits={carry}")
    full = Hypothesis("unbounded", apply_overrides(base, ["carry_bits=unbounded"]),
                      f"{base.name} --set carry_bits=unbounded")
    hyps = [short, full]
    forms = [("equal-products", equal_products_formula(hyps, k, domain))]
    forms += sep.formulations(hyps, k, domain)
    if prior is not None and len(prior.a) == k and (0, 1) in separated_by(prior, hyps):
        return sep.Outcome(Verdict.SAT, forms[-1][1], vectors=[prior], tag="earlier result")
    if carry >= 2:      # sums of one or two products cannot overflow: leave those formulas out
        forms = [forms[0], forms[-1]]
    return diff.run_diff(hyps, k, domain, solver, timeout, forms=forms, order=_witness_order,
                         parallel=os.cpu_count() or 1)
    # not shrunk: an overflow needs every product large, little to simplify


def _witness_order(forms, names) -> list[Job]:
    """Each solver on every formula, the first solver first and Z3 before
    cvc5 (cvc5 is the slowest of the three on these sums)."""
    ranked = names[:1] + sorted(names[1:], key=lambda s: s != "z3")
    return [Job(f, s, tag, None) for s in ranked for tag, f in forms]


def equal_products_formula(hyps, k: int, domain: Domain) -> Formula:
    """Every product a0*b0 (one multiplier): large sums are easy to reach."""
    return sep.separation_formula(hyps, k, domain, tag="equal-products", equal=True)
