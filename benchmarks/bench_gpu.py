"""Products per second of the CUDA kernels on a GPU, side by side with
MMA-Sim on the same device, for the shipped fp16, fp8 and NVFP4 models.

    python benchmarks/bench_gpu.py [--short] [--size 8192] [--repeat 3]
                                   [--mmasim-rows N]

For hopper-fp16-fp32, hopper-e4m3-fp32 and blackwell-nvfp4 (e2m1 with
ue4m3 scales per 16 products) it computes D = C + A @ B at size^3 with
the CUDA kernels (tcsmt.sim.kernels.run_cuda, the operands' bits already
on the device: transfers are not timed) and with MMA-Sim (torch on the
device) on the first --mmasim-rows rows of the same operands (rows are
independent dot products: the rate is that of the whole product), and
prints the products per second of each, their ratio, whether the bits are
identical on the rows both ran, and the device, its driver, the CUDA
toolkit and Numba that ran them. "first call" includes compiling the
kernels. --short runs 1024^3 once (a check that the kernels run on the
device). Without a CUDA device it says so and exits 0: nothing is
measured. The exit status is 1 when bits differ.

Needs Numba's CUDA target (pip install ".[cuda]") and, for the MMA-Sim
lines, torch with CUDA and mmasim.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_kernels import CASES, inputs, mmasim_op  # noqa: E402

from tcsmt.model.choose import choose  # noqa: E402
from tcsmt.sim import kernels  # noqa: E402
from tcsmt.sim.batch import matmul_bits  # noqa: E402
from tcsmt.sim.npio import to_bits  # noqa: E402

MODELS = ["hopper-fp16-fp32", "hopper-e4m3-fp32", "blackwell-nvfp4"]


def device_line() -> str:
    """The device, its driver, the CUDA toolkit (nvcc) and Numba."""
    import numba
    from numba import config, cuda
    if config.ENABLE_CUDASIM:
        return f"Numba's CUDA simulator (no device: a check of the code path only), Numba {numba.__version__}"
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
    driver = cuda.cudadrv.driver.driver.get_version()
    runtime = cuda.runtime.get_version()
    nvcc = "nvcc not found"
    if shutil.which("nvcc"):
        out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip()
        nvcc = out.splitlines()[-1] if out else nvcc
    return (f"{name} (compute capability {'.'.join(map(str, dev.compute_capability))}), "
            f"driver CUDA {driver[0]}.{driver[1]}, runtime {runtime[0]}.{runtime[1]}, {nvcc}, "
            f"Numba {numba.__version__}")


def on_device(p, A, B, C, SA, SB):
    """The operands' bits as device arrays (A [M, K], B [K, N], C [M, N],
    the scales [S, M] and [S, N])."""
    from numba import cuda
    arrs = [to_bits(A, p.fin, "A"), to_bits(B, p.fb, "B"), to_bits(C, p.fc, "C")]
    if SA is not None:
        arrs += [np.ascontiguousarray(to_bits(SA, p.fscale, "SA").T), to_bits(SB, p.fscale, "SB")]
    return [cuda.to_device(np.ascontiguousarray(x, dtype=np.uint64)) for x in arrs]


def timed_cuda(p, args_dev, repeat: int):
    """(first call's seconds, best of ``repeat``, D's bits on the host)."""
    from numba import cuda
    a, b, c = args_dev[:3]
    sa, sb = (args_dev[3], args_dev[4]) if len(args_dev) > 3 else (None, None)

    def call():
        d = kernels.run_cuda(p, a, b, c, sa=sa, sb=sb)
        cuda.synchronize()
        return d
    t = time.perf_counter()
    d = call()
    first = time.perf_counter() - t
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        d = call()
        best = min(best, time.perf_counter() - t)
    return first, best, d.copy_to_host()


def timed_mmasim(case, p, A, B, C, SA, SB, rows: int, repeat: int):
    import torch
    run = mmasim_op(case, p, "cuda")(A[:rows], B, C[:rows], None if SA is None else SA[:rows], SB)

    def call():
        out = run()
        torch.cuda.synchronize()
        return out
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t)
    return best, to_bits(out.cpu().numpy(), p.fout, "D")


def cpu_rows(p, A, B, C, SA, SB) -> np.ndarray:
    """D's bits of these rows from the CPU kernel."""
    sa = None if SA is None else np.ascontiguousarray(to_bits(SA[:len(A)], p.fscale, "SA").T)
    sb = None if SB is None else to_bits(SB, p.fscale, "SB")
    return matmul_bits(p, np.ascontiguousarray(to_bits(A, p.fin, "A").T), to_bits(B, p.fb, "B"),
                       to_bits(C, p.fc, "C"), backend="cpu", sa=sa, sb=sb)


def have_mmasim_cuda() -> str | None:
    try:
        import mmasim  # noqa: F401
        import torch
    except ImportError as e:
        return f"MMA-Sim not importable ({e})"
    return None if torch.cuda.is_available() else "torch sees no CUDA device"


def bench(case, size: int, repeat: int, rows: int, mm_missing: str | None) -> bool:
    """Prints one line; whether every comparison found the same bits."""
    p = choose(case.model)
    A, B, C, SA, SB = inputs(p, size, size, size)
    first, best, d = timed_cuda(p, on_device(p, A, B, C, SA, SB), repeat)
    products = size ** 3
    few = min(size, 16)
    same_cpu = np.array_equal(d[:few], cpu_rows(p, A[:few], B, C[:few], SA, SB))
    line = (f"  {case.label:42s} cuda kernel {products / best / 1e9:8.2f} G/s "
            f"(first call {first:6.1f} s; bits {'identical to' if same_cpu else 'DIFFERENT from'} "
            f"the CPU kernel's on {few} rows)")
    if mm_missing is None:
        rows = min(rows, size)
        seconds, ref = timed_mmasim(case, p, A, B, C, SA, SB, rows, repeat)
        rate = rows * size * size / seconds
        same = np.array_equal(d[:rows], ref)
        line += (f" | MMA-Sim {rate / 1e9:8.3f} G/s on {rows} rows | {rate and products / best / rate:7.1f}x"
                 f" | bits {'identical' if same else 'DIFFERENT'} on {rows} rows")
        same_cpu &= same
    print(line, flush=True)
    return same_cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="1024^3 once: the kernels run on the device")
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mmasim-rows", type=int, default=256)
    args = ap.parse_args()
    if not kernels.cuda_available():
        print("bench_gpu: no CUDA device (numba.cuda finds none): nothing measured")
        return 0
    size, repeat = (1024, 1) if args.short else (args.size, args.repeat)
    mm_missing = have_mmasim_cuda()
    print(f"bench_gpu: {size}^3, {device_line()}"
          + (f"; {mm_missing}: MMA-Sim's column is left out" if mm_missing else ""))
    same = [bench(case, size, repeat, args.mmasim_rows, mm_missing) for case in CASES if case.model in MODELS]
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
