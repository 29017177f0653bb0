"""Regenerating every result: every property on every shipped architecture,
the carry-bit proofs and the case studies.

``tcsmt.regen.plan.plan_jobs`` lists the queries; each has a cache key, the sha256 of
everything its answer depends on: the question (property, hypotheses with
all their parameters, k, domain, search settings), the solvers (which ones,
their versions, the timeout) and the source of the code that computes it.
A query whose key is the one recorded for its file in ``ROOT/.cache`` is
not run again, unless its file holds an unknown (no answer in time is never
a cache hit). The rest run through ``tcsmt.runner`` (local worker processes,
or the workers of a Dask cluster: the same jobs, the same keys), which
return documents; this process writes each file: atomically, and only when
its stable content changed (``tcsmt.report.results.write_result``), so an
unchanged result is left byte for byte as it was. A result that was proved
and comes back unknown is not written: it is reported as "lost" and the run
exits non-zero. Every search starts from the vectors of the file it
rewrites (the document travels with the job, so a worker on another
machine starts from them too), so a rerun keeps them whichever solver would
win a race.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tcsmt import runner
from tcsmt.enums import FileStatus, Verdict
from tcsmt.errors import AnswersLost, UserError
from tcsmt.fileio import json_object_or_none, write_json_atomic
from tcsmt.processes import interrupt_after
from tcsmt.regen import restate as rs
from tcsmt.report.answers import answers
from tcsmt.report.results import SOLVER_PACKAGES, solver_versions, write_result

PACKAGE = Path(__file__).resolve().parent.parent
CODE_ROOMS = ("datapath", "model", "search", "smt", "properties", "report", "sim", "interp")
"""The rooms of tcsmt whose source every query's answer depends on."""
CACHE = ".cache/regen-keys.json"
MODELS = ("blackwell-e2m1-fp32", "blackwell-e2m3-fp32", "blackwell-e3m2-fp32",
          "blackwell-e4m3-e5m2-fp32", "hopper-e4m3-fp16",
          "blackwell-nvfp4", "blackwell-mxf4", "blackwell-mxf8f6f4-e4m3",
          "ampere-s4-s32", "blackwell-u8-s8-s32-satfinite")
"""Models regen covers beside each architecture's default (written under
results/<model>/): one of each kind of arithmetic that no default has,
tcgen05.mma kind::f8f6f4 with fp4 (e2m1), both fp6 formats and a mixed A/B
pair, and fp8 to fp16 (Hopper's wgmma f16 D); and the block-scaled kinds of
tcgen05.mma: NVFP4 (mxf4nvf4, ue4m3 per 16, exact groups of 16), mxf4
(ue8m0 per 32, groups of 16) and mxf8f6f4 with e4m3 (ue8m0 per 32, no
groups). RTX Blackwell's block-scaled models have the same parameters.
Integer models beside the s8:s32 one each architecture's saturation
question takes: 4-bit inputs (K = 64) and mixed signedness with .satfinite
(the only property that applies to them is saturation)."""


@dataclass
class Job:
    name: str                     # "ampere/rounding"
    path: Path
    key: str
    run: Callable[..., dict]      # run(prior=earlier document or None); picklable: a
    #                               module-level function with bound args
    check: Callable[[dict], None] | None = None    # validates the document (default: tcsmt-result)
    restate: Callable[[dict], dict] | None = None  # the file's answers -> the document the
    #                                                current code writes (tcsmt.regen.restate)


@dataclass
class Outcome:
    name: str
    status: FileStatus
    seconds: float = 0.0
    verdict: str = ""
    note: str = ""


@dataclass
class Plan:
    root: Path
    jobs: list[Job] = field(default_factory=list)
    skipped: list[Outcome] = field(default_factory=list)   # not applicable, with the reason


def code_fingerprint(extra: Sequence[Path] = ()) -> str:
    """The sha256 of the source of CODE_ROOMS (and ``extra`` files)."""
    h = hashlib.sha256()
    for room in CODE_ROOMS:
        for f in sorted((PACKAGE / room).rglob("*.py")):
            h.update(str(f.relative_to(PACKAGE)).encode() + f.read_bytes())
    for p in extra:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def solver_setting(solver: str, timeout: float) -> dict:
    """What about the solvers a cached answer depends on (every proof regen
    writes is cross-checked by a second solver)."""
    return {"solver": solver, "timeout": timeout, "versions": solver_versions(SOLVER_PACKAGES),
            "cross_check": True}


