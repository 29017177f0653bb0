"""Torch tensors <-> bit patterns of a model's formats, without copying
between devices.

A tensor is rounded to a format the way a GPU kernel's operand conversion
does it: round to nearest, ties to even (torch's own ``.to(dtype)``), for
float16, bfloat16, float8_e4m3fn and float8_e5m2; tf32 keeps a float32
tensor and reads its top 19 bits, as the hardware reads a float32 operand
(tcsmt.sim.npio); fp6 and fp4, which torch holds only packed, through
tcsmt.sim.inputs.round_array (round to nearest even, saturating). On the
CPU the bits are read through NumPy views of the tensor's memory
(DLPack); on a CUDA device they are computed there.
"""

from __future__ import annotations

import numpy as np
import torch

from tcsmt.errors import UserError
from tcsmt.model.formats import Format
from tcsmt.sim.npio import from_bits, to_bits

_TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
          "tf32": torch.float32, "float64": torch.float64}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):
    if hasattr(torch, _name):
        _TORCH[_name] = getattr(torch, _name)
_TORCH["ue4m3"] = torch.float8_e4m3fn            # the unit ignores its sign bit
_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def torch_dtype(fmt: Format) -> torch.dtype:
    dt = _TORCH.get(fmt.name)
    if dt is None:
        raise UserError(f"{fmt.name} has no torch dtype")
    return dt


def has_torch_dtype(fmt: Format) -> bool:
    """Whether torch holds fmt's values one per element (fp6 and fp4 it
    does not: torch.float4_e2m1fn_x2 packs two)."""
    return fmt.name in _TORCH


def rounded(t: torch.Tensor, fmt: Format) -> torch.Tensor:
    """t in fmt's torch dtype, rounded to nearest even (see the module doc)."""
    if not t.is_floating_point():
        raise UserError(f"a tensor of dtype {t.dtype} is not a floating-point operand")
    return t.to(torch_dtype(fmt))


def to_bits_np(t: torch.Tensor, fmt: Format, name: str) -> np.ndarray:
    """uint64 bits of a CPU tensor (rounded into fmt; a format torch has no
    dtype for, fp6 and fp4, through tcsmt.sim.inputs.round_array)."""
    from tcsmt.sim.npio import dtype_of
    if not has_torch_dtype(fmt):
        from tcsmt.sim.inputs import round_array
        if not t.is_floating_point():
            raise UserError(f"a tensor of dtype {t.dtype} is not a floating-point operand")
        return to_bits(round_array(t.detach().cpu().double().numpy(), fmt, "rne", name), fmt, name)
    r = rounded(t.detach(), fmt).contiguous()
    raw = r.view(_INT[r.element_size()]).numpy()
    return to_bits(raw.view(dtype_of(fmt)), fmt, name)


def from_bits_np(bits: np.ndarray, fmt: Format, device) -> torch.Tensor:
    """A tensor of fmt's torch dtype on ``device`` from uint64 bits."""
    arr = from_bits(bits, fmt)
    raw = torch.from_numpy(arr.view(np.dtype(f"u{arr.itemsize}") if arr.itemsize == 1 else
                                    np.dtype(f"i{arr.itemsize}")))
    return raw.view(torch_dtype(fmt)).to(device)


def to_bits_cuda(t: torch.Tensor, fmt: Format) -> torch.Tensor:
    """int64 bits of a CUDA tensor (rounded into fmt), on its device (fp6
    and fp4: rounded on the host, see to_bits_np)."""
    if not has_torch_dtype(fmt):
        host = to_bits_np(t.detach().cpu(), fmt, "operand")
        return torch.from_numpy(host.astype(np.int64)).to(t.device)
    r = rounded(t.detach(), fmt).contiguous()
    bits = r.view(_INT[r.element_size()]).to(torch.int64) & ((1 << (8 * r.element_size())) - 1)
    if fmt.storage_shift:
        bits = bits >> fmt.storage_shift
    return bits & ((1 << fmt.bits) - 1)


def from_bits_cuda(bits: torch.Tensor, fmt: Format) -> torch.Tensor:
    """A tensor of fmt's dtype from int64 bits on a CUDA device."""
    if fmt.storage_shift:
        bits = bits << fmt.storage_shift
    size = torch.empty((), dtype=torch_dtype(fmt)).element_size()
    wide = bits - ((bits >> (8 * size - 1)) & 1) * (1 << (8 * size)) if size > 1 else bits
    return wide.to(_INT[size]).view(torch_dtype(fmt))
