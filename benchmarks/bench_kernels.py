"""Products per second of every engine on the same GEMMs, side by side:
the NumPy interpretation, the compiled CPU kernel on one core and on every
core, MMA-Sim's fastest path (the whole K in one call, torch on every
core), and, where a CUDA device is present, the CUDA kernel, MMA-Sim on
the device and the device's own matmul.

    python benchmarks/bench_kernels.py [--sizes 512 2048] [--repeat 3] [--rows N]

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

MMA-Sim: pip install torch==2.13.0 && pip install mmasim.
"""

from __future__ import annotations

import argparse
import os
import time

import ml_dtypes
import numpy as np

from tcsmt.model.catalogue import find_model
from tcsmt.sim import kernels
from tcsmt.sim.batch import matmul

CASES = [
    # label, model, MMA-Sim class and shape, input dtype
    ("hopper fp16->fp32", "hopper-fp16-fp32", "WGMMA", "m64n8k16.f32.f16.f16", np.float16),
    ("hopper e4m3->fp32", "hopper-e4m3-fp32", "WGMMA", "m64n8k32.f32.e4m3.e4m3",
     ml_dtypes.float8_e4m3fn),
]


def inputs(m: int, n: int, k: int, dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32).astype(dtype)
    b = rng.standard_normal((k, n)).astype(np.float32).astype(dtype)
    c = rng.standard_normal((m, n)).astype(np.float32)
    return a, b, c


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


def mmasim_op(cls: str, shape: str, device: str = "cpu"):
    import torch
    from mmasim import nv_ptx
    torch.set_num_threads(kernels_threads())
    op = getattr(nv_ptx, cls)("Hopper", shape)

    def run(a, b, c):
        ta = torch.from_numpy(a.view(np.uint8 if a.itemsize == 1 else np.int16)).view(op.a_type)
        tb = torch.from_numpy(b.view(np.uint8 if b.itemsize == 1 else np.int16)).view(op.b_type)
        ta, tb, tc = ta.to(device), tb.to(device), torch.from_numpy(c).to(device)
        return lambda: op(ta, tb, tc)
    return run


def kernels_threads() -> int:
    from numba import config
    return config.NUMBA_NUM_THREADS


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


def bench_case(case, size: int, repeat: int, limit: int | None, have_mmasim: bool) -> None:
    label, name, cls, shape, dtype = case
    p = find_model(name)
    threads = kernels_threads()
    print(f"{label}, {size}^3 (M x N x K), {threads} cores, load average {os.getloadavg()[0]:.1f}:")
    results = {}
    A, B, C = inputs(size, size, size, dtype)     # every engine runs the first rows of these

    def run(engine, rows, fn):
        a, b, c = np.ascontiguousarray(A[:rows]), B, np.ascontiguousarray(C[:rows])
        first, best, cpu, out = timed(lambda: fn(a, b, c), repeat)
        results[engine] = (rows * size * size, first, best, out, rows, cpu)

    run("cpu, every core", rows_for(size, 1e9, limit),
        lambda a, b, c: matmul(a, b, c, arch=p, backend="cpu"))
    run("cpu, one core", rows_for(size, 4e8, limit),
        lambda a, b, c: matmul(a, b, c, arch=p, backend="cpu", threads=1))
    run("numpy", rows_for(size, 1.5e8, limit), lambda a, b, c: matmul(a, b, c, arch=p, backend="numpy"))
    if have_mmasim:
        op = mmasim_op(cls, shape)
        run("MMA-Sim (torch)", rows_for(size, 2e7, limit), lambda a, b, c: op(a, b, c)())
    if kernels.cuda_available():
        run("cuda kernel", size, lambda a, b, c: matmul(a, b, c, arch=p, backend="cuda"))
        if have_mmasim:
            op = mmasim_op(cls, shape, "cuda")
            run("MMA-Sim on the device", size, lambda a, b, c: _synced(op(a, b, c)))
        run("device's own matmul", size, lambda a, b, c: _native(a, b, c))
    report(results)


def _synced(fn):
    import torch
    out = fn()
    torch.cuda.synchronize()
    return out.cpu()


def _native(a, b, c):
    """torch's addmm on the device in fp16 (fp8 inputs widened to fp16): for speed only."""
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
    ap.add_argument("--case", choices=[c[1] for c in CASES], action="append")
    args = ap.parse_args()
    try:
        import mmasim  # noqa: F401
        have_mmasim = True
    except ImportError as e:
        have_mmasim = False
        print(f"MMA-Sim not importable ({e}): its column is left out")
    for case in CASES:
        if args.case and case[1] not in args.case:
            continue
        for size in args.sizes:
            bench_case(case, size, args.repeat, args.rows, have_mmasim)


if __name__ == "__main__":
    main()
