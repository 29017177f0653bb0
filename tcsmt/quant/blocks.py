"""What every block-scaled recipe shares: the record of a quantised array,
cutting an array into blocks along one axis, the float32 arithmetic the
recipes are written in, and the cast of scaled values to the elements.

Quantisation is what a user does before a matrix unit reads its operands;
it is not a stage of the datapath. The recipes (tcsmt.quant.mx,
tcsmt.quant.nvfp4) are written as torchao writes them, in float32 NumPy
arithmetic (IEEE, round to nearest even, subnormals kept), so their bits
are torchao's on the same input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcsmt.errors import ShapeError, UserError
from tcsmt.model.formats import Format, get_format
from tcsmt.sim.inputs import round_array
from tcsmt.sim.npio import dtype_of

F32 = np.float32

TORCH_MAX_NAN = np.uint32(0xFFFFFFFF).view(F32)
"""The NaN torch.max(t) returns over a whole tensor that holds one (torch
2.13 on the CPU; torch.amax returns 0x7fc00000): torchao's per-tensor
NVFP4 scale starts from it."""


def widen_e4m3(s: np.ndarray) -> np.ndarray:
    """float8_e4m3fn values as float32, a NaN as torch widens it
    (0x7ff00000 with its sign; ml_dtypes gives 0x7fc00000): the NaN's
    payload decides which fp4 bits torchao's conversion makes of the
    elements it scales."""
    out = s.astype(F32)
    nan = np.isnan(out)
    if nan.any():
        sign = (s.view(np.uint8).astype(np.uint32) >> 7) << 31
        out[nan] = (np.uint32(0x7FF00000) | sign[nan]).view(F32)
    return out


@dataclass(frozen=True)
class Quantized:
    """An array in a block-scaled format: ``elements`` (the element format's
    dtype, the shape of the input), ``scales`` (the scale format's dtype:
    float8_e8m0fnu for ue8m0, float8_e4m3fn for ue4m3; one per ``block``
    elements along ``axis``, the input's shape with that axis divided by
    ``block``, rounded up), ``per_tensor_scale`` (NVFP4's float32 second
    level, or None) and the recipe that made it. Its value is
    elements x scale (x per_tensor_scale): ``dequantize()``."""

    elements: np.ndarray
    scales: np.ndarray
    block: int
    axis: int
    recipe: str
    per_tensor_scale: np.float32 | None = None

    @property
    def element_format(self) -> Format:
        return get_format(self.elements.dtype.name)

    def dequantize(self) -> np.ndarray:
        """The values the quantised array stands for, as float32 (what
        torchao's dequantize gives, and a quantise-then-fp32 matmul reads)."""
        k = self.elements.shape[self.axis]
        s = np.repeat(self.scales.astype(F32), self.block, axis=self.axis)
        s = np.take(s, np.arange(k), axis=self.axis)
        with np.errstate(over="ignore", invalid="ignore"):
            v = self.elements.astype(F32) * s
            return v if self.per_tensor_scale is None else v * F32(self.per_tensor_scale)


def as_float32(x, name: str = "x") -> np.ndarray:
    """x as float32: float32, bfloat16 and float16 exactly (torchao takes
    bfloat16 and float32 and widens them to float32 first), wider floats
    rounded to nearest even."""
    x = np.asarray(x)
    try:
        with np.errstate(over="ignore"):
            return np.ascontiguousarray(x.astype(F32))
    except (TypeError, ValueError):
        raise UserError(f"{name} has dtype {x.dtype}: pass numbers") from None


def to_blocks(x: np.ndarray, block: int, axis: int) -> tuple[np.ndarray, int]:
    """x with ``axis`` moved last and cut into [..., S, block] (a last,
    partial block padded with zeros, which change no block's largest
    magnitude), and the length of that axis."""
    if x.ndim == 0:
        raise ShapeError("a scalar has no blocks: pass an array")
    if block < 1:
        raise UserError(f"block size {block}: it must be at least 1")
    x = np.moveaxis(x, axis, -1)
    k = x.shape[-1]
    pad = -k % block
    if pad:
        x = np.concatenate([x, np.zeros((*x.shape[:-1], pad), dtype=x.dtype)], axis=-1)
    return x.reshape(*x.shape[:-1], x.shape[-1] // block, block), k


def from_blocks(blocks: np.ndarray, k: int, axis: int) -> np.ndarray:
    """The inverse of to_blocks for the elements: [..., S, block] -> the
    input's shape."""
    flat = blocks.reshape(*blocks.shape[:-2], -1)[..., :k]
    return np.moveaxis(flat, -1, axis)


def block_amax(blocks: np.ndarray) -> np.ndarray:
    """The largest magnitude of each block, float32 [..., S, 1]; NaN where
    the block holds a NaN (torch.amax propagates NaN, and so does np.max)."""
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(blocks), axis=-1, keepdims=True)


def to_elements(scaled: np.ndarray, fmt: Format) -> np.ndarray:
    """float32 values already divided by their scale -> fmt, rounded to
    nearest even (fp6 and fp4, which have neither NaN nor infinity,
    saturate at their largest magnitude). A NaN becomes fp8's NaN with
    every magnitude bit set and its sign (as torch's cast makes it: 0x7f
    for e5m2 too, where ml_dtypes makes 0x7e). A NaN has no fp6 or
    fp4 encoding: it gets the bits torchao's integer conversion
    (torchao.prototype.custom_fp_utils._f32_to_floatx_unpacked) makes of
    its float32 pattern (the quiet NaN torch and NumPy make: fp4 0b0011,
    fp6 e2m3 0b001100, e3m2 0b001110, with the NaN's sign), so that the
    bits stay torchao's; its block's
    scale is NaN, which makes the block NaN whatever its elements hold."""
    out = round_array(scaled, fmt, "rne", "the scaled elements")
    nan = np.isnan(scaled)
    if not nan.any():
        return out
    word = scaled.view(np.uint32).astype(np.int64)
    sign = (word >> 31) & 1
    raw = out.view(np.uint8).copy()
    if fmt.has_nan:             # torch's cast: every magnitude bit set, the NaN's sign kept
        raw[nan] = ((sign << 7) | 0x7F)[nan].astype(np.uint8)
        return raw.view(dtype_of(fmt))
    mag = word & 0x7FFFFFFF
    shift = 23 - fmt.frac_bits
    bits = mag + ((fmt.bias - 127) << 23) + (1 << (shift - 1)) - 1 + ((mag >> shift) & 1)
    bits = ((bits >> shift) & ((1 << (fmt.bits - 1)) - 1)) | (sign << (fmt.bits - 1))
    raw[nan] = bits[nan].astype(np.uint8)
    return raw.view(dtype_of(fmt))
