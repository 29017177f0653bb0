"""diff and equiv: inputs on which models give different bits, or a proof
that no input of the domain does.

The question is the separation formula of ``tcsmt.search.separation``
(some pair of hypotheses differs); diff races restricted formulations
beside it (fewer free products find witnesses sooner), equiv solves the
full formula only. Every witness is replayed on the concrete model; an
UNSAT answer is checked not to come from an empty input domain.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tcsmt.enums import Verdict
from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis, Pair
from tcsmt.smt import service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import Formula, build_formula


def check_comparable(pa: ModelParams, pb: ModelParams) -> None:
    """Both models read the same a, b and c formats and write the same d format."""
    for what, x, y in (("input", pa.in_format, pb.in_format), ("c", pa.c_format, pb.c_format),
                       ("output", pa.out_format, pb.out_format)):
        if x != y:
            raise UserError(f"{pa.name} and {pb.name} have different {what} formats "
                            f"({x} and {y}): only models of the same formats can be compared")


def default_k(*models: ModelParams) -> int:
    return max(p.block_size for p in models)


def domain_formula(p: ModelParams, k: int, domain: Domain) -> Formula:
    """Satisfiable exactly when the domain holds some input."""
    def build(I):
        a, b, c = sep.declare_inputs(I, p, k)
        return domain.constraints(I, p.fin, p.fc, a, b, c, p.fb)
    return build_formula(build, description=f"tcsmt domain k={k} {domain.describe()}")


def run_diff(hyps: list[Hypothesis], k: int, domain: Domain, solver: str = "portfolio",
             timeout: float = service.DEFAULT_TIMEOUT, cross_check: bool = False,
             forms: list[tuple[str, Formula]] | None = None, pairs: list[Pair] | None = None,
             order: Callable[[list[tuple[str, Formula]], list[str]], list[Job]] | None = None,
             parallel: int | None = None) -> sep.Outcome:
    """Race the formulations (``forms``, by default diff's) on the chosen
    solvers; replay a witness; on unsat, cross-check if asked and make sure
    the domain is not empty. ``pairs`` (indices into hyps, every pair by
    default) are the pairs a witness must separate one of. ``order``
    (forms, solvers) -> jobs sets which solver starts on which formula first."""
    t0 = time.monotonic()
    names, notes = service.choose_solvers(solver)
    forms = forms or sep.formulations(hyps, k, domain, pairs)
    jobs = order(forms, names) if order is not None else sep.default_jobs(forms, names)
    out = sep.race(jobs, forms, timeout, sep.separation_replay(hyps, k, domain, pairs),
                   cross_check, names, parallel)
    out.notes += notes
    if out.verdict == Verdict.UNSAT:
        out.notes += _refuse_empty_domain(hyps[0].params, k, domain, timeout)
    out.seconds = time.monotonic() - t0
    return out


def _refuse_empty_domain(p: ModelParams, k: int, domain: Domain, timeout: float) -> list[str]:
    """An unsat diff over an empty domain proves nothing: say so (UserError);
    a note when the solvers cannot tell."""
    if domain == Domain():
        return []                      # finite inputs: +0 everywhere is one
    answer = service.solve(domain_formula(p, k, domain), "portfolio", min(timeout, 30.0))
    if answer.status == Verdict.UNSAT:
        raise UserError(f"the input domain is empty (no inputs satisfy {domain.describe()}): "
                        "there is nothing to compare")
    if answer.status != Verdict.SAT:
        return [f"could not check that the domain holds any input ({answer.reason})"]
    return []
