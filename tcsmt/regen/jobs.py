"""Regenerating every result: every property on every shipped architecture.

``plan_jobs`` lists the queries (a property on an architecture's model, the
carry-bit proof, and the case studies that register themselves in
``EXTRA_JOBS``); each has a cache key, the sha256 of everything its answer
depends on: the question (property, hypotheses with all their parameters,
k, domain, search settings) and the source of the code that computes it
(datapath, vocabulary, formats, search, the property module). A query whose
file already holds the same key is skipped. The rest run in worker
processes; each writes its file atomically, so an interrupted run leaves
every file old or new, never broken. A query that gets no answer in time is
written as unknown with the solver's reason, and the batch goes on.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from tcsmt.errors import UserError
from tcsmt.fileio import write_json_atomic

CODE_FILES = ("datapath/__init__.py", "datapath/bv.py", "datapath/terms.py",
              "datapath/products.py", "datapath/register.py", "datapath/rounding.py",
              "datapath/blocks.py", "model/formats.py", "model/params.py", "search/find.py",
              "search/pool.py", "search/shrink.py", "properties/run.py", "properties/registry.py",
              "identify/space.py", "search/prove.py", "search/monotonic.py", "smt/abstraction.py",
              "search/domain.py", "search/diff.py", "search/vectors.py", "smt/terms.py",
              "smt/smtlib.py")


@dataclass
class Job:
    name: str                     # "ampere/rounding"
    path: Path
    key: str
    run: Callable[[], dict]       # picklable: a module-level function with bound args
    describe: str = ""


@dataclass
class Outcome:
    name: str
    status: str                   # new, changed, unchanged, skipped, failed
    seconds: float = 0.0
    verdict: str = ""
    note: str = ""


@dataclass
class Plan:
    jobs: list[Job] = field(default_factory=list)
    skipped: list[Outcome] = field(default_factory=list)   # not applicable, with the reason


def code_fingerprint(extra: list[Path] = ()) -> str:
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for name in CODE_FILES:
        h.update((root / name).read_bytes())
    for p in extra:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def cache_key(question: dict, code: str) -> str:
    text = json.dumps({"question": question, "code": code}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stored_key(path: Path) -> str | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    q = doc.get("query") if isinstance(doc, dict) else None
    return q.get("cache_key") if isinstance(q, dict) else None


# ---------------------------------------------------------------------------
# The queries
# ---------------------------------------------------------------------------

def run_property_job(prop_name: str, arch: str, formats: str | None, timeout: float,
                     key: str) -> dict:
    from tcsmt.properties.run import run_named
    doc = run_named(prop_name, arch, formats, timeout=timeout,
                    command=f"tcsmt find {prop_name} --arch {arch}"
                            + (f" --formats {formats}" if formats else ""))
    doc["query"]["cache_key"] = key
    return doc


def run_prove_job(arch: str, formats: str | None, timeout: float, key: str) -> dict:
    from tcsmt.model.catalogue import find_model
    from tcsmt.search.prove import prove_carry_bits
    doc = prove_carry_bits(find_model(arch, formats), timeout=timeout,
                           command=f"tcsmt prove carry-bits --arch {arch}")
    doc["query"]["cache_key"] = key
    return doc


EXTRA_JOBS: list[Callable[[list[str], float, str, Path], list[Job]]] = []
"""Functions (architectures, timeout, code fingerprint, results root) ->
jobs, for case studies that live in other modules."""


def plan_jobs(archs: list[str] | None, props: list[str] | None, timeout: float,
              root: Path) -> Plan:
    from functools import partial

    from tcsmt.model.catalogue import architectures, find_model
    from tcsmt.properties.registry import all_properties
    from tcsmt.properties.run import hypotheses, resolve_base, result_path

    known = architectures()
    archs = archs or known
    for a in archs:
        find_model(a)           # unknown architecture: one-line error
    allprops = all_properties()
    for p in props or []:
        if p not in allprops and p != "carry-bits-proof":
            raise UserError(f"unknown property {p!r} (known: {', '.join(sorted(allprops))})")
    code = code_fingerprint()
    plan = Plan()
    for arch in archs:
        for name, prop in sorted(allprops.items()):
            if props and name not in props:
                continue
            try:
                base = resolve_base(prop, arch)
            except UserError as e:
                plan.skipped.append(Outcome(f"{arch}/{name}", "skipped", note=str(e)))
                continue
            module = Path(__import__(f"tcsmt.queries.{prop.name.replace('-', '_')}",
                                     fromlist=["x"]).__file__)
            question = {"property": name, "model": base.parameter_dict(), "k": prop.k(base),
                        "domain": prop.domain(base).describe(),
                        "hypotheses": [[h.id, h.params.parameter_dict()] for h in hypotheses(prop, base)],
                        "settings": {"readable": True, "pool": True}, "module": module.read_text()}
            key = cache_key(question, code)
            plan.jobs.append(Job(f"{arch}/{name}", result_path(base, prop, root), key,
                                 partial(run_property_job, name, arch, None, timeout, key)))
        if not props or "carry-bits-proof" in props:
            base = find_model(arch)
            if base.normalisation == "block":
                key = cache_key({"prove": "carry-bits", "model": base.parameter_dict()}, code)
                plan.jobs.append(Job(f"{arch}/carry-bits-proof",
                                     Path(root) / arch / "carry-bits-proof.json", key,
                                     partial(run_prove_job, arch, None, timeout, key)))
    if not props:
        for extra in EXTRA_JOBS:
            plan.jobs += extra(archs, timeout, code, Path(root))
    return plan


# ---------------------------------------------------------------------------
# Running them
# ---------------------------------------------------------------------------

def _work(job: Job) -> tuple[str, float, str, str]:
    """In a worker: run the query and write its file (atomically)."""
    t0 = time.monotonic()
    try:
        doc = job.run()
    except UserError as e:
        return job.name, time.monotonic() - t0, "failed", str(e)
    write_json_atomic(job.path, doc)
    return job.name, time.monotonic() - t0, "written", doc.get("verdict", "")


def compare_docs(old: dict | None, new: dict) -> str:
    if old is None:
        return "new"
    keys = ("verdict", "vectors", "pairs", "proof")
    strip = lambda d: {k: d.get(k) for k in keys}  # noqa: E731
    return "unchanged" if strip(old) == strip(new) else "changed"


def run_plan(plan: Plan, jobs: int = 2, force: bool = False,
             progress: Callable[[str, int, int], None] | None = None) -> list[Outcome]:
    todo, outcomes = [], list(plan.skipped)
    for job in plan.jobs:
        if not force and job.path.exists() and stored_key(job.path) == job.key:
            outcomes.append(Outcome(job.name, "cached"))
        else:
            todo.append(job)
    old = {job.name: _load(job.path) for job in todo}
    done = 0
    if progress:
        progress("", done, len(todo))
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(_work, job): job for job in todo}
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    job = futures[f]
                    try:
                        name, secs, status, info = f.result()
                    except Exception as e:          # a crash in one query: report, go on
                        outcomes.append(Outcome(job.name, "failed", note=f"{type(e).__name__}: {e}"))
                    else:
                        if status == "failed":
                            outcomes.append(Outcome(name, "failed", secs, note=info))
                        else:
                            new = _load(job.path)
                            outcomes.append(Outcome(name, compare_docs(old[job.name], new or {}),
                                                    secs, info))
                    done += 1
                    if progress:
                        progress(job.name, done, len(todo))
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return outcomes


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
