"""How the cost of a GEMM grows with K, M and N, and the first call's
compile time, for the compiled CPU kernels, side by side with the NumPy
engine and MMA-Sim where they finish in reasonable time.

    python benchmarks/bench_growth.py [--short] [--model hopper-fp16-fp32]
                                      [--numpy-products N] [--mmasim-products N]

Three tables, the load average printed beside each (the machine may be
shared: the wall-clock figures then say less than the CPU-seconds):

* compile: the first call's compilation in a fresh cache (recording the
  chain's programs, writing their LLVM IR, compiling it: every module the
  call needs) for each K, and for each shipped model of a kind at
  K = 10^6 + 3 (a partial last block); wall and CPU seconds. A kernel is
  compiled once per model and block shape, so this does not grow with K.
* K: a 10 x K x 10 GEMM for K = 10^3 .. 10^6 (--short: up to 10^5): wall
  and CPU seconds of the steady state (after a first call), products per
  wall second and per CPU-second, "busy" (CPU-seconds per wall second:
  the cores the call kept busy) and the working memory: the peak RSS
  during a second call above the RSS before it, when A, B and C's bits
  are already in memory (Linux: /proc/self/clear_refs resets the peak;
  freed memory the process keeps is reused unseen), and tracemalloc's
  peak of the allocations the call makes (NumPy's among them, not
  torch's). Beside: the NumPy engine and
  MMA-Sim (torch) on the same inputs where their run stays under
  --numpy-products and --mmasim-products, their bits compared.
* M and N: D of 10 x 10 to 512 x 512 at K = 4096, the same columns, and
  one core's rate at 512^3 against the rate per CPU-second of every row.

Nothing here asserts a speed; the exit status is 1 when an engine's bits
differ from the CPU kernel's. MMA-Sim: pip install torch==2.13.0 && pip
install mmasim (the dev extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

from tcsmt.interp import chain
from tcsmt.model.choose import choose
from tcsmt.sim import cpu
from tcsmt.sim.batch import matmul_bits
from tcsmt.sim.npio import dtype_of, to_bits

KINDS = ["hopper-fp16-fp32", "hopper-e4m3-fp32", "hopper-e4m3-fp32-mma", "blackwell-nvfp4",
         "blackwell-mxf8f6f4-e4m3", "cdna3-e4m3fnuz-fp32", "cdna3-fp16-fp32", "volta-fp16-fp32"]
MMASIM = {"hopper-fp16-fp32": ("WGMMA", "Hopper", "m64n8k16.f32.f16.f16")}


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------

def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise OSError(key)


def timed(fn):
    """(wall s, CPU s of every thread, result) of fn()."""
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def memory(fn) -> tuple[int, int | None]:
    """(tracemalloc's peak of the allocations fn() makes (NumPy's among
    them), the peak RSS above the RSS before the call (None where the peak
    cannot be reset)), from a second call."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _status("VmRSS")
    except OSError:
        before = None
    tracemalloc.start()
    fn()
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return traced, None if before is None else max(0, _status("VmHWM") - before)


# ---------------------------------------------------------------------------
# Inputs and engines
# ---------------------------------------------------------------------------

def operands(p, m: int, k: int, n: int, seed: int = 0):
    """A, B, C (random normal values in the model's formats) and their bits:
    at [K, M], bt [K, N], ct [M, N]; scales near 1 for a block-scaled model."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, k)).astype(np.float32).astype(dtype_of(p.fin))
    B = rng.standard_normal((k, n)).astype(np.float32).astype(dtype_of(p.fb))
    C = rng.standard_normal((m, n)).astype(np.float32).astype(dtype_of(p.fc))
    bits = (np.ascontiguousarray(to_bits(A, p.fin, "A").T), to_bits(B, p.fb, "B"), to_bits(C, p.fc, "C"))
    scales = (None, None)
    if p.scale_format:
        s = p.scale_count(k)
        one = to_bits(np.ones(1, np.float32).astype(dtype_of(p.fscale)), p.fscale, "s")[0]
        scales = (np.full((s, m), one, np.uint64), np.full((s, n), one, np.uint64))
    return (A, B, C), bits, scales


def run_cpu(p, bits, scales, threads=None):
    return lambda: matmul_bits(p, *bits, backend="cpu", threads=threads, sa=scales[0], sb=scales[1])


def run_numpy(p, bits, scales):
    return lambda: matmul_bits(p, *bits, backend="numpy", sa=scales[0], sb=scales[1])


def run_mmasim(p, floats):
    import torch

    from tcsmt.peer.mmasim import operand, operation
    op = operation(*MMASIM[p.name])
    A, B, C = floats
    ta = operand(op, to_bits(A, p.fin, "A"), p.fin, "a")
    tb = operand(op, to_bits(B, p.fb, "B").T, p.fb, "b").T
    tc = torch.from_numpy(np.ascontiguousarray(C))
    return lambda: to_bits(op(ta, tb, tc).numpy(), p.fout, "D")


def have_mmasim() -> bool:
    try:
        import mmasim  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

def compile_seconds(p, k: int) -> tuple[float, float, int]:
    """(wall, CPU seconds, modules) of compiling every module a call of
    length k needs, in a fresh cache and with nothing recorded."""
    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("TCSMT_KERNEL_CACHE")
        os.environ["TCSMT_KERNEL_CACHE"] = d
        chain.clear()
        cpu.library.cache_clear()
        try:
            t, c = time.perf_counter(), time.process_time()
            cpu.load(p, k, "gemm")
            return time.perf_counter() - t, time.process_time() - c, len(cpu.modules(p, k, "gemm"))
        finally:
            if old is None:
                del os.environ["TCSMT_KERNEL_CACHE"]
            else:
                os.environ["TCSMT_KERNEL_CACHE"] = old


def compile_table(p, ks: list[int], kinds: list[str]) -> None:
    print(f"First call's compilation, fresh cache ({load()}):")
    print(f"  {'model':28s} {'K':>9s} {'modules':>8s} {'wall s':>8s} {'CPU s':>7s}")
    for k in ks:
        wall, cpu_s, mods = compile_seconds(p, k)
        print(f"  {p.name:28s} {k:9d} {mods:8d} {wall:8.2f} {cpu_s:7.2f}")
    for name in kinds:
        q = choose(name)
        k = 10 ** 6 + 3
        wall, cpu_s, mods = compile_seconds(q, k)
        print(f"  {q.name:28s} {k:9d} {mods:8d} {wall:8.2f} {cpu_s:7.2f}")


def row(label: str, products: int, wall: float, cpu_s: float, mem: tuple) -> str:
    rss = "-" if mem[1] is None else f"{mem[1] / 2**20:.1f}"
    return (f"{label:16s} {products:10.3g} {wall:8.3f} {cpu_s:8.3f} {cpu_s / wall:5.2f} "
            f"{products / wall / 1e6:9.1f} {products / cpu_s / 1e6:9.1f} {mem[0] / 2**20:9.2f} {rss:>8s}")


HEADER = (f"    {'':16s} {'products':>10s} {'wall s':>8s} {'CPU s':>8s} {'busy':>5s} "
          f"{'M/s':>9s} {'M/CPU-s':>9s} {'traced MiB':>9s} {'RSS MiB':>8s}")


DIFFERENT: list[str] = []
"""Engines whose bits differed from the CPU kernel's (the exit status says so)."""


