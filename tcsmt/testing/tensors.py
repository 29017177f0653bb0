"""torch operands for tcsmt.testing: the same bits tcsmt.torch.matmul
reads (floats rounded to nearest even into the model's formats; for a
block-scaled model, quantised by the recipe, or QuantizedTensors and
torchao tensors as they are)."""

from __future__ import annotations

import numpy as np
import torch

from tcsmt.errors import FormatMismatch
from tcsmt.model.params import ModelParams
from tcsmt.testing.product import Product
from tcsmt.torch import matmul, model_of
from tcsmt.torch.bits import to_bits_np, torch_dtype
from tcsmt.torch.operands import operand


def torch_product(A, B, C, model, recipe, backend) -> Product:
    p = model_of(model)
    D = matmul(A, B, C, model=p, backend=backend, recipe=recipe)
    m, n = D.shape
    zeros = np.zeros((m, n), dtype=np.uint64)
    if not p.scale_format:
        Cm = torch.zeros(m, n) if C is None else C.expand(m, n)
        return Product(p, to_bits_np(A, p.fin, "A"), to_bits_np(B.t(), p.fb, "B"),
                       to_bits_np(Cm, p.fc, "C"), tensor_bits(D, p))
    ra, rb = operand(p, A, "a", recipe), operand(p, B, "b", recipe)
    pts = [s for s in (ra.per_tensor_scale, rb.per_tensor_scale) if s is not None]
    alpha = np.float32(np.prod(np.asarray(pts, dtype=np.float32), dtype=np.float32)) if pts else None
    if C is None or alpha is not None:
        c = zeros
    else:
        c = to_bits_np(C.expand(m, n), p.fc, "C")
    return Product(p, ra.bits, rb.bits, c, tensor_bits(D, p), ra.scales, rb.scales, alpha)


def tensor_bits(D: torch.Tensor, p: ModelParams) -> np.ndarray:
    """D (a tensor of the model's output dtype, any device) as bits."""
    want = torch_dtype(p.fout)
    if D.dtype != want:
        raise FormatMismatch(f"D has dtype {D.dtype}; {p.name} writes {p.fout.name}: "
                             f"pass the kernel's D as {want}")
    return to_bits_np(D.detach().cpu(), p.fout, "D")
