"""Two hypotheses proved equal block by block: induction over the chain.

A dot product longer than one block is a chain (tcsmt.datapath.chain.dot):
block j's step takes its products' inputs and a c (the dot's c for block
0, block j-1's result after it) and gives bits of result_format. When two
hypotheses differ only in what one block's step computes (the chaining
"recursive" or "separate", how a block adds its c), the whole formula is
hard but each step is small. The proof has parts, each a formula whose
UNSAT is a fact:

* structure: ``dot`` run with every block's step replaced by a free word
  ``step{j}`` (one per distinct argument list, as an uninterpreted function
  would) builds the very same term under both hypotheses. Then the two
  chains differ only through their steps: the tool establishes it from the
  model, no one asserts it. The formula folds to ``(assert false)``.
* block j: on the arguments that block j gets in that chain (inputs of the
  domain, its c made from the result of the block before: that block's real
  step under the first hypothesis, its own c free, an over-approximation of
  what the chain delivers), the real step of one hypothesis gives other
  bits than the other's. UNSAT: the steps agree there. By induction the
  steps' results are equal block after block, and every c a block gets in
  the real chain is one of the values the lemma covers.

By induction over the blocks the steps' results agree, so the dot products
agree on every input of the domain. A SAT part is no witness (the free c
may be a value no block makes): the pair is then not proved this way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, is_dataclass

from tcsmt import datapath
from tcsmt.datapath.chain import block_step
from tcsmt.datapath.terms import result_format
from tcsmt.enums import Status, Verdict
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import cut, service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import Formula, build_formula
from tcsmt.smt.terms import SmtInterp

STRUCTURE = "structure"


def identity(x):
    """A hashable identity of a step's argument: SMT terms by their id
    (hash-consed: equal ids are the same term), Terms field by field."""
    if isinstance(x, (list, tuple)):
        return tuple(identity(y) for y in x)
    if is_dataclass(x) and not isinstance(x, type):
        return tuple(identity(getattr(x, f.name)) for f in fields(x))
    if hasattr(x, "id") and hasattr(x, "width"):
        return ("term", x.id)
    return x


class FreeSteps:
    """A ``step`` for ``dot``: each distinct argument list gets a free word
    ``step{n}`` of result_format's width. ``check`` (a pair of models), when
    given, also builds both models' real steps on the arguments of step
    ``check_at`` and keeps them in ``real``; the step before it is then the
    first model's real step (its own c free), so the c of step ``check_at``
    is a value a block makes (a flushed, rounded result), not any bits."""

    def __init__(self, check=None, check_at: int = -1):
        self.made: dict = {}
        self.check, self.check_at = check, check_at
        self.real: tuple | None = None

    def __call__(self, I, p, a, b, sa, sb, c_of, ew, single=False, trace=None, ids=None):
        c = c_of()
        width = result_format(p).bits
        key = (identity((a, b, sa, sb, c, single)), width, ew)
        if key not in self.made:
            n = len(self.made)
            self.made[key] = I.var(f"step{n}", width)
            if n == self.check_at - 1 and self.check is not None:   # the block before: its real step
                self.made[key] = block_step(I, self.check[0], a, b, sa, sb, lambda: c, ew, single)
            if n == self.check_at and self.check is not None:
                self.real = tuple(block_step(I, q, a, b, sa, sb, lambda: c, ew, single)
                                  for q in self.check)
        return self.made[key]


def structure_formula(hx: Hypothesis, hy: Hypothesis, k: int, domain: Domain) -> tuple[Formula, int]:
    """The two chains with free steps, asked to differ, and the number of
    distinct steps. Folds to false exactly when the chains are one term."""
    steps = FreeSteps()

    def build(I):
        (a, b, c, sa, sb, mask), out = sep.inputs_in_domain(I, hx.params, k, domain)
        dots = [datapath.dot(I, h.params, a, b, c, sa=sa, sb=sb, mask=mask, step=steps)
                for h in (hx, hy)]
        return out + [I.not_(I.eq(*dots))]

    f = build_formula(build, description=f"tcsmt: {hx.id} and {hy.id} with every block step free "
                                         f"(k={k}, domain {domain.describe()})")
    return f, len(steps.made)


def step_terms(hx: Hypothesis, hy: Hypothesis, k: int, domain: Domain, j: int):
    """Block step j of the chain (its c from the free result of the step
    before) under both hypotheses, built into one SmtInterp: (the domain's
    constraints, x's step, y's step, the Bool that they differ)."""
    steps = FreeSteps((hx.params, hy.params), j)
    I = SmtInterp()
    (a, b, c, sa, sb, mask), out = sep.inputs_in_domain(I, hx.params, k, domain)
    datapath.dot(I, hx.params, a, b, c, sa=sa, sb=sb, mask=mask, step=steps)
    assert steps.real is not None
    x, y = steps.real
    return out, x, y, I.not_(I.eq(x, y))


def step_formula(terms, cut_at: set[int], description: str) -> Formula:
    """The step's two results asked to differ, the nodes of ``cut_at``
    (tcsmt.smt.cut) free: UNSAT proves they agree."""
    keep, _, _, diff = terms
    return build_formula(lambda I: cut.rebuild(I, [*keep, diff], cut_at), description=description)


@dataclass
class PartAnswer:
    """One part of a decomposed proof: its name, formula, verdict, the
    solvers that proved it and the CPU seconds each took, and how many
    times its cut was lowered before the proof."""
    name: str
    formula: Formula
    verdict: str
    proved_by: list[str] = field(default_factory=list)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    refinements: int = 0

    def summary(self) -> dict:
        return {"part": self.name, "verdict": str(self.verdict), "proved_by": self.proved_by,
                "cpu_seconds": {s: round(v, 2) for s, v in self.cpu_seconds.items()},
                "refinements": self.refinements, "sha256": self.formula.sha256}


def prove_step(name: str, terms, description: str, names: list[str], timeout: float,
               budget: float) -> PartAnswer | None:
    """One step's equality with its shared part cut (tcsmt.smt.cut): at the
    narrowest cut between the multipliers and where the two computations
    part; while the first solver finds the results apart there (no witness:
    the cut values may be ones the shared part never makes), at the
    narrowest cut below the last one, keeping the logic between (its
    flushes and roundings) exact. Proved when the first two solvers both
    answer UNSAT; None when no proof comes within ``timeout``."""
    keep, x, y, _ = terms
    t0, lowered, above = time.monotonic(), 0, set[int]()
    while time.monotonic() - t0 < timeout:
        at = cut.narrowest(x, y, above)
        f = step_formula(terms, at, f"{description} (cut at {len(at)} shared nodes)")
        left = max(timeout - (time.monotonic() - t0), 1.0)
        first = service.race([Job(f, names[0], name, budget)], left)[0]
        if first.status == Status.SAT and at:
            above, lowered = cut.upward(at, [x, y]), lowered + 1
            continue
        if first.status != Status.UNSAT:
            return None
        left = max(timeout - (time.monotonic() - t0), 1.0)
        second = service.race([Job(f, names[1], name, budget)], left)[0]
        if second.status != Status.UNSAT:
            return None
        return PartAnswer(name, f, Verdict.UNSAT, [first.solver, second.solver],
                          {first.solver: first.cpu, second.solver: second.cpu}, lowered)
    return None


def parts(hx: Hypothesis, hy: Hypothesis, k: int, domain: Domain) -> tuple[Formula, list] | None:
    """The structure formula and every block step's terms, or None when the
    chains differ outside their steps (or there is one block)."""
    f, n = structure_formula(hx, hy, k, domain)
    if not f.trivially_unsat or n < 2:
        return None
    return f, [step_terms(hx, hy, k, domain, j) for j in range(n)]


STEP_BUDGET = 120.0
"""CPU seconds one solver may spend on one cut of one step."""


def prove(hx: Hypothesis, hy: Hypothesis, k: int, domain: Domain, solver: str = "portfolio",
          timeout: float = service.DEFAULT_TIMEOUT) -> list[PartAnswer] | None:
    """Every part proved by two solvers (UNSAT each), or None when the
    decomposition does not apply or some part is not proved."""
    got = parts(hx, hy, k, domain)
    names = service.choose_solvers(solver)[0]
    if len(names) < 2:
        names = service.available_solvers()
    if got is None or len(names) < 2:
        return None
    structure, steps = got
    answers = [PartAnswer(STRUCTURE, structure, Verdict.UNSAT, ["identical formulas"])]
    for j, terms in enumerate(steps):
        ans = prove_step(f"block {j}", terms, f"tcsmt: block step {j} of {hx.id} and {hy.id}, its c "
                         f"free (k={k}, domain {domain.describe()})", names, timeout, STEP_BUDGET)
        if ans is None:
            return None
        answers.append(ans)
    return answers
