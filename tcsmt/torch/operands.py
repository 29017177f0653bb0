"""The operands of a block-scaled unit, from what a PyTorch user holds:
float tensors (quantised here by a named recipe, tcsmt.quant), tensors
quantised by tcsmt.torch.quantize (QuantizedTensor), or torchao's
MXTensor and NVFP4Tensor (passed through as they are: their elements,
scales and per-tensor scale, their scales unswizzled).

Every operand becomes ``Rows``: the bits of its elements [R, K] and of its
scales [R, S] with the blocks along K, one row per row of A or per column
of B, and its per-tensor scale (NVFP4) or None.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from tcsmt.errors import FormatMismatch, ShapeError
from tcsmt.model.formats import Format, get_format
from tcsmt.model.params import ModelParams
from tcsmt.quant import Quantized, quantize, recipe_for
from tcsmt.sim.npio import dtype_of, to_bits


@dataclass(frozen=True)
class Rows:
    bits: np.ndarray            # uint64 [R, K], the element format's bits
    fmt: Format
    scales: np.ndarray          # uint64 [R, S], the scale format's bits
    scale_fmt: Format
    block: int
    per_tensor_scale: np.float32 | None


@dataclass(frozen=True)
class QuantizedTensor:
    """A tensor in a block-scaled format (tcsmt.torch.quantize): ``elements``
    (fp8 in torch's float8 dtypes; fp6 and fp4, which torch has no unpacked
    dtype for, as float32 tensors holding their exact values), ``scales``
    (torch.float8_e8m0fnu for ue8m0, torch.float8_e4m3fn for ue4m3; one
    per ``block`` elements along ``axis``), ``per_tensor_scale`` (a 0-d
    float32 tensor, NVFP4's second level, or None), the element format's
    name and the recipe."""

    elements: torch.Tensor
    scales: torch.Tensor
    block: int
    axis: int
    elem: str
    recipe: str
    per_tensor_scale: torch.Tensor | None = None

    @property
    def device(self) -> torch.device:
        return self.elements.device

    @property
    def shape(self) -> torch.Size:
        return self.elements.shape

    def numpy(self) -> Quantized:
        fmt = get_format(self.elem)
        el = _to_numpy(self.elements, fmt)
        sfmt = get_format("ue8m0" if self.scales.dtype == torch.float8_e8m0fnu else "ue4m3")
        sc = self.scales.cpu().view(torch.uint8).numpy().view(dtype_of(sfmt))
        pts = None if self.per_tensor_scale is None else np.float32(self.per_tensor_scale.item())
        return Quantized(el, sc, self.block, self.axis, self.recipe, pts)

    def dequantize(self) -> torch.Tensor:
        """The values it stands for, float32, on its device."""
        return torch.from_numpy(self.numpy().dequantize()).to(self.elements.device)


def _to_numpy(t: torch.Tensor, fmt: Format) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.float32 and fmt.bits < 8:
        return t.numpy().astype(dtype_of(fmt))
    return t.view(torch.uint8).numpy().view(dtype_of(fmt))


def from_numpy(q: Quantized, device) -> QuantizedTensor:
    """tcsmt.quant's record as tensors on ``device``."""
    fmt = q.element_format
    if fmt.bits == 8:
        el = torch.from_numpy(q.elements.view(np.uint8)).view(getattr(torch, fmt.name))
    else:
        el = torch.from_numpy(q.elements.astype(np.float32))
    sdt = torch.float8_e8m0fnu if q.scales.dtype.name == "float8_e8m0fnu" else torch.float8_e4m3fn
    sc = torch.from_numpy(np.ascontiguousarray(q.scales).view(np.uint8)).view(sdt)
    pts = None if q.per_tensor_scale is None else torch.tensor(q.per_tensor_scale, device=device)
    return QuantizedTensor(el.to(device), sc.to(device), q.block, q.axis, fmt.name, q.recipe, pts)


def _rows(q: Quantized, along_rows: bool) -> Rows:
    """Rows of a quantised A (blocks along its rows, axis 1) or B (along its
    columns, axis 0)."""
    want = 1 if along_rows else 0
    if q.elements.ndim != 2 or q.axis != want:
        raise ShapeError(f"a quantised {'A' if along_rows else 'B'} must be 2-D with its blocks "
                         f"along K (axis {want}); this one is {q.elements.ndim}-D along axis {q.axis}")
    el, sc = (q.elements, q.scales) if along_rows else (q.elements.T, q.scales.T)
    fmt, sfmt = q.element_format, get_format("ue8m0" if q.scales.dtype.name == "float8_e8m0fnu" else "ue4m3")
    return Rows(to_bits(np.ascontiguousarray(el), fmt, "elements"), fmt,
                to_bits(np.ascontiguousarray(sc), sfmt, "scales"), sfmt, q.block, q.per_tensor_scale)


def operand(p: ModelParams, x, which: str, recipe: str | None, per_tensor_scale="dynamic") -> Rows:
    """A ("a", [M, K]) or B ("b", [K, N]) of a block-scaled model as Rows,
    checked against the model's formats and scale block."""
    along_rows = which == "a"
    if _is_torchao(x):
        rows = torchao_rows(x, transposed_b=not along_rows)
    elif isinstance(x, QuantizedTensor):
        rows = _rows(x.numpy(), along_rows)
    else:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise FormatMismatch(f"{which.upper()} must be a float tensor, a QuantizedTensor or a "
                                 f"torchao MXTensor/NVFP4Tensor; got {type(x).__name__}")
        xs = x.detach().cpu()
        xs = xs.float() if xs.dtype == torch.bfloat16 else xs
        fmt = p.fin if along_rows else p.fb
        q = quantize(xs.numpy(), recipe_for(p, recipe), fmt.name, p.scale_block,
                     -1 if along_rows else 0, per_tensor_scale)
        rows = _rows(q, along_rows)
    _check(p, rows, which)
    return rows


def _check(p: ModelParams, r: Rows, which: str) -> None:
    want = p.fin if which == "a" else p.fb
    if r.fmt.name != want.name or r.scale_fmt.name != p.scale_format or r.block != p.scale_block:
        raise FormatMismatch(f"{which.upper()} is {r.fmt.name} with {r.scale_fmt.name} scales per "
                             f"{r.block}; {p.name} reads {want.name} with {p.scale_format} per "
                             f"{p.scale_block}")


# ---------------------------------------------------------------------------
# torchao's tensors, as they are
# ---------------------------------------------------------------------------

def _is_torchao(x) -> bool:
    return type(x).__name__ in ("MXTensor", "NVFP4Tensor") and hasattr(x, "qdata")


_TORCHAO_ELEMENTS = {"torch.float8_e4m3fn": "e4m3", "torch.float8_e5m2": "e5m2", "fp6_e2m3": "e2m3",
                     "fp6_e3m2": "e3m2", "torch.float4_e2m1fn_x2": "e2m1"}


def torchao_rows(t, transposed_b: bool = False) -> Rows:
    """Rows of a torchao MXTensor or NVFP4Tensor (2-D): its stored rows
    (a weight [N, K] is B's rows; ``transposed_b``: t is B [K, N], a
    transposed view of such a weight)."""
    if t.qdata.dim() != 2:
        raise ShapeError(f"a torchao tensor of {t.qdata.dim()} dimensions: pass 2-D ones")
    transposed = t.qdata.stride(-2) < t.qdata.stride(-1)
    if transposed != transposed_b:
        raise ShapeError("a torchao tensor as " + ("B must be a transposed view of a [N, K] weight "
                                                   "(W.t()), as F.linear reads it" if transposed_b
                                                   else "A must hold its blocks along its rows"))
    q, s = (t.qdata.t(), t.scale.t()) if transposed else (t.qdata, t.scale)
    nvfp4 = type(t).__name__ == "NVFP4Tensor"
    elem = "e2m1" if nvfp4 else _TORCHAO_ELEMENTS[str(t.elem_dtype)]
    q = q.detach().cpu().contiguous().view(torch.uint8)
    if elem == "e2m1":
        q = torch.stack([q & 0xF, q >> 4], dim=-1).reshape(q.shape[0], -1)
    rows, k = q.shape
    if t.is_swizzled_scales:
        from torchao.prototype.mx_formats.utils import from_blocked
        s = from_blocked(s.detach().cpu().contiguous().flatten(), rows, k // t.block_size)
    fmt = get_format(elem)
    sfmt = get_format("ue4m3" if nvfp4 else "ue8m0")
    bits = q.numpy().astype(np.uint64) & np.uint64((1 << fmt.bits) - 1)
    sbits = s.detach().cpu().contiguous().view(torch.uint8).numpy().astype(np.uint64)
    pts = getattr(t, "per_tensor_scale", None)
    return Rows(bits, fmt, sbits & np.uint64((1 << sfmt.bits) - 1), sfmt, t.block_size,
                None if pts is None else np.float32(pts.item()))


def activation_recipe(weight, default: str | None):
    """(recipe, per-tensor scale) for an activation that meets a torchao
    weight: the weight's act_quant_kwargs where it has them (MX: its
    scaling mode; NVFP4: the dynamic per-tensor scale, or the weight's
    calibrated act_per_tensor_scale), else ``default``."""
    k = getattr(weight, "act_quant_kwargs", None)
    if k is None:
        return default, "dynamic"
    if type(weight).__name__ == "MXTensor":
        return f"mx-{k.scaling_mode.value}", "dynamic"
    if k.use_dynamic_per_tensor_scale:
        return "nvfp4", "dynamic"
    pts = weight.act_per_tensor_scale
    return ("nvfp4-block", None) if pts is None else ("nvfp4", np.float32(pts.item()))
