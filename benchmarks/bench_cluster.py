"""regen and a plan on a Dask cluster of 1 and 2 workers here, and on paper
for 8, 32 and 128 workers from the measured job times.

    python benchmarks/bench_cluster.py [--arch volta] [--plan tf32:fp32] [--workers 1,2]
                                       [--local] [--skip-regen] [--skip-plan]
                                       [--space FILE] [--solver-budget S] [--save-plan FILE]
                                       [--short]

regen: ``tcsmt regen ARCH --force`` into a copy of the committed results of
ARCH (every query runs, starting from the committed vectors, as in the
repository), with the case studies of ARCH. plan: ``tcsmt plan --formats
PLAN`` (its default space, or ``--space FILE``) written to a temporary file. Each runs on a
``distributed.LocalCluster`` of W worker processes with one thread each
(``--local``: tcsmt's local worker processes instead) and is timed whole.

Every job's own seconds are recorded (tcsmt.runner.recording): a run is a
chain of stages (regen: one; a plan: the evaluation of the candidates, each
round of solver search, the witnesses' evaluation), each a set of
independent jobs, with this process's own work between them ("serial").
On paper, W workers take serial + the sum over stages of the stage's
makespan when its jobs are handed longest first to the least loaded worker
(LPT); "critical path" is serial + each stage's longest job (no number of
workers does better), "total" serial + every job (one worker). The
measured runs with 1 and 2 workers are printed beside the projection of
the same runs, so the gap (scheduling and transfer costs, a shared
machine) shows. Nothing here asserts a speed. ``--short`` (seconds): one
property of regen and a plan over the 8 hypotheses of
benchmarks/plan-space-short.toml, on 1 local worker.
"""

from __future__ import annotations

import argparse
import heapq
import shutil
import tempfile
import time
from pathlib import Path

from tcsmt import runner

ROOT = Path(__file__).resolve().parent.parent
PAPER = (8, 32, 128)
SHORT_SPACE = ROOT / "benchmarks" / "plan-space-short.toml"


def makespan(jobs: list[float], workers: int) -> float:
    """Longest-first onto the least loaded worker."""
    loads = [0.0] * workers
    for d in sorted(jobs, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def projection(wall: float, stages: list[runner.Stage], workers: int | None) -> float:
    """Seconds on ``workers`` (None: as many as there are jobs)."""
    serial = max(0.0, wall - sum(s.seconds for s in stages))
    spans = [max((d for _, d in s.jobs), default=0.0) if workers is None
             else makespan([d for _, d in s.jobs], workers) for s in stages]
    return serial + sum(spans)


def regen_run(arch: str, root: Path, props: list[str] | None, workers: int) -> None:
    from tcsmt.regen import jobs as regen
    from tcsmt.regen import plan as regen_plan
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(ROOT / "results" / arch, root / arch)
    for folder in ("compare-algorithms", "coverage"):
        shutil.copytree(ROOT / "results" / folder, root / folder)
    plan = regen_plan.plan_jobs([arch], props, 60.0, root)
    out = regen.run_plan(plan, jobs=workers, force=True)
    bad = [o for o in out if o.status in ("failed", "lost")]
    if bad:
        raise SystemExit(f"regen failed: {bad}")


def plan_run(formats: str | None, space: str | None, budget: float, root: Path, save: str | None,
             workers: int) -> None:
    import sys

    from tcsmt.identify.hypspace import space_for
    from tcsmt.identify.plan import build_plan, write_plan
    plan = build_plan(space_for(formats, space), solver_budget=budget,
                      log=lambda line: print(line, file=sys.stderr, flush=True))
    write_plan(root / "plan.json", plan)
    if save:
        write_plan(save, plan)


def timed(fn, *args) -> tuple[float, list[runner.Stage]]:
    with runner.recording() as stages:
        t0 = time.monotonic()
        fn(*args)
        wall = time.monotonic() - t0
    return wall, stages


def on(workers: int, local: bool, fn, *args):
    """fn(*args, workers) with its jobs on ``workers`` workers."""
    args = (*args, workers)
    if local:
        import os
        os.environ[runner.ENV_WORKERS] = str(workers)
        runner.use_scheduler("local")
        return timed(fn, *args)
    from distributed import LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        runner.use_scheduler(cluster.scheduler_address)
        try:
            return timed(fn, *args)
        finally:
            from tcsmt.runner.cluster import disconnect
            disconnect()
            runner.use_scheduler(None)


def report(label: str, runs: dict[int, tuple[float, list[runner.Stage]]]) -> None:
    base_n = min(runs)
    wall, stages = runs[base_n]
    jobs = [d for s in stages for _, d in s.jobs]
    serial = max(0.0, wall - sum(s.seconds for s in stages))
    print(f"\n{label}: {len(jobs)} jobs in {len(stages)} stage(s); longest job {max(jobs, default=0):.1f} s, "
          f"jobs' total {sum(jobs):.1f} s, serial {serial:.1f} s (from the {base_n}-worker run)")
    total, crit = projection(wall, stages, 1), projection(wall, stages, None)
    print(f"  {'workers':>8} {'measured s':>11} {'projected s':>12} {'speed-up':>9}")
    for n, (w, st) in sorted(runs.items()):
        print(f"  {n:>8} {w:>11.1f} {projection(w, st, n):>12.1f} {runs[base_n][0] / w:>8.2f}x")
    for n in PAPER:
        p = projection(wall, stages, n)
        print(f"  {n:>8} {'':>11} {p:>12.1f} {total / p:>8.2f}x")
    print(f"  critical path {crit:.1f} s (at most {total / crit:.1f}x the one-worker projection "
          f"{total:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="volta")
    ap.add_argument("--plan", default="tf32:fp32", help="format pair of the plan's default space")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--local", action="store_true", help="tcsmt's local worker processes, not Dask")
    ap.add_argument("--skip-regen", action="store_true")
    ap.add_argument("--skip-plan", action="store_true")
    ap.add_argument("--space", metavar="FILE", help="the plan's space (default: that of --plan)")
    ap.add_argument("--solver-budget", type=float, default=240.0, help="the plan's solver seconds")
    ap.add_argument("--save-plan", metavar="FILE", help="also write the plan (the last run's) to FILE")
    ap.add_argument("--short", action="store_true", help="one property, a plan of 8 hypotheses, 1 local "
                    "worker (seconds)")
    args = ap.parse_args()
    props = None
    if args.short:
        args.workers, args.local, args.space, args.solver_budget = "1", True, str(SHORT_SPACE), 10.0
        props = ["rounding"]
    counts = [int(x) for x in args.workers.split(",")]
    where = "local worker processes" if args.local else "a Dask LocalCluster (1 thread per worker)"
    print(f"on {where}; measured with {', '.join(map(str, counts))} worker(s), projected to "
          f"{', '.join(map(str, PAPER))}")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_regen:
            runs = {n: on(n, args.local, regen_run, args.arch, Path(tmp) / f"regen{n}", props)
                    for n in counts}
            report(f"tcsmt regen {args.arch} --force" + (f" --property {props[0]}" if props else ""), runs)
        if not args.skip_plan:
            runs = {n: on(n, args.local, plan_run, None if args.space else args.plan, args.space,
                          args.solver_budget, Path(tmp), args.save_plan) for n in counts}
            report(f"tcsmt plan --space {args.space}" if args.space else f"tcsmt plan --formats {args.plan}",
                   runs)


if __name__ == "__main__":
    main()
