"""tcsmt's batch simulator against MMA-Sim on the same GEMMs, on one core.

    python benchmarks/bench_gemm.py [--size 256] [--repeat 3] [--short]

For each case (256 x 256 x 256 by default: fp16 -> fp32 under Ampere and
Hopper, fp8 e4m3 -> fp32 under Hopper) both tools compute D = C + A @ B
from the same random inputs; the script prints products per second
(M * N * K / seconds) for each, their ratio, and whether the outputs are
bit for bit identical. tcsmt (its NumPy engine) is timed twice: "first"
is a call in a fresh cache (it records the chain's programs, see
tcsmt/interp/chain.py), "again" the best of the repeats after it. MMA-Sim
is timed as the best of the repeats. Nothing here asserts a speed. The
batch simulator is asked for by name (backend="numpy"): from 2^24
products (256^3) tcsmt.matmul's default is the compiled kernel, which
benchmarks/bench_kernels.py times.

MMA-Sim: pip install torch==2.13.0 && pip install mmasim (torch first, or
pip pulls a CUDA build of several GB).
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"          # one core, before numpy and torch load
os.environ["MKL_NUM_THREADS"] = "1"
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from tcsmt.api import matmul  # noqa: E402
from tcsmt.interp import chain  # noqa: E402

CASES = [
    # (label, tcsmt model, MMA-Sim class, arch, shape_and_type, input dtype)
    ("ampere fp16->fp32", "ampere-fp16-fp32", "MMA", "Ampere", "m16n8k16.f32.f16.f16.f32", np.float16),
    ("hopper fp16->fp32", "hopper-fp16-fp32", "MMA", "Hopper", "m16n8k16.f32.f16.f16.f32", np.float16),
    ("hopper e4m3->fp32", "hopper-e4m3-fp32", "WGMMA", "Hopper", "m64n256k32.f32.e4m3.e4m3",
     ml_dtypes.float8_e4m3fn),
]


def inputs(n: int, dtype, seed: int = 0):
    """Random normal A, B (rounded to dtype, as a kernel would) and fp32 C."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(np.float32).astype(dtype)
    b = rng.standard_normal((n, n)).astype(np.float32).astype(dtype)
    c = rng.standard_normal((n, n)).astype(np.float32)
    return a, b, c


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def run_mmasim(cls: str, arch: str, shape: str, a, b, c, repeat: int):
    import torch
    from mmasim import nv_ptx

    torch.set_num_threads(1)
    op = getattr(nv_ptx, cls)(arch, shape)
    ta = torch.from_numpy(a.view(np.uint8 if a.itemsize == 1 else np.int16))
    tb = torch.from_numpy(b.view(np.uint8 if b.itemsize == 1 else np.int16))
    ta, tb = ta.view(op.a_type), tb.view(op.b_type)
    tc = torch.from_numpy(c)
    seconds, d = best_of(lambda: op(ta, tb, tc), repeat)
    return seconds, d.numpy()


def run_tcsmt(model: str, a, b, c, repeat: int):
    chain.clear()
    t = time.perf_counter()
    d = matmul(a, b, c, arch=model, backend="numpy")
    first = time.perf_counter() - t
    again, d2 = best_of(lambda: matmul(a, b, c, arch=model, backend="numpy"), repeat)
    assert np.array_equal(d.view(np.uint32), d2.view(np.uint32))
    return first, again, d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256, help="M = N = K (default 256)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--short", action="store_true", help="32x32x32, once (seconds)")
    args = ap.parse_args()
    if args.short:
        args.size, args.repeat = 32, 1
    n = args.size
    products = n * n * n
    try:
        import mmasim  # noqa: F401
        have_mmasim = True
    except ImportError as e:
        have_mmasim = False
        print(f"MMA-Sim not importable ({e}); timing tcsmt only")
    print(f"{n}x{n}x{n} GEMMs, one core; products per second (M*N*K / seconds)")
    for label, model, cls, arch, shape, dtype in CASES:
        a, b, c = inputs(n, dtype)
        first, again, d = run_tcsmt(model, a, b, c, args.repeat)
        line = (f"{label:18s} tcsmt {products / first / 1e6:7.1f} M/s first call, "
                f"{products / again / 1e6:7.1f} M/s again")
        if have_mmasim:
            seconds, dm = run_mmasim(cls, arch, shape, a, b, c, args.repeat)
            same = np.array_equal(d.view(np.uint32), dm.view(np.uint32))
            ms = products / seconds / 1e6
            line += (f" | MMA-Sim {ms:7.1f} M/s | ratio {seconds / first:5.1f}x first, "
                     f"{seconds / again:5.1f}x again | outputs {'identical' if same else 'DIFFER'}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
