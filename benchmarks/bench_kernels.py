"""Products per second of every engine on the same GEMMs, side by side:
the NumPy interpretation, the compiled CPU kernel on one core and on every
core, MMA-Sim's fastest path (the whole K in one call, torch on every
core), and, where a CUDA device is present, the CUDA kernel, MMA-Sim on
the device and the device's own matmul.

    python benchmarks/bench_kernels.py [--sizes 512 2048] [--repeat 3] [--rows N] [--short]

Each figure is M * N * K / seconds, the best of the repeats in one process
after a first call (steady state: the kernel compiled or loaded from
Numba's cache, the datapath recorded); the first call's seconds, which
include compiling, are printed apart. Beside the wall-clock rate, the rate
per CPU-second (products / CPU time of all the process's threads) says
what the engine does with the cores it gets: on a machine that others
share (the load average is printed), the wall-clock rate of every core
falls below cores x that figure. Sizes above 1024 run a subset of D's
rows (rows are independent dot products, so the rate is that of the whole
GEMM: the script says how many rows it ran and extrapolates nothing else).
Every engine's output is compared bit for bit with the CPU kernel's on the
rows both ran. Nothing here asserts a speed.

The block-scaled cases (NVFP4: e2m1 with ue4m3 scales per 16 products;
MX e4m3 with ue8m0 scales per 32) draw scales near 1 (2^-3 to 2^3). MMA-Sim
runs NVFP4's whole K in one call; its kind::mxf8f6f4 instruction takes
K = 32 only, so it runs K / 32 calls, each D the next C (as tcsmt chains
the blocks).

MMA-Sim: pip install torch==2.13.0 && pip install mmasim.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import numpy as np

from tcsmt.api import matmul
from tcsmt.model.choose import choose
from tcsmt.sim import kernels
from tcsmt.sim.npio import dtype_of, to_bits


@dataclass(frozen=True)
class Case:
    label: str
    model: str
    mmasim: tuple       # MMA-Sim's class, architecture and shape
    chunk: int = 0      # K per MMA-Sim call (0: the whole K in one call)


CASES = [
    Case("hopper fp16->fp32", "hopper-fp16-fp32", ("WGMMA", "Hopper", "m64n8k16.f32.f16.f16")),
    Case("hopper e4m3->fp32", "hopper-e4m3-fp32", ("WGMMA", "Hopper", "m64n8k32.f32.e4m3.e4m3")),
    Case("blackwell NVFP4 (mxf4nvf4 block16 ue4m3)", "blackwell-nvfp4",
         ("TCGen05MMABlockScale", "Blackwell", "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3")),
    Case("blackwell mxf8f6f4 e4m3 (ue8m0)", "blackwell-mxf8f6f4-e4m3",
         ("TCGen05MMABlockScale", "Blackwell", "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0"),
         chunk=32),
]


def inputs(p, m: int, n: int, k: int, seed: int = 0):
    """A, B, C and, for a block-scaled model, its scales SA [M, S], SB [S, N]
    (None otherwise)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32).astype(dtype_of(p.fin))
    b = rng.standard_normal((k, n)).astype(np.float32).astype(dtype_of(p.fb))
    c = rng.standard_normal((m, n)).astype(np.float32)
    if not p.scale_format:
        return a, b, c, None, None
    s = p.scale_count(k)
    sa, sb = (np.exp2(rng.integers(-3, 4, shape)).astype(np.float32).astype(dtype_of(p.fscale))
              for shape in ((m, s), (s, n)))
    return a, b, c, sa, sb


def timed(fn, repeat: int):
    """(first call's seconds, best of ``repeat`` more, the CPU seconds of
    that best call (every thread of the process), the output)."""
    t = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t
    best, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall = time.perf_counter() - t
        if wall < best:
            best, cpu = wall, time.process_time() - c
    return first, best, cpu, out


def mmasim_op(case: Case, p, device: str = "cpu"):
    """A function (A, B, C, SA, SB) -> a function that runs MMA-Sim on
    them (the operands converted to its tensors beforehand, not timed)."""
    import torch

    from tcsmt.peer.mmasim import operand, operation
    torch.set_num_threads(kernels_threads())
    op = operation(*case.mmasim)

    def tensor(x, dtype):
        return torch.from_numpy(np.ascontiguousarray(x).view(np.uint8)).view(dtype).to(device)

    def run(a, b, c, sa, sb):
        ta = operand(op, to_bits(a, p.fin, "A"), p.fin, "a").to(device)
        tb = operand(op, to_bits(b, p.fb, "B").T, p.fb, "b").T.to(device)
        tc = torch.from_numpy(c).to(device)
        if sa is None:
            return lambda: op(ta, tb, tc)
        tsa, tsb = tensor(sa, op.s_type), tensor(sb, op.s_type)
        if not case.chunk:
            return lambda: op(ta, tb, tc, tsa, tsb)
        return lambda: _chained(op, case.chunk, p.scale_block, ta, tb, tc, tsa, tsb)
    return run


