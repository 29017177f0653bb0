"""What a plan's build and identification share: classes of hypotheses
(equal outputs on every vector run), the arrays of a list of vectors, and
the limits of the solver search on open classes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcsmt.search.vectors import Vector

SEARCH_TIMEOUT = 4.0       # seconds of solver search per open class and round
MAX_ROUNDS = 6
MAX_SEARCH_HYPS = 6        # circuits of one class put into one solver query
PROOF_TIMEOUT = 600.0      # seconds of sweeping (tcsmt.search.sweeping) for one open class
LEMMA_TIMEOUT = 60.0       # seconds for one floor lemma's formula (tcsmt.identify.lemmas)


@dataclass
class PlanClass:
    members: list[int]                 # indices of hypotheses in the space
    status: str = "single"             # single, identical, proved, open
    proved_by: list[str] = field(default_factory=list)
    note: str = ""
    proof: list[dict] = field(default_factory=list)   # a sweep's summaries (one a pair) or the lemmas

    def record(self) -> dict:
        d = {"members": self.members, "status": self.status}
        if self.proved_by:
            d["proved_by"] = self.proved_by
        if self.proof:
            d["proof"] = self.proof
        if self.note:
            d["note"] = self.note
        return d


def say(log, text: str) -> None:
    if log:
        log(text)


def classes_of(outputs: np.ndarray, members: list[int] | None = None) -> list[list[int]]:
    """Hypotheses (rows of outputs, or the given rows) grouped by equal rows,
    in order of their first member."""
    rows = range(outputs.shape[0]) if members is None else members
    groups: dict[bytes, list[int]] = {}
    for i in rows:
        groups.setdefault(outputs[i].tobytes(), []).append(int(i))
    return list(groups.values())


def vector_arrays(vecs: list[Vector]):
    """a, b, c and the scales (None without) of vectors as uint64 arrays."""
    a = np.array([v.a for v in vecs], dtype=np.uint64)
    b = np.array([v.b for v in vecs], dtype=np.uint64)
    c = np.array([v.c for v in vecs], dtype=np.uint64)
    if not vecs[0].sa:
        return a, b, c, None, None
    return (a, b, c, np.array([v.sa for v in vecs], dtype=np.uint64),
            np.array([v.sb for v in vecs], dtype=np.uint64))
