"""A pair of hypotheses proved equal by sweeping (tcsmt.smt.sweep).

Where the whole question "do the two ever differ?" gets no answer in time,
both dot products are built into one builder over the same inputs of the
domain and the second is merged into the first, lemma by lemma, each lemma
UNSAT by two solvers. The pair is then inseparable on the domain; the
proof is the list of lemmas (their formulas are what --emit-smt2 writes).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import service, sweep
from tcsmt.smt.terms import SmtInterp

METHOD = "sweep"

LEMMA_BUDGET = 20.0
"""CPU seconds one solver may spend on one lemma."""

MIN_TIMEOUT = 600.0
"""Wall seconds a sweep may take at least, whatever the query's timeout:
it is a proof of hundreds of small lemmas, tried after the whole
formula had no answer in that timeout."""


@dataclass
class PairProof:
    """The lemmas that merged one dot product into the other."""
    lemmas: list[sweep.Lemma] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def proved_by(self) -> list[str]:
        return sorted({s for lem in self.lemmas for s in lem.proved_by})

    @property
    def sha256(self) -> str:
        """One digest of every lemma's formula, in the order proved."""
        h = hashlib.sha256()
        for lem in self.lemmas:
            h.update(lem.formula.sha256.encode())
        return h.hexdigest()

    def summary(self) -> dict:
        """What a result file keeps of the proof (run.pairs[].parts)."""
        cpu: dict[str, float] = {}
        for lem in self.lemmas:
            for s, v in lem.cpu_seconds.items():
                cpu[s] = cpu.get(s, 0.0) + v
        return {"method": METHOD, "lemmas": len(self.lemmas), "verdict": "unsat",
                "proved_by": self.proved_by, "cut": sum(lem.cut for lem in self.lemmas),
                "cpu_seconds": {s: round(v, 2) for s, v in sorted(cpu.items())},
                "sha256": self.sha256}


def prove_pair(hx: Hypothesis, hy: Hypothesis, k: int, domain: Domain, solver: str = "portfolio",
               timeout: float = service.DEFAULT_TIMEOUT) -> PairProof | None:
    """The proof that hx and hy give the same output on every input of the
    domain, or None (no two solvers, a lemma unanswered, time out)."""
    names = service.choose_solvers(solver)[0]
    if len(names) < 2:
        names = service.available_solvers()
    if len(names) < 2:
        return None
    I = SmtInterp()
    (a, b, c, sa, sb, mask), keep = sep.inputs_in_domain(I, hx.params, k, domain)
    x, y = (datapath.dot(I, h.params, a, b, c, sa=sa, sb=sb, mask=mask) for h in (hx, hy))
    got = sweep.sweep(I, keep, x, y, names, LEMMA_BUDGET, timeout)
    if not got.equal:
        return None
    return PairProof(got.lemmas, got.seconds)
