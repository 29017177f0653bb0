"""More vectors than the fewest: up to ``count`` vectors for the same pairs,
each unlike every earlier one.

After the fewest vectors are found (tcsmt.search.find), each round asks the
same search again over the input domain less the earlier vectors
(``Avoiding``): first inputs whose c and whose products both differ from
every earlier vector's, then, when there are none, inputs whose products
differ. The pool, the solvers, shrinking and replay all read the domain, so
every vector of a round is as readable, and as checked, as the first.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from tcsmt.search.domain import Domain
from tcsmt.search.find import FindOutcome, find_vectors
from tcsmt.search.vectors import Hypothesis, Pair, Vector

ROUND_TIMEOUT = 20.0
"""Seconds per solver question after the first round: a round that finds
nothing in that time ends the search (it proves nothing)."""


@dataclass(frozen=True)
class Avoiding(Domain):
    """The domain less the inputs too close to earlier vectors: the same
    a and b as one of them, or (``c_too``) the same c."""
    avoid: tuple[Vector, ...] = ()
    c_too: bool = True

    def describe(self) -> dict:
        d = super().describe()
        d.pop("avoid"), d.pop("c_too")
        return d

    def constraints(self, I, fin, fc, a, b, c, fb=None) -> list:
        out = super().constraints(I, fin, fc, a, b, c, fb)
        fb = fb or fin
        for v in self.avoid:
            same = [I.eq(x, I.const(y, fin.bits)) for x, y in zip(a, v.a)]
            same += [I.eq(x, I.const(y, fb.bits)) for x, y in zip(b, v.b)]
            out.append(I.not_(I.and_(*same)))
            if self.c_too:
                out.append(I.not_(I.eq(c, I.const(v.c, fc.bits))))
        return out


def avoiding(domain: Domain, vectors: list[Vector], c_too: bool) -> Avoiding:
    base = {f.name: getattr(domain, f.name) for f in fields(Domain)}
    return Avoiding(**base, avoid=tuple(vectors), c_too=c_too)


def more_vectors(first: FindOutcome, count: int, solver: str = "portfolio",
                 timeout: float = ROUND_TIMEOUT, readable: bool = True) -> FindOutcome:
    """``first`` with vectors added, round after round, until there are
    ``count`` or a round finds none; each new vector separates some pair
    the first vectors separate. ``found_by`` grows with them."""
    pairs: list[Pair] = sorted(first.separated)
    while len(first.vectors) < count and pairs:
        for c_too in (True, False):
            got = find_vectors(first.hyps, first.k, avoiding(first.domain, first.vectors, c_too), solver,
                               min(timeout, ROUND_TIMEOUT), readable, pairs=pairs)
            first.runs += got.runs
            first.queries += got.queries
            if got.vectors:
                break
        if not got.vectors:
            break
        take = count - len(first.vectors)
        first.vectors += got.vectors[:take]
        first.found_by += got.found_by[:take]
    return first


__all__ = ["Avoiding", "Hypothesis", "more_vectors"]
