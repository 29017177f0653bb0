"""Seconds for ``tcsmt identify`` on recorded rows, with and without the
scalar screening that runs before the batch stages.

    python benchmarks/bench_identify.py [OBS.json ...] [--limit N] [--no-baseline] [--space FILE]
                                        [--short] [--rev REV]

For each observations file (default: the H100 fp16 rows, 2000 of them),
runs tcsmt.identify.narrow.identify with the committed plan or the
default space, as ``tcsmt identify`` does: as it ships (every hypothesis
screened on a few rows by the scalar interpreter that shares stage results
across hypotheses, tcsmt.interp.memo, then the batch stages), with the
plain scalar interpreter screening (the baseline), and with
``--batch-baseline`` with the screening off (the batch stages alone), and
prints wall and CPU seconds side by side with their ratios and checks that
all leave the same hypotheses (``--short``: 40 rows and
the 8 hypotheses of benchmarks/plan-space-short.toml, seconds). ``--rev
REV`` also runs the shipped path of a git revision (its tree extracted to a
temporary folder, this script run there) on the same rows and prints it
side by side, with the ratio and whether both leave the same hypotheses.
CPU seconds count the worker processes too. The machine is shared: read
``uptime`` beside the figures.

The H100 e4m3 rows, 27 Nov (``--no-baseline --rev d970983``, load 8.1 to
8.5), timed from reading the rows, space and plan: 26.7 s CPU / 39.5 s wall
against 40.0 s CPU / 59.5 s wall (1.50x CPU, 1.51x wall), the same
hypothesis and class: the screening rows are chosen for what they cost (a
row of no products first, which rules out three hypotheses in four at
under half the cost of one of 32), the hypotheses a round leaves are
screened again from 32 on (not recorded by the batch stages, 27 ms each),
and each worker screens a few long runs of neighbouring hypotheses. Of the
26.7 s, the first round (26474 hypotheses, about 0.4 ms each on the row of
no products, then 0.9 ms on the next for the quarter left) takes about 17,
choosing its rows (32 pilot hypotheses through the batch simulator) 3,
reading the rows, space and plan 2. On an earlier main (6dae3cb, load 7.5
to 8.3): 55.3 s CPU / 53.5 s wall against 90.3 s CPU / 90.8 s wall.

On 28 Nov (load 1.1 to 1.2, ``--no-baseline --rev d42c752``) the
hypotheses are built without dataclasses.replace (tcsmt.identify.space:
30816 in about 0.9 s instead of 1.9): the e4m3 rows take 20.5 s CPU /
11.7 s wall against 21.4 / 12.5 (1.07x wall), the fp16 rows 6.5 / 4.1
against 6.7 / 4.3 (1.04x), the same hypotheses and classes. Of the 11.7 s,
reading the rows, space and plan takes 0.9, building the hypotheses and
choosing the first screening rows 1.4, the first round of screening (26474
hypotheses, 18.8 CPU-s on two workers) 9.3, the rest 0.3.

Later on 28 Nov (load 0.2 to 1.3, ``--no-baseline --rev a72f6c7``, two
runs) the shared stage results look up faster (tcsmt.interp.memo: a list's
items keyed in one loop, a format by its object's number, no parameter
values for stages that read none): the e4m3 rows take 16.8 to 17.0 s CPU /
9.7 to 10.2 s wall against 21.0 to 21.1 / 12.0 to 12.2 (1.18x to 1.25x
wall), the fp16 rows 5.8 to 6.2 / 3.7 to 4.0 against 6.4 to 6.7 / 4.0 to
4.3, the same hypotheses and classes.

Later still on 28 Nov (load 0.5 to 1.4, ``--no-baseline --rev ccf590c``,
two runs) the pilots are recorded in a batch per worker: the e4m3 rows
take 16.0 to 16.2 s CPU / 8.8 to 8.9 s wall against 15.9 to 16.3 / 9.5 to
9.6 (1.06x to 1.09x wall), the fp16 rows 5.4 to 5.7 / 3.3 to 3.4 against
5.4 to 5.8 / 3.5 to 3.8, the same hypotheses and classes.

Measured on the development machine (2 shared cores), shipped path:

    H100 fp16 rows  2000 rows, 15510 hypotheses    7.8 s CPU  11.7 s wall (load 8.5-9.1)
    H100 e4m3 rows  2000 rows, 30816 hypotheses   26.7 s CPU  39.5 s wall (load 8.1-8.5)

(main at d970983 beside them: 8.2 s CPU / 12.3 s wall and 40.0 s CPU /
59.5 s wall.) With the batch simulator's faster recording (2887012) as
well, the e4m3 rows take 22.2 s CPU / 33.0 s wall against 31.4 s CPU /
46.9 s wall for 2887012 alone (``--rev 2887012``, load 7.3 to 7.8, 1.41x
CPU), the same hypothesis and class; the first round of screening is 18.5
of those 22.2 CPU-s.

The baseline (batch stages alone) was stopped after 17 minutes at a load
of 14-22; before the screening, recording the fp16 hypotheses alone took
about 210 s of CPU and identify 137 s of wall time on a quieter machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tcsmt.identify import narrow
from tcsmt.identify.hypspace import space_for
from tcsmt.identify.plan import committed_plan, read_plan
from tcsmt.model.names import short_format
from tcsmt.observed.observations import read_observations
from tcsmt.sim import evaluate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [str(ROOT / "results/hardware/H100/mma-f16-f32.json")]
SHORT_SPACE = ROOT / "benchmarks" / "plan-space-short.toml"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run(path: str, limit: int | None, screen: bool, space_file: str | None = None,
        memo: bool = True):
    w0, c0 = time.perf_counter(), _cpu()       # from reading the rows, the space and the plan on
    obs = read_observations(path)
    if limit:
        obs.rows = obs.rows[:limit]
    fmts = f"{short_format(obs.fin.name)}:{short_format(obs.fout.name)}"
    space = space_for(None if space_file else fmts, space_file)
    plan_path = None if space_file else committed_plan(fmts)
    plan = read_plan(plan_path) if plan_path else None
    if plan is not None and plan.space.digest() != space.digest():
        plan = None
    saved, saved_memo = narrow.SCREEN_MIN, evaluate.SCREEN_MEMO
    narrow.SCREEN_MIN = saved if screen else 1 << 62
    evaluate.SCREEN_MEMO = memo
    try:
        res = narrow.identify(obs, space, plan, path)
        return time.perf_counter() - w0, _cpu() - c0, res, len(space.models()), len(obs.rows)
    finally:
        narrow.SCREEN_MIN, evaluate.SCREEN_MEMO = saved, saved_memo


def _figures(path: str, limit: int | None, space_file: str | None) -> None:
    """One shipped-path run, printed as a JSON line (what --rev runs in the other tree)."""
    wall, cpu, res, hyps, rows = run(path, limit, True, space_file)
    print(json.dumps({"wall": wall, "cpu": cpu, "consistent": res.consistent, "classes": res.classes,
                      "hypotheses": hyps, "rows": rows}))


def run_rev(rev: str, path: str, limit: int | None, space_file: str | None) -> dict:
    """The shipped path of git revision ``rev`` (its tree extracted from this
    repository) on the same rows: this script run there, its figures read back."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        args = [sys.executable, str(Path(__file__).resolve()), "--figures", str(Path(path).resolve())]
        args += ["--limit", str(limit)] if limit else []
        args += ["--space", str(Path(space_file).resolve())] if space_file else []
        env = {**os.environ, "PYTHONPATH": tmp}
        out = subprocess.run(args, cwd=tmp, env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", default=DEFAULT)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--no-baseline", action="store_true", help="only the shipped path")
    ap.add_argument("--batch-baseline", action="store_true",
                    help="also the batch stages alone, without screening (slow)")
    ap.add_argument("--space", metavar="FILE", help="a space file instead of the default space and plan")
    ap.add_argument("--short", action="store_true", help="40 rows of a space of 8 hypotheses (seconds)")
    ap.add_argument("--rev", metavar="REV",
                    help="also the shipped path of git revision REV (main, a commit), side by side")
    ap.add_argument("--figures", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.short:
        args.limit, args.space = 40, str(SHORT_SPACE)
    if args.figures:
        _figures(args.files[0], args.limit, args.space)
        return
    print(f"load average {os.getloadavg()[0]:.1f}")
    for path in args.files:
        wall, cpu, res, hyps, rows = run(path, args.limit, True, args.space)
        print(f"{path}: {rows} rows, {hyps} hypotheses, {len(res.consistent)} consistent "
              f"in {len(res.classes)} classes")
        print(f"  screened first     {wall:8.1f} s wall {cpu:8.1f} s CPU")
        if args.rev:
            old = run_rev(args.rev, path, args.limit, args.space)
            print(f"  {args.rev + ' (shipped)':<18} {old['wall']:8.1f} s wall {old['cpu']:8.1f} s CPU")
            print(f"  ratio              {old['wall'] / wall:8.2f}x wall {old['cpu'] / cpu:8.2f}x CPU; "
                  f"same hypotheses left: {old['consistent'] == res.consistent}, "
                  f"same classes: {old['classes'] == res.classes}")
        if args.no_baseline:
            continue
        pwall, pcpu, pres, _, _ = run(path, args.limit, True, args.space, memo=False)
        print(f"  plain screening    {pwall:8.1f} s wall {pcpu:8.1f} s CPU")
        print(f"  ratio              {pwall / wall:8.2f}x wall {pcpu / cpu:8.2f}x CPU; "
              f"same hypotheses left: {pres.consistent == res.consistent}, "
              f"same classes: {pres.classes == res.classes}")
        if not args.batch_baseline:
            continue
        bwall, bcpu, bres, _, _ = run(path, args.limit, False, args.space)
        print(f"  batch stages only  {bwall:8.1f} s wall {bcpu:8.1f} s CPU")
        print(f"  ratio              {bwall / wall:8.2f}x wall {bcpu / cpu:8.2f}x CPU; "
              f"same hypotheses left: {bres.consistent == res.consistent}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
