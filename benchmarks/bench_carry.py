"""Seconds for the carry-bit proof of every block-scaled circuit at k = 64
(NVFP4, mxf4 and mxf4nvf4, MMA-Sim's and sf-tensor's readings) and of
mxf8f6f4 with e4m3 (k = 32), beside
the baseline: the whole lemma for the same count, cross-checked, as
``tcsmt prove carry-bits`` asked it before the proof in parts.

    python benchmarks/bench_carry.py [--timeout 300] [--no-baseline] [--short]

Each row: the fewest carry bits, how it was proved (in parts, or whole),
by which solvers, the wall seconds and the CPU seconds (this process and
its solver processes) of ``tcsmt.search.prove.prove_carry_bits`` (the
whole proof: the largest inputs, the lemma, the witness for one bit
fewer, every part cross-checked); then the baseline's wall seconds and
answer, and the ratio. The machine is shared: the load average is printed
at the start and the end, and CPU seconds say more than wall seconds under
load. ``--short`` (seconds): NVFP4 alone, no baseline.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from tcsmt.model.catalogue import all_models
from tcsmt.search.domain import Domain
from tcsmt.search.overflow import overflow_formula
from tcsmt.search.prove import prove_carry_bits
from tcsmt.smt import service


def circuits() -> list:
    """One block-scaled model per distinct circuit at k = 64 (RTX
    Blackwell's are Blackwell's), and mxf8f6f4 with e4m3 (k = 32), the one
    regen proves of the 50 mxf8f6f4 circuits."""
    seen, out = set(), []
    for m in all_models():
        key = repr(sorted(m.parameter_dict().items()))
        wanted = m.block_size == 64 or m.name == "blackwell-mxf8f6f4-e4m3"
        if m.scale_format is not None and wanted and key not in seen:
            seen.add(key)
            out.append(m)
    return out


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def baseline(p, carry: int, timeout: float) -> tuple[float, str]:
    t0 = time.monotonic()
    ans = service.solve(overflow_formula(p, p.block_size, carry, Domain()), "portfolio", timeout,
                        cross_check=True)
    what = ans.status if ans.status != "unsat" else "unsat by " + "+".join(ans.proved_by)
    return time.monotonic() - t0, what


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--short", action="store_true", help="NVFP4 alone, no baseline (seconds)")
    args = ap.parse_args()
    models = circuits()
    if args.short:
        models, args.no_baseline = [m for m in models if m.name == "blackwell-nvfp4"], True
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    for p in models:
        t0, c0 = time.monotonic(), cpu()
        proof = prove_carry_bits(p, "portfolio", args.timeout)
        wall, used = time.monotonic() - t0, cpu() - c0
        how = f"in {len(proof.parts)} parts" if proof.parts else "whole"
        line = (f"{p.name:38} k {p.block_size:2}: {proof.fewest} carry bits, {how:11} by "
                f"{'+'.join(proof.proved_by):19} {wall:7.2f} s wall {used:6.2f} s CPU")
        if not args.no_baseline:
            bw, what = baseline(p, proof.fewest, args.timeout)
            line += f" | whole lemma {bw:7.2f} s {what:24} ratio {bw / wall:5.1f}x"
        print(line, flush=True)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
