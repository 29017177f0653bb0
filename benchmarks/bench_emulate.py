"""tcsmt.torch.emulate on an NVFP4 product, beside torchao's
quantise-then-fp32 matmul and MMA-Sim, on the same inputs, in one run.

    python benchmarks/bench_emulate.py            # 4096 x 4096 x 4096
    python benchmarks/bench_emulate.py --short    # 256^3: seconds, what CI runs

A and B are float32 normal tensors. Each engine's figure is M * N * K /
seconds of one call (products per second), quantisation included, by the
wall clock and per CPU-second (products / CPU seconds of every thread of
the process: what the engine does with the cores it gets, the figure to
compare on a shared machine):

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


class Clock:
    """Wall-clock and CPU seconds (every thread of this process) of a block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def rates(products: int, t: Clock) -> str:
    return (f"{products / t.wall / 1e6:9.1f} M/s {products / t.cpu / 1e6:9.1f} M/CPU-s "
            f"{t.wall:8.2f} s")


def run_emulate(A, B):
    """emulate()'s D, its seconds, and the seconds of quantising alone."""
    with torch.no_grad(), tt.emulate("blackwell-nvfp4", backend="cpu"):
        A[:8] @ B                                     # compiles (or loads) the kernel for this K
        with Clock() as t:
            D = A @ B
    with Clock() as q:
        tt.quantize(A, "nvfp4", "e2m1"), tt.quantize(B, "nvfp4", "e2m1", axis=0)
    return D, t, q


def run_torchao(A, B):
    """torchao: quantise both operands to NVFP4, dequantise, float32 matmul."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale
    NVFP4Tensor.to_nvfp4(A[:16, :64].contiguous()).dequantize(torch.float32)   # first call, not timed
    with Clock() as t:
        qa = NVFP4Tensor.to_nvfp4(A, per_tensor_scale=per_tensor_amax_to_scale(torch.max(torch.abs(A))))
        bt = B.t().contiguous()
        qb = NVFP4Tensor.to_nvfp4(bt, per_tensor_scale=per_tensor_amax_to_scale(torch.max(torch.abs(bt))))
        D = qa.dequantize(torch.float32) @ qb.dequantize(torch.float32).t()
    return D, t


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
    with Clock() as t:
        acc = op(ta, tb, c, qa.scales[:rows], qb.scales)
    alpha = np.float32(np.float32(na.per_tensor_scale) * np.float32(nb.per_tensor_scale))
    return torch.from_numpy(acc.numpy() * alpha), t


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
    products = size ** 3
    print(f"  {'':26s} {'wall':>13s} {'per CPU-second':>17s}")
    D, t_emu, t_quant = run_emulate(A, B)
    print(f"  emulate (cpu kernel)       {rates(products, t_emu)}  (quantising both operands "
          f"alone: {t_quant.wall:.2f} s)")
    ref, t_ao = run_torchao(A, B)
    differ = int((ref != D).sum())
    print(f"  torchao quantise + fp32    {rates(products, t_ao)}  (not the unit: {differ} of "
          f"{size * size} outputs differ from emulate's, largest |difference| "
          f"{(ref - D).abs().max().item():.3g})")
    budget = 2e6 if args.short else 2e8        # MMA-Sim's products: seconds, or about a minute
    rows = args.mmasim_rows or max(8, min(size, int(budget // (size * size))))
    ms, t_ms = run_mmasim(A, B, rows)
    same = torch.equal(ms.view(torch.int32), D[:rows].contiguous().view(torch.int32))
    part = "" if rows == size else f" on the first {rows} of {size} rows"
    print(f"  MMA-Sim                    {rates(rows * size * size, t_ms)}{part}  "
          f"({'identical bits' if same else 'DIFFERENT bits'} on those rows)")
    for label, t in (("wall", "wall"), ("per CPU-second", "cpu")):
        emu = products / getattr(t_emu, t)
        print(f"  emulate's rate {label}: {emu / (products / getattr(t_ao, t)):.3f}x torchao's, "
              f"{emu / (rows * size * size / getattr(t_ms, t)):.1f}x MMA-Sim's")

if __name__ == "__main__":
    main()
