"""The torch face of tcsmt.quant: rounding tensors into a format, the
torch dtypes of a model's formats, and block-scaled quantisation. One
implementation (tcsmt.quant, NumPy) behind it: a tensor is read on the
host and the result goes back to its device.
"""

from __future__ import annotations

import numpy as np
import torch

from tcsmt.errors import UserError
from tcsmt.model.formats import Format, get_format
from tcsmt.model.params import ModelParams
from tcsmt.quant import quantize as np_quantize
from tcsmt.quant import round_to as np_round_to
from tcsmt.torch.bits import has_torch_dtype, torch_dtype
from tcsmt.torch.operands import QuantizedTensor, from_numpy


def _host(t: torch.Tensor, name: str) -> np.ndarray:
    if not isinstance(t, torch.Tensor) or not t.is_floating_point():
        raise UserError(f"{name} must be a floating-point tensor")
    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def round_to(t: torch.Tensor, fmt: str | Format, mode: str = "rne") -> torch.Tensor:
    """t rounded into ``fmt`` with ``mode`` (rne, rz, ru, rd; see
    tcsmt.quant.round_to), on t's device: in fmt's torch dtype where torch
    has one (float16, bfloat16, float8_*), else float32 holding the rounded
    values (tf32 and xf32, whose low 13 bits are then zero; fp6; fp4)."""
    f = get_format(fmt) if isinstance(fmt, str) else fmt
    r = np_round_to(_host(t, "t"), f, mode)
    if f.storage_shift or not has_torch_dtype(f):
        return torch.from_numpy(np.asarray(r, dtype=np.float32)).to(t.device)
    r = np.ascontiguousarray(r)
    if r.dtype.itemsize >= 4:
        return torch.from_numpy(r).to(t.device)
    raw = r.view(np.uint8 if r.dtype.itemsize == 1 else np.int16)
    return torch.from_numpy(raw).view(torch_dtype(f)).to(t.device)


def dtypes(model: ModelParams) -> dict[str, torch.dtype | None]:
    """The torch dtype of each of a model's formats (a, b, c, d, and scale
    for a block-scaled model): None where torch has no unpacked dtype
    (fp6, fp4); tf32 float32 (the unit reads its top 19 bits); ue4m3
    float8_e4m3fn (its sign ignored); ue8m0 float8_e8m0fnu."""
    p = model

    def one(fmt):
        return torch_dtype(fmt) if fmt is not None and has_torch_dtype(fmt) else None
    return {"a": one(p.fin), "b": one(p.fb), "c": one(p.fc), "d": one(p.fout), "scale": one(p.fscale)}


def quantize(t: torch.Tensor, recipe: str = "mx-floor", elem: str = "e4m3", block: int | None = None,
             axis: int = -1, per_tensor_scale="dynamic") -> QuantizedTensor:
    """t in a block-scaled format by a named recipe, bit for bit as torchao
    quantises (tcsmt.quant.quantize: mx-floor, mx-ceil, mx-even, mx-rceil,
    mx-rceil-exact, nvfp4, nvfp4-block), on t's device."""
    pts = per_tensor_scale
    if isinstance(pts, torch.Tensor):
        pts = np.float32(pts.item())
    q = np_quantize(_host(t, "t"), recipe, elem, block, axis, pts)
    return from_numpy(q, t.device)