def _chained(op, chunk: int, scale_block: int, ta, tb, tc, tsa, tsb):
    """MMA-Sim's instruction of K = chunk over the whole K, each D the next C."""
    d, per = tc, chunk // scale_block
    for j in range(ta.shape[1] // chunk):
        k, s = slice(j * chunk, (j + 1) * chunk), slice(j * per, (j + 1) * per)
        d = op(ta[:, k], tb[k], d, tsa[:, s], tsb[s])
    return d


def kernels_threads() -> int:
    from tcsmt.sim.cpu import cpu_count
    return cpu_count()


def rows_for(size: int, rate: float, limit: int | None) -> int:
    """Rows of D to run so one call takes about a second at ``rate`` products/s."""
    if limit is not None:
        return min(size, limit)
    if size <= 1024:
        return size
    return int(min(size, max(8, rate / (size * size)) // 8 * 8 or 8))


def line(label: str, products: int, first: float, best: float, cpu: float, ref: float | None,
         note: str) -> str:
    rate = products / best
    ratio = f"{ref / best:8.1f}x" if ref else " " * 9
    return (f"  {label:22s} {rate / 1e6:9.1f} M/s  {products / cpu / 1e6:9.1f} M/CPU-s  "
            f"first call {first:7.2f} s  {ratio}  {note}")


def bench_case(case: Case, size: int, repeat: int, limit: int | None, have_mmasim: bool) -> None:
    p = choose(case.model)
    threads = kernels_threads()
    print(f"{case.label}, {size}^3 (M x N x K), {threads} cores, "
          f"load average {os.getloadavg()[0]:.1f}:")
    results = {}
    A, B, C, SA, SB = inputs(p, size, size, size)   # every engine runs the first rows of these

    def run(engine, rows, fn):
        a, c = np.ascontiguousarray(A[:rows]), np.ascontiguousarray(C[:rows])
        sa = None if SA is None else np.ascontiguousarray(SA[:rows])
        if engine.startswith("MMA-Sim"):        # the conversion to MMA-Sim's tensors is not timed
            call = fn(a, B, c, sa, SB)
            first, best, cpu, out = timed(call, repeat)
        else:
            first, best, cpu, out = timed(lambda: fn(a, B, c, sa, SB), repeat)
        results[engine] = (rows * size * size, first, best, out, rows, cpu)

    def ours(backend, threads=None):
        return lambda a, b, c, sa, sb: matmul(a, b, c, model=p, scale_a=sa, scale_b=sb,
                                              backend=backend, threads=threads)
    run("cpu, every core", rows_for(size, 1e9, limit), ours("cpu"))
    run("cpu, one core", rows_for(size, 4e8, limit), ours("cpu", 1))
    run("numpy", rows_for(size, 1.5e8, limit), ours("numpy"))
    if have_mmasim:
        run("MMA-Sim (torch)", rows_for(size, 2e7, limit), mmasim_op(case, p))
    if kernels.cuda_available():
        run("cuda kernel", size, ours("cuda"))
        if have_mmasim:
            op = mmasim_op(case, p, "cuda")
            run("MMA-Sim on the device", size, lambda *x: lambda: _synced(op(*x)))
        run("device's own matmul", size, lambda a, b, c, sa, sb: lambda: _native(a, b, c))
    report(results)


def _synced(fn):
    import torch
    out = fn()
    torch.cuda.synchronize()
    return out.cpu()


def _native(a, b, c):
    """torch's addmm on the device in fp16 (fp8 and fp4 inputs widened to
    fp16, scales left out): for speed only."""
    import torch
    ta = torch.from_numpy(a.astype(np.float16)).cuda()
    tb = torch.from_numpy(b.astype(np.float16)).cuda()
    tc = torch.from_numpy(c).cuda()
    out = torch.addmm(tc.half(), ta, tb).float()
    torch.cuda.synchronize()
    return out.cpu()


def report(results: dict) -> None:
    ref_engine = "MMA-Sim (torch)" if "MMA-Sim (torch)" in results else "numpy"
    ref = results[ref_engine][0] / results[ref_engine][2]
    cpu_out, cpu_rows = results["cpu, every core"][3], results["cpu, every core"][4]
    print(f"  {'':22s} {'wall':>13s}  {'per CPU-second':>15s}")
    for engine, (products, first, best, out, rows, cpu) in results.items():
        out = np.asarray(out)
        n = min(rows, cpu_rows)
        same = np.array_equal(out[:n].view(np.uint32), cpu_out[:n].view(np.uint32))
        note = f"{rows} rows; {'identical' if same else 'DIFFERENT'} bits on {n} rows"
        if engine == "device's own matmul":
            note = f"{rows} rows; the device's own rounding (not compared)"
        print(line(engine, products, first, best, cpu, products / ref, note))
    one, every = (results[e][0] / results[e][2] for e in ("cpu, one core", "cpu, every core"))
    print(f"  ratios against {ref_engine}; every core / one core: {every / one:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 2048])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rows", type=int, default=None, help="rows of D to run (default: by size)")
    ap.add_argument("--case", choices=[c.model for c in CASES], action="append")
    ap.add_argument("--short", action="store_true",
                    help="64^3 on 16 rows, once, the first case (seconds, and a kernel compile)")
    args = ap.parse_args()
    if args.short:
        args.sizes, args.repeat, args.rows = [64], 1, 16
        args.case = args.case or [CASES[0].model]
    try:
        import mmasim  # noqa: F401
        have_mmasim = True
    except ImportError as e:
        have_mmasim = False
        print(f"MMA-Sim not importable ({e}): its column is left out")
    for case in CASES:
        if args.case and case.model not in args.case:
            continue
        for size in args.sizes:
            bench_case(case, size, args.repeat, args.rows, have_mmasim)


if __name__ == "__main__":
    main()
