"""The case studies in ``tcsmt regen``: compare-algorithms on every shipped
architecture with an fp16:fp32 model (k = 4 and 8, and Volta's Table 5
outcome at k = 4), and the coverage of every shipped suite.

Each job's cache key covers the question, the solvers and the source it
depends on (the shared model code, and for coverage the suite file and
every query module, since the default space is built from them).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tcsmt.cases import compare, compare_pool, coverage
from tcsmt.cases.suite_file import DEVICE_ARCH
from tcsmt.cases.suites import find_suite, list_suites, suites_dir
from tcsmt.regen import jobs as regen
from tcsmt.regen import restate as rs
from tcsmt.smt.service import DEFAULT_TIMEOUT

COMPARE_KS = (4, 8)
COVERAGE_TIMEOUT = 30.0        # seconds per open pair (a proof under load needs room)
COVERAGE_BUDGET = 900.0        # seconds per suite
PACKAGE = Path(__file__).resolve().parent.parent


def _source(*names: str) -> str:
    return "".join((PACKAGE / n).read_text(encoding="utf-8") for n in names)


def compare_command(arch: str, k: int, reproduce: bool) -> str:
    return f"tcsmt compare-algorithms markidis ootomo-yokota --arch {arch} --k {k}" + \
        (" --reproduce" if reproduce else "")


def run_compare_job(arch: str, k: int, reproduce: bool, timeout: float, solver: str,
                    path: Path | None = None, prior: dict | None = None) -> dict:
    """One compare-algorithms file; the other architectures' witnesses
    beside ``path`` seed the candidate search."""
    seeds = compare_pool.seeds_from(path.parent, skip=path) if path is not None else []
    return compare.run_compare(arch, k, solver, timeout, reproduce, compare_command(arch, k, reproduce),
                               prior, seeds)


def run_coverage_job(suite: str, timeout: float, solver: str, prior: dict | None = None) -> dict:
    return coverage.run_coverage(suite, timeout=timeout, solver=solver, budget=COVERAGE_BUDGET,
                                 command=f"tcsmt coverage {suite}", prior=prior, cross_check=True)


def compare_jobs(archs: list[str], timeout: float, code: str, root: Path,
                 setting: dict) -> list[regen.Job]:
    src = _source("cases/algorithms.py", "cases/compare.py", "cases/compare_pool.py", "sim/dot.py")
    jobs = []
    for m in compare.fp16_fp32_models():
        if m.arch not in archs:
            continue
        runs = [(k, False) for k in COMPARE_KS] + ([(4, True)] if m.arch == "volta" else [])
        for k, rep in runs:
            question = {"compare": "markidis ootomo-yokota", "model": m.parameter_dict(), "k": k,
                        "reproduce": rep, "source": src, **setting}
            path = compare.result_path(m.arch, k, rep, root)
            name = f"compare-algorithms/{m.arch}-k{k}{'-reproduce' if rep else ''}"
            jobs.append(regen.Job(name, path, regen.cache_key(question, code),
                                  partial(run_compare_job, m.arch, k, rep, max(timeout, DEFAULT_TIMEOUT),
                                          setting["solver"], path), compare.check_document,
                                  partial(rs.restate_compare, m.arch, k, rep,
                                          compare_command(m.arch, k, rep))))
    return jobs


def coverage_jobs(archs: list[str], timeout: float, code: str, root: Path,
                  setting: dict) -> list[regen.Job]:
    queries = sorted(Path(suites_dir()).parent.glob("*.py"))
    src = _source("cases/coverage.py", "cases/suites.py", "cases/suite_file.py", "sim/dot.py") + \
        "".join(p.read_text(encoding="utf-8") for p in queries)
    jobs = []
    for name in list_suites():
        suite = find_suite(name)
        devices = {d for v in suite.vectors for cl in v.claims
                   for d in list(cl.expected) + list(cl.relation.devices if cl.relation else [])}
        if not {DEVICE_ARCH[d] for d in devices} & set(archs):
            continue
        question = {"coverage": name, "suite": (suites_dir() / f"{name}.json").read_text(),
                    "space": "properties", "source": src, **setting}
        path = coverage.result_path(name, root=root)
        jobs.append(regen.Job(f"coverage/{name}", path, regen.cache_key(question, code),
                              partial(run_coverage_job, name, min(timeout, COVERAGE_TIMEOUT),
                                      setting["solver"]), coverage.check_document,
                              partial(rs.restate_coverage, name, f"tcsmt coverage {name}")))
    return jobs


def plan_case_jobs(archs: list[str], timeout: float, code: str, root: Path,
                   setting: dict) -> list[regen.Job]:
    return compare_jobs(archs, timeout, code, root, setting) + \
        coverage_jobs(archs, timeout, code, root, setting)
