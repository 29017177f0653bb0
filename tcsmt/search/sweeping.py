"""A pair of hypotheses proved equal by sweeping (tcsmt.smt.sweep).

Where the whole question "do the two ever differ?" gets no answer in time,
both dot products are built into one builder over the same inputs of the
domain and the second is merged into the first, lemma by lemma, each lemma
UNSAT by two solvers. The pair is then inseparable on the domain; the
proof is the list of lemmas (their formulas are what --emit-smt2 writes).
Two chains that differ only inside their block steps (the structure part
of tcsmt.search.blockwise folds) are swept step by step instead: each
step's two results on its own inputs and a c from the step before, which
proves the chains equal by induction over the blocks.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

from tcsmt import datapath
from tcsmt.search import blockwise
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import cut, service, sweep
from tcsmt.smt.terms import SmtInterp

METHOD = "sweep"

LEMMA_BUDGET = 60.0
"""CPU seconds one solver may spend on one lemma."""

MIN_TIMEOUT = 1800.0
"""Wall seconds a sweep may take at least, whatever the query's timeout:
it is a proof of hundreds of small lemmas, tried after the whole
formula had no answer in that timeout."""


@dataclass
class PairProof:
    """The lemmas that merged one dot product into the other."""
    lemmas: list[sweep.Lemma] = field(default_factory=list)
    seconds: float = 0.0
    blocks: int = 0              # block steps swept one by one (0: the whole dot products)

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
        blocks = {"blocks": self.blocks} if self.blocks else {}
        return {"method": METHOD, **blocks, "lemmas": len(self.lemmas), "verdict": "unsat",
                "proved_by": self.proved_by, "cut": sum(lem.cut for lem in self.lemmas),
                "cpu_seconds": {s: round(v, 2) for s, v in sorted(cpu.items())},
                "sha256": self.sha256}


def prove_pair(hx: Hypothesis, hy: Hypothesis, k: int, domain: Domain, solver: str = "portfolio",
               timeout: float = service.DEFAULT_TIMEOUT) -> PairProof | None:
    """The proof that hx and hy give the same output on every input of the
    domain, or None (no two solvers, a lemma unanswered, time out). When
    the two chains differ only inside their block steps
    (tcsmt.search.blockwise: the structure part folds), each step is swept
    on its own (induction over the blocks); else the whole dot products."""
    names = service.choose_solvers(solver)[0]
    if len(names) < 2:
        names = service.available_solvers()
    if len(names) < 2:
        return None
    t0 = time.monotonic()
    parts = blockwise.parts(hx, hy, k, domain)
    if parts is not None:
        return _by_blocks(parts[1], names, timeout, t0)
    I = SmtInterp()
    (a, b, c, sa, sb, mask), keep = sep.inputs_in_domain(I, hx.params, k, domain)
    x, y = (datapath.dot(I, h.params, a, b, c, sa=sa, sb=sb, mask=mask) for h in (hx, hy))
    got = sweep.sweep(I, keep, x, y, names, LEMMA_BUDGET, timeout)
    if not got.equal:
        return None
    return PairProof(got.lemmas, got.seconds)


def _by_blocks(steps: list, names: list[str], timeout: float, t0: float) -> PairProof | None:
    """Every block step swept (blockwise.step_terms: the step's c from the
    step before, its own c free), in its own builder."""
    proof = PairProof(blocks=len(steps))
    for keep, x, y, _ in steps:
        left = timeout - (time.monotonic() - t0)
        if left <= 0:
            return None
        I = SmtInterp()
        *kept, x2, y2 = cut.rebuild(I, [*keep, x, y], set())
        got = sweep.sweep(I, kept, x2, y2, names, LEMMA_BUDGET, left)
        if not got.equal:
            return None
        proof.lemmas += got.lemmas
    proof.seconds = time.monotonic() - t0
    return proof