def cache_key(question: dict, code: str) -> str:
    text = json.dumps({"question": question, "code": code}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------
# The queries
# ---------------------------------------------------------------------------

def run_property_job(prop_name: str, arch: str, timeout: float, solver: str,
                     prior: dict | None = None) -> dict:
    from tcsmt.properties.run import run_named
    return run_named(prop_name, arch, timeout=timeout, solver=solver, prior=prior, cross_check=True,
                     command=find_command(prop_name, arch))


def run_prove_job(arch: str, timeout: float, solver: str, prior: dict | None = None) -> dict:
    from tcsmt.model.choose import choose
    from tcsmt.report.documents import carry_proof_document, prior_vectors
    from tcsmt.search.prove import prove_carry_bits
    old = prior_vectors(prior) if prior else []
    proof = prove_carry_bits(choose(arch), solver, timeout, True, old[0] if old else None)
    return carry_proof_document(proof, prove_command(arch))


def find_command(prop_name: str, arch: str) -> str:
    return f"tcsmt find {prop_name} --arch {arch}"


def prove_command(arch: str) -> str:
    return f"tcsmt prove carry-bits --arch {arch}"


# ---------------------------------------------------------------------------
# Running them
# ---------------------------------------------------------------------------

def has_unknown(doc: dict | None) -> bool:
    """Whether a document holds an unknown at any level: its verdict, the
    one vector for all pairs, a lemma, a pair, a gap (tcsmt.report.answers)."""
    if not doc:
        return True
    return any(state == Verdict.UNKNOWN for state in answers(doc).values())


class Cache:
    """The cache keys of the files under a results root (not committed)."""

    def __init__(self, root: Path):
        self.path = Path(root) / CACHE
        self.keys = json_object_or_none(self.path) or {}

    def hit(self, job: Job) -> bool:
        """The key recorded for the file is the job's, the file holds no
        unknown, and it is what the current code writes with its answers."""
        if self.keys.get(str(job.path)) != job.key:
            return False
        doc = json_object_or_none(job.path)
        return not has_unknown(doc) and (job.restate is None or rs.stale_reason(job.restate, doc) is None)

    def record(self, job: Job) -> None:
        self.keys[str(job.path)] = job.key
        write_json_atomic(self.path, self.keys, schema="regen-cache")


def run_plan(plan: Plan, jobs: int = 2, force: bool = False,
             progress: Callable[[str, int, int], None] | None = None,
             scheduler: str | None = None, replace_answers: bool = False) -> list[Outcome]:
    """Run the plan's queries through tcsmt.runner (``jobs`` local worker
    processes, or the Dask cluster at ``scheduler`` / TCSMT_SCHEDULER) and
    write their files here, each as its query finishes. Ctrl-C stops every
    worker (cancels every task on a cluster); what was written before it is
    complete, and the message says how many files that is. A document that
    would leave unknown an answer its file holds is not written (LOST)
    unless ``replace_answers``."""
    cache = Cache(plan.root)
    todo, outcomes = [], list(plan.skipped)
    for job in plan.jobs:
        if not force and cache.hit(job):
            outcomes.append(Outcome(job.name, FileStatus.CACHED))
        else:
            todo.append(job)
    by_name = {job.name: job for job in todo}
    tasks = [runner.Task(job.name, partial(job.run, prior=json_object_or_none(job.path))) for job in todo]
    finish = partial(_finish_counted, cache=cache, outcomes=outcomes, replace=replace_answers)
    try:
        runner.run(tasks, on_done=lambda done: finish(by_name[done.name], done),
                   progress=progress, scheduler=scheduler, workers=max(1, jobs))
    except KeyboardInterrupt:
        written = sum(o.status in (FileStatus.NEW, FileStatus.CHANGED) for o in outcomes)
        raise UserError(f"interrupted: {written} file(s) written before it are complete; "
                        "no other file was touched") from None
    return outcomes


def _finish_counted(job: Job, done: runner.Done, cache: Cache, outcomes: list[Outcome],
                    replace: bool = False) -> None:
    """Write a finished query's file and count it as one step: a Ctrl-C that
    comes meanwhile is raised after both, so the count of written files
    given on Ctrl-C is the count on disk."""
    with interrupt_after():
        outcomes.append(_finish(job, done, cache, replace))


def _finish(job: Job, done: runner.Done, cache: Cache, replace: bool = False) -> Outcome:
    """Write one finished query's file (or say why not)."""
    secs, doc = done.seconds, done.value
    if not done.ok:                 # bad input, a crash in one query, a lost worker: report it, go on
        return Outcome(job.name, FileStatus.FAILED, secs, note=done.error)
    try:
        status = write_result(job.path, doc, job.check, replace_answers=replace)
    except AnswersLost as e:
        shown = "; ".join(e.lost[:3]) + (f"; and {len(e.lost) - 3} more" if len(e.lost) > 3 else "")
        return Outcome(job.name, FileStatus.LOST, secs, doc.get("verdict", ""),
                       f"{len(e.lost)} answer(s) came back unknown ({shown}): the file is kept; "
                       "a longer --timeout, or --replace-answers to write the unknowns")
    except UserError as e:          # its path cannot be written (a pipe, a folder): say so, go on
        return Outcome(job.name, FileStatus.FAILED, secs, doc.get("verdict", ""), str(e))
    cache.record(job)
    return Outcome(job.name, status, secs, doc.get("verdict", ""))
