"""diff and equiv: inputs on which models give different bits, or a proof
that no input of the domain does.

``diff_models`` (tcsmt diff, any number of models) asks for the fewest
vectors that separate every pair, as tcsmt find does for a property's
hypotheses; ``run_diff`` (tcsmt equiv, and the benchmarks) asks one
question about two models.

The question is the separation formula of ``tcsmt.search.separation``
(some pair of hypotheses differs); diff races restricted formulations
beside it (fewer free products find witnesses sooner), equiv solves the
full formula only. Every witness is replayed on the concrete model; an
UNSAT answer is checked not to come from an empty input domain.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tcsmt.enums import PairVerdict as PV
from tcsmt.enums import Verdict
from tcsmt.errors import FormatMismatch, UserError
from tcsmt.model.params import ModelParams
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.find import FindOutcome, PairVerdict, find_vectors
from tcsmt.search.vectors import Hypothesis, Pair, all_pairs, separated_by
from tcsmt.smt import service
from tcsmt.smt.service import Job
from tcsmt.smt.smtlib import Formula, build_formula


def check_comparable(pa: ModelParams, pb: ModelParams) -> None:
    """Both models read the same a, b and c formats and write the same d format."""
    for what, x, y in (("input", pa.in_format, pb.in_format), ("c", pa.c_format, pb.c_format),
                       ("output", pa.out_format, pb.out_format)):
        if x != y:
            raise FormatMismatch(f"{pa.name} and {pb.name} have different {what} formats "
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


# ---------------------------------------------------------------------------
# Several models: the fewest vectors that separate every pair
# ---------------------------------------------------------------------------

IDENTICAL = "identical circuits"


@dataclass
class ModelsDiff:
    """What ``diff_models`` found: the search over one hypothesis per
    distinct circuit (``found``), and which hypotheses share a circuit
    (``circuit[i]``: the index of hypothesis i's first twin)."""
    hyps: list[Hypothesis]
    circuit: list[int]
    found: FindOutcome | None
    seconds: float = 0.0

    @property
    def vectors(self) -> list:
        return self.found.vectors if self.found else []

    def pair_verdicts(self) -> list[PairVerdict]:
        """The verdict on every pair of ``hyps`` no vector separates: the
        same circuit (proved by construction), or its circuits' verdict."""
        done = set().union(*(separated_by(v, self.hyps) for v in self.vectors)) if self.vectors else set()
        reps = sorted(set(self.circuit))
        by_rep = {}
        for pv in self.found.pairs if self.found else []:
            by_rep[(reps[pv.pair[0]], reps[pv.pair[1]])] = pv
        out = []
        for i, j in all_pairs(len(self.hyps)):
            ri, rj = self.circuit[i], self.circuit[j]
            if ri == rj:
                out.append(PairVerdict((i, j), PV.UNSAT, [IDENTICAL],
                                       "every parameter that changes the arithmetic is equal"))
            elif (i, j) not in done and (ri, rj) in by_rep:
                pv = by_rep[(ri, rj)]
                out.append(PairVerdict((i, j), pv.verdict, list(pv.proved_by), pv.reason, pv.smt2_sha256))
        return out


def diff_models(hyps: list[Hypothesis], k: int, domain: Domain, solver: str = "portfolio",
                timeout: float = service.DEFAULT_TIMEOUT, cross_check: bool = False, count: int = 1,
                readable: bool = True) -> ModelsDiff:
    """The fewest vectors that separate every separable pair of models
    (tcsmt.search.find, shrunk and replayed), then more, each unlike the
    earlier ones, up to ``count`` (tcsmt.search.varied). Models whose
    arithmetic parameters are equal are one circuit: no solver is asked
    about them."""
    from tcsmt.search.varied import more_vectors
    t0 = time.monotonic()
    service.choose_solvers(solver)          # a missing solver is an error before any work
    seen: dict[str, int] = {}
    circuit = [seen.setdefault(repr(sorted(h.params.parameter_dict().items())), i)
               for i, h in enumerate(hyps)]
    reps = [hyps[i] for i in sorted(set(circuit))]
    found = None
    if len(reps) > 1:
        found = find_vectors(reps, k, domain, solver, timeout, readable, cross_check)
        if count > len(found.vectors):
            found = more_vectors(found, count, solver, timeout, readable)
        if not found.vectors and any(pv.verdict == PV.UNSAT for pv in found.pairs):
            _refuse_empty_domain(reps[0].params, k, domain, timeout)
    return ModelsDiff(hyps, circuit, found, time.monotonic() - t0)
