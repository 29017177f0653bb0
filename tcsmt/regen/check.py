"""``tcsmt regen --check``: which committed files the current code would
write differently, found without a solver.

Every query of the plan restates its file (tcsmt.regen.restate: the file's
answers through the document builder the query uses, its witnesses
replayed) and compares the stable content. A file is stale when

* it is missing (a property now applies, a model was added),
* its stable content differs from the restated document (the question, the
  hypotheses and their parameters, skipped properties, the schema, the
  solvers' versions, a vector's outputs or what it separates),
* its answers no longer fit the question (a hypothesis renamed, a witness
  that no longer holds),
* or it is an orphan: a file in a folder regen writes that no query of the
  plan writes any more (a property that stopped applying). Orphans are only
  looked for when the whole plan is checked.

The local cache keys (ROOT/.cache, not committed) play no part: the check
gives the same answer on a fresh clone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tcsmt.fileio import json_object_or_none
from tcsmt.regen import restate as rs
from tcsmt.regen.jobs import Job, Plan


@dataclass
class Stale:
    path: Path
    why: str

    def line(self) -> str:
        return f"{self.path}: {self.why}"


def check_job(job: Job) -> Stale | None:
    doc = json_object_or_none(job.path)
    if doc is None:
        return Stale(job.path, "missing: regen writes it" if not job.path.exists()
                     else "not a readable JSON object")
    if job.check is not None:
        try:
            job.check(doc)
        except Exception as e:  # noqa: BLE001 - any refusal of the document is the reason
            return Stale(job.path, f"not a valid document: {e}")
    why = rs.stale_reason(job.restate, doc) if job.restate is not None else None
    return Stale(job.path, why) if why else None


def orphans(plan: Plan, folders: list[Path]) -> list[Stale]:
    """Result files in ``folders`` that no query of the plan writes."""
    written = {job.path.resolve() for job in plan.jobs}
    out = []
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            if path.resolve() not in written:
                out.append(Stale(path, "orphan: no query of tcsmt regen writes it any more"))
    return out


def regen_folders(plan: Plan) -> list[Path]:
    """The folders whose every JSON file regen writes: each query's folder."""
    return sorted({job.path.parent for job in plan.jobs})


def check_plan(plan: Plan, whole: bool = True, progress=None) -> list[Stale]:
    """Every stale file of the plan (and, for the ``whole`` plan, every
    orphan); ``progress(name, done, total)`` after each file."""
    out = []
    for i, job in enumerate(plan.jobs):
        got = check_job(job)
        if got is not None:
            out.append(got)
        if progress:
            progress(job.name, i + 1, len(plan.jobs))
    if whole:
        out += orphans(plan, regen_folders(plan))
    return out
