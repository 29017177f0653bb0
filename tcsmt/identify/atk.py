"""Rows of another k in an observations file, judged at their own k.

A device run keeps rows of a second k where rivals differ only there
(tcsmt.identify.otherk: a launch of an instruction of that k); the file
marks them with their k (tcsmt.observed.observations: ObservationSet.other).
Replaying the file, the hypotheses the rows of the file's k leave are run
on those rows at their own k, and those that miss one are dropped.
"""

from __future__ import annotations

import numpy as np

from tcsmt.observed.observations import Observation, ObservationSet


def arrays(rows: list[Observation], k: int, scaled: bool):
    """a, b [N, k], c, d [N] and the scales of rows of one k."""
    n = len(rows)
    a = np.array([r.a for r in rows], dtype=np.uint64).reshape(n, k)
    b = np.array([r.b for r in rows], dtype=np.uint64).reshape(n, k)
    c = np.array([r.c for r in rows], dtype=np.uint64)
    d = np.array([r.d for r in rows], dtype=np.uint64)
    sa = np.array([r.scale_a for r in rows], dtype=np.uint64).reshape(n, -1) if scaled else None
    sb = np.array([r.scale_b for r in rows], dtype=np.uint64).reshape(n, -1) if scaled else None
    return a, b, c, d, sa, sb


def first_miss(p, obs: ObservationSet) -> tuple[int, Observation, int] | None:
    """(k, the first row of another k p does not reproduce, p's d there),
    None when p reproduces them all."""
    from tcsmt.sim.batch import dot_batch
    for k, rows in sorted(obs.other.items()):
        a, b, c, d, sa, sb = arrays(rows, k, obs.fscale is not None)
        mine = dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb)
        bad = np.nonzero(mine != d)[0]
        if len(bad):
            return k, rows[int(bad[0])], int(mine[int(bad[0])])
    return None


def keep_at_own_k(models, consistent: list[int], obs: ObservationSet) -> tuple[list[int], dict | None]:
    """The hypotheses of ``consistent`` that reproduce every row of another
    k; when none does, a failure record naming the first row the first of
    them misses (tcsmt.identify.report prints it like any other)."""
    if not obs.other:
        return consistent, None
    misses = {i: first_miss(models[i], obs) for i in consistent}
    kept = [i for i in consistent if misses[i] is None]
    if kept or not consistent:
        return kept, None
    from tcsmt.identify.narrow import ordered
    i = consistent[0]
    k, row, d = misses[i]           # type: ignore[misc]
    rows = sum(len(r) for r in obs.other.values())
    f = obs.fout
    pair = np.array([d, row.d], dtype=np.uint64)
    nan = any(f.classify(int(x)) == "nan" for x in pair)
    ulps = None if nan else int(abs(np.diff(ordered(pair, f))[0]))
    return [], {"row": row.index, "index": row.index, "observed": f.hex(row.d), "k": k,
                "rows_run": len(obs.rows) + rows,
                "closest": [{"hypothesis": models[i].name, "same_outputs": len(consistent),
                             "rows_matched": len(obs.rows), "rows": len(obs.rows) + rows,
                             "max_ulps": ulps, "max_bits_differing": bin(d ^ row.d).count("1"),
                             "first_mismatch": row.index, "at_failing_row": f.hex(d)}]}


def other_counts(obs: ObservationSet) -> dict[str, int]:
    """Rows per k other than the file's, for the report."""
    return {str(k): len(rows) for k, rows in sorted(obs.other.items())}
