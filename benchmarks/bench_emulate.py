"""tcsmt.torch.emulate on an NVFP4 product, beside torchao's
quantise-then-fp32 matmul and MMA-Sim, on the same inputs, in one run.

    python benchmarks/bench_emulate.py            # 4096 x 4096 x 4096
    python benchmarks/bench_emulate.py --short    # 256^3: seconds, what CI runs

A and B are float32 normal tensors. Each engine's figure is M * N * K /
seconds of one call (products per second), quantisation included:

* emulate: ``with tcsmt.torch.emulate("blackwell-nvfp4", backend="cpu"):
  A @ B``: the two-level NVFP4 recipe (tcsmt.quant, bit for bit
  torchao's), then the unit's block-scaled accumulation in the compiled
  CPU kernel on every core, then the per-tensor scales. The kernel is
  compiled (or loaded from Numba's cache) by a first call on a few rows,
  which is not timed; the seconds of quantising are printed apart.
* torchao: NVFP4Tensor.to_nvfp4 on both operands, dequantised, and a
  float32 torch.matmul on every core: what a GPU-less user of torchao
  gets. Not the unit's arithmetic: the outputs that differ from
  emulate's are counted.
* MMA-Sim (2.1.1): its tcgen05 kind::mxf4nvf4 block16 ue4m3 instruction
  over the whole K in one call, on the same quantised operands, on the
  first rows of A only when the whole would take too long (the script
  says how many; rows are independent dot products, so the rate is that
  of the whole product); its D, times the per-tensor scales, is compared
  with emulate's rows bit for bit.

Nothing here asserts a speed; the load average is printed beside the
figures (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import torch

import tcsmt.torch as tt


def products_per_second(m: int, n: int, k: int, seconds: float) -> str:
    return f"{m * n * k / seconds / 1e6:10.1f} M/s"


def run_emulate(A, B):
    """emulate()'s D, its seconds, and the seconds of quantising alone."""
    with torch.no_grad(), tt.emulate("blackwell-nvfp4", backend="cpu"):
        A[:8] @ B                                     # compiles (or loads) the kernel for this K
        start = time.perf_counter()
        D = A @ B
        seconds = time.perf_counter() - start
    start = time.perf_counter()
    tt.quantize(A, "nvfp4", "e2m1"), tt.quantize(B, "nvfp4", "e2m1", axis=0)
    return D, seconds, time.perf_counter() - start


def run_torchao(A, B):
    """torchao: quantise both operands to NVFP4, dequantise, float32 matmul."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale
    NVFP4Tensor.to_nvfp4(A[:16, :64].contiguous()).dequantize(torch.float32)   # first call, not timed
    start = time.perf_counter()
    qa = NVFP4Tensor.to_nvfp4(A, per_tensor_scale=per_tensor_amax_to_scale(torch.max(torch.abs(A))))
    bt = B.t().contiguous()
    qb = NVFP4Tensor.to_nvfp4(bt, per_tensor_scale=per_tensor_amax_to_scale(torch.max(torch.abs(bt))))
    D = qa.dequantize(torch.float32) @ qb.dequantize(torch.float32).t()
    return D, time.perf_counter() - start


def run_mmasim(A, B, rows: int):
    """MMA-Sim on the first ``rows`` rows of A (the same quantised operands)."""
    from tcsmt.model.choose import choose
    from tcsmt.peer import mmasim
    from tcsmt.sim.npio import to_bits
    p = choose("blackwell-nvfp4")
    qa, qb = tt.quantize(A, "nvfp4", "e2m1"), tt.quantize(B, "nvfp4", "e2m1", axis=0)
    na, nb = qa.numpy(), qb.numpy()               # the per-tensor scale is the whole of A's
    na = type(na)(na.elements[:rows], na.scales[:rows], na.block, na.axis, na.recipe, na.per_tensor_scale)
    op = mmasim.operation("TCGen05MMABlockScale", "Blackwell",
                          "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3")
    ta = mmasim.operand(op, to_bits(na.elements, p.fin, "A"), p.fin, "a")
    tb = mmasim.operand(op, to_bits(nb.elements, p.fb, "B").T, p.fb, "b").T
    c = torch.zeros(rows, B.shape[1])
    start = time.perf_counter()
    acc = op(ta, tb, c, qa.scales[:rows], qb.scales)
    seconds = time.perf_counter() - start
    alpha = np.float32(np.float32(na.per_tensor_scale) * np.float32(nb.per_tensor_scale))
    return torch.from_numpy(acc.numpy() * alpha), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    ap.add_argument("--short", action="store_true", help="256^3, for CI: seconds")
    ap.add_argument("--mmasim-rows", type=int, default=None,
                    help="rows of A MMA-Sim runs (default: 2*10^8 of its products, --short 2*10^6)")
    args = ap.parse_args()
    size = 256 if args.short else args.size
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    A, B = torch.randn(size, size, generator=g), torch.randn(size, size, generator=g)
    print(f"NVFP4 (blackwell-nvfp4: e2m1, ue4m3 per 16, fp32 per tensor), {size}^3, "
          f"{threads} cores, load average {os.getloadavg()[0]:.1f}")
    D, t_emu, t_quant = run_emulate(A, B)
    print(f"  emulate (cpu kernel)       {products_per_second(size, size, size, t_emu)}  "
          f"{t_emu:8.2f} s  (quantising both operands: {t_quant:.2f} s)")
    ref, t_ao = run_torchao(A, B)
    differ = int((ref != D).sum())
    print(f"  torchao quantise + fp32    {products_per_second(size, size, size, t_ao)}  {t_ao:8.2f} s  "
          f"(not the unit: {differ} of {size * size} outputs differ from emulate's, "
          f"largest |difference| {(ref - D).abs().max().item():.3g})")
    budget = 2e6 if args.short else 2e8        # MMA-Sim's products: seconds, or about a minute
    rows = args.mmasim_rows or max(8, min(size, int(budget // (size * size))))
    ms, t_ms = run_mmasim(A, B, rows)
    same = torch.equal(ms.view(torch.int32), D[:rows].contiguous().view(torch.int32))
    part = "" if rows == size else f" on the first {rows} of {size} rows"
    print(f"  MMA-Sim                    {products_per_second(rows, size, size, t_ms)}  {t_ms:8.2f} s"
          f"{part}  ({'identical bits' if same else 'DIFFERENT bits'} on those rows)")
    print(f"  emulate / torchao {t_ao / t_emu:.2f}x, emulate / MMA-Sim "
          f"{(t_ms / (rows * size * size)) / (t_emu / size ** 3):.1f}x (products per second)")


if __name__ == "__main__":
    main()
