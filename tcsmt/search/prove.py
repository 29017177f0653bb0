"""Proofs of sufficiency: how many carry bits an accumulator needs.

``prove_carry_bits`` finds the fewest carry bits k with which the block's
accumulator gives the same bits as an unbounded one for every finite input:

* sufficiency, by a lemma: no finite input makes the block's sum leave the
  range a k-carry register holds (the unbounded register's sum, which is
  exact, always fits). Modular addition then gives the k-bit register the
  very same sum, so every later stage, and the output, is the same. The
  lemma is UNSAT, proved by one solver and cross-checked by a second; it
  is far easier for solvers than comparing two rounded outputs;
* necessity: a witness on which k - 1 carry bits give different output
  bits from the unbounded accumulator, found by the solvers and replayed on
  the concrete model before it is written.

``prove_carry_bits`` returns a ``CarryProof``; tcsmt.report.documents
writes it as a result document whose hypotheses are k - 1, k and unbounded
carry bits, whose vector is the witness, and whose proof is the lemma's.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.enums import Verdict
from tcsmt.errors import SolverTimeout, UserError
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.search import diff
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Vector, separated_by
from tcsmt.smt import service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import Formula, build_formula

MAX_CARRY = 12


def overflow_formula(p: ModelParams, k: int, carry: int, domain: Domain) -> Formula:
    """Satisfiable when some input's block sum does not fit a register with
    ``carry`` carry bits (the sum taken from the unbounded accumulator)."""
    unbounded = apply_overrides(p, ["carry_bits=unbounded"])

    def build(I):
        a, b, c = sep.declare_inputs(I, p, k)
        sa, sb = sep.declare_scales(I, p, k)
        out = domain.constraints(I, p.fin, p.fc, a, b, c, p.fb)
        out += sep.scale_constraints(I, p, domain, sa, sb)
        trace: list = []
        datapath.dot(I, unbounded, a, b, c, trace=trace, sa=sa, sb=sb)
        sums = [x for name, x, _ in trace if name == "raw sum"]
        layouts = [x for name, x, _ in trace if name == "register"]
        overflows = []
        for total, (rl, ib, _) in zip(sums, layouts):     # every register of the block
            w = I.width(total)
            top = ib + carry + rl            # a carry-bit register holds [-2^top, 2^top)
            if top < w - 1:
                hi = I.const(1 << top, w)
                overflows.append(I.not_(I.and_(I.sle(I.neg(hi), total), I.slt(total, hi))))
        return out + [I.or_(*overflows) if overflows else I.bool_const(False)]

    return build_formula(build, description=f"tcsmt prove carry-bits {p.name}: a block sum "
                                            f"outside a {carry}-carry-bit register (k={k})")


def check_single_block(p: ModelParams) -> None:
    if p.normalisation != "block":
        raise UserError(f"{p.name} rounds after every addition: it has no block accumulator "
                        "whose carry bits could be counted")


@dataclass
class CarryProof:
    """The fewest carry bits and how it is known: the lemma's answer for
    every count asked (UNSAT: that many suffice), and the witness that one
    fewer gives other bits (None when the fewest is 0)."""
    base: ModelParams
    k: int
    domain: Domain
    fewest: int
    lemmas: dict[int, service.Answer]
    witness: sep.Outcome | None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def hypothesis(self, carry: int | None) -> Hypothesis:
        word = "unbounded" if carry is None else str(carry)
        return Hypothesis(word, apply_overrides(self.base, [f"carry_bits={word}"]),
                          f"{self.base.name} --set carry_bits={word}")

    @property
    def formula(self) -> Formula:
        """The lemma that proves ``fewest`` carry bits suffice."""
        return overflow_formula(self.base, self.k, self.fewest, self.domain)


def prove_carry_bits(base: ModelParams, solver: str = "portfolio",
                     timeout: float = service.DEFAULT_TIMEOUT, cross_check: bool = True,
                     prior: Vector | None = None) -> CarryProof:
    """Start at the count that holds any sum of the block's terms by their
    widths alone, move up while some input overflows, then down while one
    carry bit fewer still gives the same outputs. A ``prior`` witness (an
    earlier result's) is tried before the solvers for one bit fewer."""
    check_single_block(base)
    t0 = time.monotonic()
    k, domain = base.block_size, Domain()
    terms = k + (0 if base.c_placement == "late" else 1)
    carry = max(0, bits_for(terms) - 1)
    lemmas: dict[int, service.Answer] = {}
    while True:
        ans = _lemma(base, k, carry, domain, solver, timeout, cross_check)
        lemmas[carry] = ans
        if ans.status == Verdict.UNSAT:
            break
        if carry >= MAX_CARRY:
            raise UserError(f"{base.name}: even {MAX_CARRY} carry bits overflow")
        carry += 1
    witness = None
    while carry > 0:
        out = _witness(base, k, carry - 1, domain, solver, timeout, prior)
        if out.verdict == Verdict.SAT:
            witness = out
            break
        ans = _lemma(base, k, carry - 1, domain, solver, timeout, cross_check)
        lemmas[carry - 1] = ans
        if ans.status != Verdict.UNSAT:
            raise UserError(f"{base.name}: {carry - 1} carry bits overflow on some input, yet no "
                            f"input with different outputs was found ({out.verdict}: {out.reason})")
        carry -= 1
    return CarryProof(base, k, domain, carry, lemmas, witness, time.monotonic() - t0)


def bits_for(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _lemma(base, k, carry, domain, solver, timeout, cross_check) -> service.Answer:
    ans = service.solve(overflow_formula(base, k, carry, domain), solver, timeout, cross_check)
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