def shape_rows(p, shapes: list[tuple], args, mm: bool) -> list[float]:
    """One block of lines per shape: the CPU kernel, then NumPy and MMA-Sim
    where they run within their budgets. Returns the CPU kernel's rates
    per CPU-second."""
    rates = []
    for m, k, n in shapes:
        floats, bits, scales = operands(p, m, k, n)
        products = m * n * k
        fn = run_cpu(p, bits, scales)
        fn()                                                  # compiles (or loads) the modules
        wall, cpu_s, d = timed(fn)
        rates.append(products / cpu_s)
        tm, tn, tasks = cpu.task_list(m, n, cpu.cpu_count())
        print(f"  {m} x {k} x {n} (cpu kernel: tiles of {tm} x {tn}, {len(tasks)} tasks)")
        print("    " + row("cpu kernel", products, wall, cpu_s, memory(fn)))
        others = []
        if products <= args.numpy_products:
            others.append(("numpy", run_numpy(p, bits, scales)))
        if mm and products <= args.mmasim_products and p.name in MMASIM:
            others.append(("MMA-Sim (torch)", run_mmasim(p, floats)))
        for label, fn in others:
            w, c, out = timed(fn)
            same = np.array_equal(np.asarray(out, dtype=np.uint64), d)
            if not same:
                DIFFERENT.append(f"{label} at {m} x {k} x {n}")
            note = f"  bits {'identical' if same else 'DIFFERENT'}"
            print("    " + row(label, products, w, c, memory(fn)) + note)
    return rates


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="seconds: fewer and smaller cases")
    ap.add_argument("--model", default="hopper-fp16-fp32")
    ap.add_argument("--numpy-products", type=float, default=2e7)
    ap.add_argument("--mmasim-products", type=float, default=1e5)
    args = ap.parse_args()
    if args.short:
        args.numpy_products = min(args.numpy_products, 2e6)
        args.mmasim_products = min(args.mmasim_products, 1e5)
    p = choose(args.model)
    mm = have_mmasim()
    threads = cpu.cpu_count()
    print(f"bench_growth: {p.name}, {threads} cores, {load()}"
          + ("" if mm else "; MMA-Sim not importable: its lines are left out"))
    ks = [10 ** 3, 10 ** 4] if args.short else [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6]
    compile_table(p, ks, [] if args.short else [x for x in KINDS if x != p.name])
    print(f"\nGrowth with K, D of 10 x 10 ({load()}):\n" + HEADER)
    rates = shape_rows(p, [(10, k, 10) for k in ks], args, mm)
    sizes = [(10, 10), (64, 64)] if args.short else [(10, 10), (64, 64), (128, 128), (256, 256), (512, 512)]
    k = 512 if args.short else 4096
    print(f"\nGrowth with M and N, K = {k} ({load()}):\n" + HEADER)
    shape_rows(p, [(m, k, n) for m, n in sizes], args, mm)
    size = 128 if args.short else 512
    floats, bits, scales = operands(p, size, size, size)
    run_cpu(p, bits, scales, 1)()
    wall, cpu_s, _ = timed(run_cpu(p, bits, scales, 1))
    one = size ** 3 / cpu_s
    print(f"\nOne core at {size}^3: {one / 1e6:.1f} M products per CPU-second ({load()}); "
          f"10 x {ks[-1]} x 10 on every core: {rates[-1] / 1e6:.1f} M/CPU-s, "
          f"{rates[-1] / one:.2f} of it")
    if DIFFERENT:
        print("bits differ from the CPU kernel's: " + "; ".join(DIFFERENT))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
