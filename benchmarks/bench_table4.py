"""Seconds per query per solver for the queries of Table 4 of the SMT paper
(seed 000, VLPG), and for the carry-bit proofs of every shipped block size,
printed beside the paper's figures (Z3 4.8.9 and cvc5 1.0.2 on an AMD EPYC
7502P; '-' = no answer in 6 hours).

Each Table 4 query is the SMT question of the property that asks it, for
one pair of hypotheses, on the architecture the paper used: the seconds
cover building the formulas, the race of restricted and full formulas on
the solver(s), and replaying the witness; beside the wall seconds, the CPU
seconds of this process and its solver processes (on a shared machine
the wall seconds grow with the load, the CPU seconds much less). Run:

    python benchmarks/bench_table4.py [--timeout 60] [--solvers bitwuzla,cvc5,z3,portfolio]
                                      [--repeat N] [--short]

A second table runs each Table 4 query with the portfolio twice in the
same run: the solver race alone (the paper's query), and the candidate
pool first (find.ask(simulate=True): readable inputs run through the
batch simulator, the witness replayed on the concrete model, the solvers
asked only when the pool separates nothing, i.e. for proofs), with the
ratio of their wall seconds.

``--short`` (seconds, run by .ci/run so the script cannot rot): the first
Table 4 query and the Volta carry query with the portfolio, and Volta's
carry-bit proof. The carry-bit proofs of the block-scaled models are in
benchmarks/bench_carry.py.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

from tcsmt.model.choose import choose
from tcsmt.properties.registry import get_property
from tcsmt.properties.run import hypotheses, resolve_base
from tcsmt.search import find
from tcsmt.search.domain import Domain
from tcsmt.search.prove import _witness, prove_carry_bits

# (label, property, arch, formats, hypothesis pair, paper Z3 s, paper cvc5 s)
TABLE4 = [
    ("Exact Multiplication", "exact-products", "volta", None, ("exact", "in_format"), "0.55", "0.027"),
    ("Exact Addition in FP16", "exact-accumulation", "volta", "fp16:fp16",
     ("fp32 accumulator", "fp16 accumulator"), "27.59", "0.12"),
    ("Rounding of Final Result", "final-rounding", "volta", "fp16:fp16", ("rne", "rz"), "0.52", "0.008"),
    ("Rounding of Accumulator", "block-rounding", "volta", None, ("truncate", "rz"), "0.34", "0.017"),
    ("Accumulation Order", "order", "volta", None, ("sequential", "reverse"), "9.87", "0.25"),
    ("Normalization", "normalisation", "volta", None, ("block", "every_add"), "9.63", "0.25"),
]
CARRY = [("3 Carry Bits (Volta, 5 terms)", "volta", None, 2, "410.25", "72.793"),
         ("4 Carry Bits (Ampere, 9 terms)", "ampere", None, 3, "-", "-")]
PROOFS = [("volta", None), ("turing", None), ("ampere", None), ("ampere", "tf32:fp32"),
          ("hopper", None), ("hopper", "tf32:fp32"), ("ada", "e4m3:fp32"), ("hopper", "e4m3:fp32"),
          ("blackwell", "e4m3:fp32"), ("cdna3", None)]


def pair_query(prop_name, arch, formats, pair, solver, timeout, simulate=False):
    """Seconds and verdict of one Table 4 query; ``simulate``: the candidate
    pool first (find.ask(simulate=True)), the solvers only when it
    separates nothing."""
    prop = get_property(prop_name)
    base = resolve_base(prop, arch, formats)
    hyps = {h.id: h for h in hypotheses(prop, base)}
    chosen = [hyps[pair[0]], hyps[pair[1]]]
    t0 = time.monotonic()
    got = find.ask(chosen, prop.k(base), prop.domain(base), [(0, 1)], solver, timeout, True,
                   simulate=simulate)
    return time.monotonic() - t0, got.verdict


def carry_query(arch, formats, carry, solver, timeout):
    base = choose(arch, formats)
    t0 = time.monotonic()
    out = _witness(base, base.block_size, carry, Domain(), solver, timeout, None)
    return time.monotonic() - t0, out.verdict


def cpu() -> float:
    """CPU seconds of this process and of its (finished) solver processes."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measured(run, repeat):
    """(median wall s, median CPU s, verdict) of ``repeat`` runs."""
    times, used, verdict = [], [], ""
    for _ in range(repeat):
        c0 = cpu()
        t, verdict = run()
        times.append(t)
        used.append(cpu() - c0)
    return statistics.median(times), statistics.median(used), verdict


def pool_first(rows, timeout, repeat):
    """Each Table 4 query with the portfolio, the solver race alone beside
    the candidate pool first (its witness replayed; the solvers only for what
    it leaves), in the same run; the ratio is old / new wall seconds."""
    print("\nTable 4 queries, portfolio: solver race alone (the paper's query) vs candidate pool first")
    print(f"{'query':34} {'race (wall, CPU s)':>19} {'pool first':>19} {'ratio':>6}")
    for r in rows:
        old, new = (measured(lambda r=r, sim=sim: pair_query(*r[1:5], "portfolio", timeout, sim), repeat)
                    for sim in (False, True))
        print(f"{r[0]:34} {cell(old[0], old[2], old[1])} {cell(new[0], new[2], new[1])} "
              f"{old[0] / max(new[0], 1e-9):6.1f}")


def cell(seconds, verdict, used):
    if verdict in ("sat", "unsat"):
        return f"{seconds:7.2f} {verdict[:5]:5} {used:5.2f}"
    return f"{'>' + format(seconds, '.0f'):>7} {verdict[:5]:5} {used:5.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--solvers", default="bitwuzla,boolector,cvc5,z3,portfolio")
    ap.add_argument("--repeat", type=int, default=1, help="runs per cell; the median is printed")
    ap.add_argument("--short", action="store_true", help="one query of each kind, the portfolio only")
    args = ap.parse_args()
    solvers = ["portfolio"] if args.short else args.solvers.split(",")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    head = f"{'query':34} " + " ".join(f"{s + ' (wall, CPU s)':>19}" for s in solvers) + \
        "   paper: Z3     cvc5"
    print(head)
    print("-" * len(head))
    rows = [(label, lambda s, r=r: pair_query(r[1], r[2], r[3], r[4], s, args.timeout), r[5], r[6])
            for r in TABLE4 for label in [r[0]]]
    rows += [(c[0], lambda s, c=c: carry_query(c[1], c[2], c[3], s, args.timeout), c[4], c[5]) for c in CARRY]
    if args.short:
        rows = [rows[0], rows[len(TABLE4)]]
    for label, run, z3p, cvcp in rows:
        cells = []
        for s in solvers:
            wall, used, verdict = measured(lambda s=s, run=run: run(s), args.repeat)
            cells.append(cell(wall, verdict, used))
        print(f"{label:34} " + " ".join(cells) + f"   {z3p:>7} {cvcp:>8}")
    pool_first(TABLE4[:1] if args.short else TABLE4, args.timeout, args.repeat)
    print()
    print("carry-bit proofs (tcsmt prove carry-bits, portfolio, UNSAT cross-checked by a second solver, "
          "witness for one bit fewer replayed)")
    for arch, formats in PROOFS[:1] if args.short else PROOFS:
        base = choose(arch, formats)
        t0 = time.monotonic()
        proof = prove_carry_bits(base, "portfolio", args.timeout)
        print(f"  {base.name:24} block {base.block_size:3}: {proof.fewest} carry bits, proved by "
              f"{'+'.join(proof.proved_by)}, {time.monotonic() - t0:6.2f} s")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
