"""D = C + A @ B on a block-scaled unit (MX, NVFP4) from torch operands.

A and B are quantised (or passed through: tcsmt.torch.operands), the unit
multiplies the elements, scales each product by its blocks' scales and
accumulates them as the model's datapath does (tcsmt.datapath, through
the compiled CPU kernel or, for CUDA tensors, the CUDA kernel), then:

* without per-tensor scales, C enters the accumulation as the unit's c
  (as cuBLAS's addmm does with a bias) and D is the unit's output;
* with NVFP4's per-tensor scales, D = unit(A, B, c = 0) x (scale of A x
  scale of B) and then + C, each step rounded to float32: the epilogue's
  alpha and bias, in the order torchao applies them (the unit's c cannot
  hold C, which the scale would multiply too).

Forward only: the result carries no autograd history. The quantisation
runs on the host, so CUDA operands make one round trip for it; the
product runs on the device.
"""

from __future__ import annotations

import numpy as np
import torch

from tcsmt.errors import ShapeError
from tcsmt.model.params import ModelParams
from tcsmt.torch.bits import from_bits_np, to_bits_np
from tcsmt.torch.operands import operand


def scaled_matmul(p: ModelParams, A, B, C, recipe: str | None = None, backend: str | None = None,
                  a_recipe=None, a_per_tensor="dynamic") -> torch.Tensor:
    """D [M, N] (float32, on A's device) for A [M, K] and B [K, N] under a
    block-scaled model (see the module doc); ``recipe`` quantises float
    operands (the model's by default), ``a_recipe`` and ``a_per_tensor``
    A alone where they are given."""
    from tcsmt.sim.batch import matmul_bits
    device = A.device
    ra = operand(p, A, "a", a_recipe or recipe, a_per_tensor)
    rb = operand(p, B, "b", recipe)
    (m, k), (n, k2) = ra.bits.shape, rb.bits.shape
    if k != k2:
        raise ShapeError(f"A is {m}x{k} and B is {k2}x{n}: A's columns must equal B's rows")
    scales = [s for s in (ra.per_tensor_scale, rb.per_tensor_scale) if s is not None]
    alpha = None if not scales else np.prod(np.asarray(scales, dtype=np.float32), dtype=np.float32)
    if C is not None and alpha is None:
        ct = to_bits_np(C.expand(m, n).detach().cpu(), p.fc, "C")
    else:
        ct = np.zeros((m, n), dtype=np.uint64)
    if backend is None and device.type == "cuda":
        backend = "cuda"
    d = matmul_bits(p, np.ascontiguousarray(ra.bits.T), np.ascontiguousarray(rb.bits.T), ct,
                    backend=backend, sa=np.ascontiguousarray(ra.scales.T),
                    sb=np.ascontiguousarray(rb.scales.T))
    D = from_bits_np(d, p.fout, "cpu").float()
    if alpha is not None:
        D = D * torch.tensor(alpha)
        if C is not None:
            D = D + C.detach().cpu().float()
    return D.to(device)


def scaled_batched(p: ModelParams, A, B, recipe, backend) -> torch.Tensor:
    """torch.matmul's shapes for a block-scaled model: 2-D, or batches of
    2-D products, each quantised on its own (as torchao's bmm does)."""
    if A.dim() == 2 and B.dim() == 2:
        return scaled_matmul(p, A, B, None, recipe, backend)
    if A.dim() < 2 or B.dim() < 2:
        raise ShapeError("a block-scaled product takes matrices or batches of them, not vectors")
    batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    a = A.expand(*batch, *A.shape[-2:]).reshape(-1, *A.shape[-2:])
    b = B.expand(*batch, *B.shape[-2:]).reshape(-1, *B.shape[-2:])
    outs = [scaled_matmul(p, x, y, None, recipe, backend) for x, y in zip(a, b)]
    return torch.stack(outs).reshape(*batch, A.shape[-2], B.shape[-1])
