"""regen and a plan on a Dask cluster of 1 and 2 workers here, and on paper
for 8, 32 and 128 workers from the measured job times.

    python benchmarks/bench_cluster.py [--arch volta] [--plan tf32:fp32] [--workers 1,2]
                                       [--local] [--skip-regen] [--skip-plan]
                                       [--space FILE] [--solver-budget S] [--save-plan FILE]
                                       [--record N [--candidates C] [--rev REV]] [--short]

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
benchmarks/plan-space-short.toml, on 1 local worker, and their recording.

``--record N``: the part of a plan that takes the most time, recording
every hypothesis's outputs on the candidate vectors (tcsmt.sim.evaluate),
timed in this process for N hypotheses (whole evaluation batches spread
over the plan's space) on the plan's C candidates: as shipped, with the
graph of primitives only (leading-zero counts as their binary search), and
with ``--rev REV``'s code (its tree extracted, this script run there), side
by side, CPU seconds and their ratios, and it stops unless every output
bit, circuit number and unsupported hypothesis is the same.

    python benchmarks/bench_cluster.py --skip-regen --skip-plan --plan e4m3:fp32 --record 576 --rev main

27 Nov, the fp8 space (e4m3:fp32, k = 32, 30816 hypotheses), 576 of them
on 4079 candidates, load 8.2 to 8.4 (a plan build beside it), against main
at d970983: shipped 8.19 CPU-s (14.2 ms a hypothesis), primitives only
11.13 (1.36x), d970983 18.92 (2.31x); the same bits and circuits.
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


# ---------------------------------------------------------------------------
# Recording: every hypothesis's outputs on the plan's candidates
# ---------------------------------------------------------------------------

def record_sample(formats: str | None, space: str | None, count: int, candidates: int):
    """The hypotheses a recording runs: whole evaluation batches
    (tcsmt.sim.evaluate.batches, neighbours sharing a graph as in a plan),
    spread evenly over the space, up to ``count``; and the plan's candidate
    vectors (plan_candidates, seed 0)."""
    from tcsmt.identify.hypspace import space_for
    from tcsmt.identify.plan import plan_candidates, plan_domain, plan_k
    from tcsmt.sim.evaluate import batches
    sp = space_for(formats, space)
    models = sp.models()
    groups = batches(models)
    want = max(1, min(len(groups), round(count / max(len(g) for g in groups))))
    picked = [i for n in sorted({round(j * (len(groups) - 1) / max(1, want - 1)) for j in range(want)})
              for i in groups[n]][:count]
    _, k = plan_k(sp)
    p = models[0]
    return [models[i] for i in picked], plan_candidates(p, k, plan_domain(p.fin, p.fout), candidates, 0)


def record_once(formats, space, count: int, candidates: int, counting: bool | None = None):
    """(CPU s, wall s, outputs, circuit numbers, unsupported) of one recording in
    this process (workers=1); ``counting`` sets evaluate.COUNTING where it exists."""
    from tcsmt.sim import evaluate as ev
    models, (a, b, c, sa, sb) = record_sample(formats, space, count, candidates)
    if counting is not None:
        ev.COUNTING = counting
    w0, c0 = time.perf_counter(), time.process_time()
    out = ev.evaluate(models, a, b, c, workers=1, sa=sa, sb=sb)
    return time.process_time() - c0, time.perf_counter() - w0, out.outputs, out.shape, out.unsupported


def record_rev(rev: str, formats, space, count: int, candidates: int):
    """record_once with git revision ``rev``'s tcsmt (its tree extracted from
    this repository; this script run there), its outputs read back."""
    import json
    import os
    import subprocess
    import sys

    import numpy as np
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        args = [sys.executable, str(Path(__file__).resolve()), "--record-figures", str(Path(tmp) / "out"),
                "--record", str(count), "--candidates", str(candidates)]
        args += ["--space", str(Path(space).resolve())] if space else ["--plan", formats]
        out = subprocess.run(args, cwd=tmp, env={**os.environ, "PYTHONPATH": tmp}, check=True,
                             capture_output=True, text=True).stdout
        fig = json.loads(out.strip().splitlines()[-1])
        got = np.load(Path(tmp) / "out.npz")
        return fig["cpu"], fig["wall"], got["outputs"], got["shape"], list(got["unsupported"])


def record_report(formats, space, count: int, candidates: int, rev: str | None) -> None:
    """The recording as it ships, with the graph of primitives only
    (evaluate.COUNTING off), and with ``rev``'s code, side by side: CPU and
    wall seconds, ms per hypothesis, ratios, and whether every output bit,
    circuit number and unsupported hypothesis is the same."""
    import os
    load0 = os.getloadavg()
    runs = {"shipped": record_once(formats, space, count, candidates, True),
            "primitives only": record_once(formats, space, count, candidates, False)}
    if rev:
        runs[rev] = record_rev(rev, formats, space, count, candidates)
    new = runs["shipped"]
    n = new[2].shape[0]
    print(f"\nrecording {n} hypotheses of {space or formats} on {new[2].shape[1]} candidates, one process "
          f"(load average {load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after)")
    print(f"  {'':<16} {'CPU s':>8} {'wall s':>8} {'CPU ms/hyp':>11} {'CPU ratio':>10}  same bits, circuits")
    for name, (cpu, wall, out, shape, bad) in runs.items():
        same = (out == new[2]).all() and (shape == new[3]).all() and list(bad) == list(new[4])
        print(f"  {name:<16} {cpu:>8.2f} {wall:>8.2f} {1000 * cpu / n:>11.1f} {cpu / new[0]:>9.2f}x  {same}")
        if not same:
            raise SystemExit(f"{name}: the recording differs from the shipped one")


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
    ap.add_argument("--record", type=int, metavar="N",
                    help="also time recording N hypotheses (whole batches spread over the plan's space) "
                         "on the plan's candidates, as shipped and with the primitives only")
    ap.add_argument("--candidates", type=int, default=4000, help="candidates of --record (default 4000)")
    ap.add_argument("--rev", metavar="REV", help="--record also with git revision REV's code, side by side")
    ap.add_argument("--record-figures", metavar="OUT", help=argparse.SUPPRESS)
    ap.add_argument("--short", action="store_true", help="one property, a plan of 8 hypotheses, 1 local "
                    "worker, their recording on 200 candidates (seconds)")
    args = ap.parse_args()
    if args.record_figures:
        _record_figures(args)
        return
    props = None
    if args.short:
        args.workers, args.local, args.space, args.solver_budget = "1", True, str(SHORT_SPACE), 10.0
        args.record, args.candidates = 8, 200
        props = ["rounding"]
    if args.record:
        record_report(None if args.space else args.plan, args.space, args.record, args.candidates, args.rev)
    counts = [int(x) for x in args.workers.split(",")]
    where = "local worker processes" if args.local else "a Dask LocalCluster (1 thread per worker)"
    if not (args.skip_regen and args.skip_plan):
        print(f"\non {where}; measured with {', '.join(map(str, counts))} worker(s), projected to "
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


def _record_figures(args) -> None:
    """In a revision's tree (record_rev): one recording, its outputs to OUT.npz,
    its seconds as the last line of JSON."""
    import json

    import numpy as np
    cpu, wall, out, shape, bad = record_once(None if args.space else args.plan, args.space, args.record,
                                             args.candidates)
    np.savez(args.record_figures + ".npz", outputs=out, shape=shape,
             unsupported=np.array(bad, dtype=np.int64))
    print(json.dumps({"cpu": cpu, "wall": wall}))


if __name__ == "__main__":
    main()
