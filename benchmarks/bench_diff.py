"""Seconds per diff/equiv query, per solver and for the portfolio.

    python benchmarks/bench_diff.py [--timeout 60] [--quick] [--short]

For each pair of shipped models (fp16 inputs) and for the self-equivalence
proof (volta against volta with carry_bits=8), prints the wall seconds of
``tcsmt.search.diff.run_diff`` (formula building included) with each solver
alone and with the portfolio, once with the restricted formulas raced before
the full one (what ``tcsmt diff`` does) and once with the full formula only
(what ``tcsmt equiv`` does), and the ratio of the two. Also the start-up cost of one worker process per
solver (a trivial formula). Timings depend on the machine's load: the
machine is shared, so run it when it is quiet and read ``uptime`` beside it.
Target: a diff between two shipped fp16 models answers in under 2 s with
the portfolio.

Measured on the development machine (2 shared cores, load average 1.2-1.7),
portfolio, seconds (ladder / full formula only):

    volta vs ampere fp16:fp32      0.24 / 1.16   sat
    ampere vs hopper fp16:fp32     0.38 / 13.99  sat
    volta vs hopper fp16:fp32      0.86 / 3.48   sat
    ampere vs cdna3 fp16:fp32      0.15 / 0.39   sat
    volta vs ampere fp16:fp16      0.94 / 1.54   sat
    hopper vs blackwell fp16:fp32  0.04 / 0.03   unsat (same parameters: folds to false)
    volta vs volta carry_bits=8    2.91 / 1.68   unsat (Bitwuzla 1.2 s, Z3 50 s, cvc5 > 60 s)

Under a load average of 3.5-4.3 the diffs still answered in 0.4-0.5 s, the
proof in 8.2 / 3.5 s: restrictions cost proofs time, hence equiv skips them.

Worker start-up (fork, import backend and solver, answer a trivial formula):
Bitwuzla 0.02 s, cvc5 0.04 s, Z3 0.06 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from tcsmt.model.choose import choose
from tcsmt.search import separation as sep
from tcsmt.search.diff import default_k, run_diff
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis
from tcsmt.smt import service
from tcsmt.smt.smtlib import build_formula

PAIRS = [
    ("volta", "ampere", []),
    ("ampere", "hopper", []),
    ("volta", "hopper", []),
    ("ampere", "cdna3", []),
    ("volta-fp16-fp16", "ampere-fp16-fp16", []),
    ("hopper", "blackwell", []),
    ("volta", "volta", ["carry_bits=8"]),
]
QUICK = PAIRS[:2] + PAIRS[-2:]


def startup(solver: str, repeat: int = 5) -> float:
    """Median wall seconds of one worker answering a trivial formula."""
    f = build_formula(lambda I: [I.eq(I.var("x", 4), I.const(3, 4))])
    times = []
    for _ in range(repeat):
        t0 = time.monotonic()
        service.race([service.Job(f, solver)], 30.0)
        times.append(time.monotonic() - t0)
    return statistics.median(times)


def one(hyps, k, solver: str, timeout: float, ladder: bool) -> tuple[float, str]:
    t0 = time.monotonic()
    domain = Domain()
    forms = None if ladder else [(sep.FULL, sep.separation_formula(hyps, k, domain))]
    out = run_diff(hyps, k, domain, solver, timeout, forms=forms)
    label = out.verdict + (f"/{out.tag}" if out.verdict == "sat" else "")
    return time.monotonic() - t0, label


def bench_pair(a: str, b: str, sets: list[str], solvers: list[str], timeout: float,
               full: bool = True) -> None:
    pa, pb = choose(a), choose(b, overrides=sets)
    hyps = [Hypothesis("A", pa), Hypothesis("B", pb)]
    k = default_k(pa, pb)
    name = f"{pa.name} vs {pb.name}"
    for s in solvers:
        t_l, v_l = one(hyps, k, s, timeout, ladder=True)
        if not full:
            print(f"{name:58} k={k:<2} {s:9} ladder {t_l:7.2f} s {v_l:16}", flush=True)
            continue
        t_f, v_f = one(hyps, k, s, timeout, ladder=False)
        print(f"{name:58} k={k:<2} {s:9} ladder {t_l:7.2f} s {v_l:16} "
              f"full only {t_f:7.2f} s {v_f:8} ratio {t_f / max(t_l, 1e-3):6.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--quick", action="store_true", help="two pairs and the two proofs only")
    ap.add_argument("--short", action="store_true",
                    help="one pair, the portfolio on the ladder only (seconds)")
    args = ap.parse_args()
    solvers = service.available_solvers()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; timeout {args.timeout:g} s")
    for s in solvers:
        print(f"worker start-up {s:9} {startup(s, 1 if args.short else 5):.3f} s (trivial formula)")
    pairs = PAIRS[:1] if args.short else QUICK if args.quick else PAIRS
    for a, b, sets in pairs:
        bench_pair(a, b, sets, ["portfolio"] if args.short else solvers + ["portfolio"], args.timeout,
                   full=not args.short)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
