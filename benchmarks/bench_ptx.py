"""Seconds to compile a model's CUDA kernels to PTX (Numba and NVVM, for
sm_90; no GPU needed), with the steps kernel's loop body cut into basic
blocks of kernel_source.CHUNK lines as it ships and as one block (CHUNK
= 0), side by side in one process, and whether both give the same PTX
(the generated names aside).

    python benchmarks/bench_ptx.py [MODEL ...] [--k K] [--short]

Each model compiles for a call of length K (default: twice its block
size), which runs the kernels of one full block shape, start and end.
Numba's CUDA target (numba-cuda where installed, else Numba's own) is
printed with the figures, and the load average beside them (the machine
is shared). ``--short``: hopper-fp16-fp32 (seconds).

Measured on the development machine (2 shared cores, 28 November 2026,
load 0.7 to 1.0), numba-cuda 0.30.4 with NVRTC 13.5, NVVM of CUDA 13.0:

    hopper-fp16-fp32   K = 32      6.4 s cut    25.7 s whole   4.0x   same PTX
    hopper-e4m3-fp32   K = 64     24.6 s cut    94.9 s whole   3.9x   same PTX
    blackwell-nvfp4    K = 128    17.7 s cut   108.8 s whole   6.1x   same PTX

With Numba's own CUDA target (numba 0.68.1, which CI installs: it counts
a block's assignments once), blackwell-nvfp4 at K = 64: 16.8 s cut, 18.3 s
whole; hopper-fp16-fp32 at K = 32: 5.1 s cut, 4.7 s whole. On the H100
(numba-cuda 0.30.4), with the kernels whole, the first GEMM call, which
compiles them, took 29.7 s (hopper-fp16-fp32) and 100.3 s
(hopper-e4m3-fp32), and blackwell-nvfp4's did not end in 190 s.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

from tcsmt.errors import UserError
from tcsmt.interp import kernel_source
from tcsmt.model.choose import choose
from tcsmt.sim import kernels

DEFAULT = ["hopper-fp16-fp32", "hopper-e4m3-fp32", "blackwell-nvfp4"]
SHORT = ["hopper-fp16-fp32"]


def target() -> str:
    try:
        from importlib.metadata import version
        return f"numba-cuda {version('numba-cuda')}"
    except Exception:
        import numba
        return f"Numba's own CUDA target (numba {numba.__version__})"


def compile_ptx(name: str, k: int, chunk: int) -> tuple[float, dict[str, list[str]]]:
    """Seconds to compile, and each kernel's PTX lines with the generated
    names abstracted and comments left out."""
    saved = kernel_source.CHUNK
    kernel_source.CHUNK = chunk
    kernels.cuda_module.cache_clear()
    try:
        t0 = time.perf_counter()
        ptx = kernels.cuda_ptx(choose(name), k, cc=(9, 0))
        seconds = time.perf_counter() - t0
    finally:
        kernel_source.CHUNK = saved
        kernels.cuda_module.cache_clear()
    return seconds, {n: [re.sub(r"\S*tcsmt_kernel_cuda_\w+", "NAME", line) for line in text.splitlines()
                         if not line.strip().startswith("//")] for n, text in ptx.items()}


def _refuse(why: str) -> None:
    """Bad input: one line on stderr, exit status 2 (as the command line's)."""
    print(f"error: {why}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--k", type=int)
    ap.add_argument("--short", action="store_true", help="hopper-fp16-fp32 only (seconds)")
    args = ap.parse_args()
    names = args.models or (SHORT if args.short else DEFAULT)
    if args.k is not None and args.k < 1:
        _refuse("--k must be at least 1")
    for name in names:
        try:
            choose(name)
        except UserError as e:
            _refuse(str(e))
    print(f"bench_ptx: {target()}, sm_90, load average {os.getloadavg()[0]:.1f}")
    try:
        kernels.cuda_ptx(choose("volta-fp16-fp32"), 4, cc=(9, 0))
    except Exception as e:          # no NVVM (the CUDA toolkit's compiler library) or no Numba
        print(f"bench_ptx: cannot compile CUDA kernels here ({type(e).__name__}: {e}); nothing measured")
        return
    for name in names:
        k = args.k or 2 * choose(name).block_size
        cut, ptx_cut = compile_ptx(name, k, kernel_source.CHUNK)
        whole, ptx_whole = compile_ptx(name, k, 0)
        same = "same PTX" if ptx_cut == ptx_whole else "PTX DIFFERS"
        lines = max(len(v) for v in ptx_cut.values())
        print(f"  {name:<26} K = {k:<5} {cut:7.1f} s cut {whole:7.1f} s whole {whole / cut:5.1f}x   "
              f"{same} (longest kernel {lines} PTX lines)")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
