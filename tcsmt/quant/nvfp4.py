"""NVFP4 quantisation (NVIDIA's recipe): fp4 e2m1 elements, one ue4m3 scale
(an e4m3 value, its sign ignored by the unit) per block of 16, and a
per-tensor float32 scale above them (the two-level recipe), as torchao
0.18's nvfp4_quantize and per_tensor_amax_to_scale compute them, bit for
bit on the same float32 or bfloat16 input:

* per-tensor scale (``per_tensor_scale="dynamic"``): amax(|x|) over the
  tensor / (448 x 6), in float32, so a block scale may use e4m3's whole
  range; a calibrated float32 value may be given instead; None: one
  level, no per-tensor scale.
* block scale: amax of the block / 6 (float32), divided by the per-tensor
  scale, clamped to [2^-6, 448] and rounded to nearest even into e4m3.
  torchao clamps at 2^-6, e4m3's smallest normal, so its scales are never
  subnormal, though ue4m3 has subnormals and the unit reads them (a block
  whose scale would be 2^-7 gets 2^-6; its elements then stand for less
  than they could: a loss at the bottom, not an error).
* elements: x x ((1 / per-tensor) / block scale) (float32, the reciprocal
  first, as torchao and its Triton kernel compute it; one level:
  x x (1 / block scale)), clamped to +-6 and rounded to nearest even into
  e2m1.

The unit multiplies element products by the block scales; the
per-tensor scales are applied to D afterwards (tcsmt.torch does it as
torchao does: D x (per-tensor scale of A x that of B), in float32).
A tensor whose amax is 0 gets a per-tensor scale of 0 under "dynamic", and
its block scales are 0 / 0 = NaN: torchao's result, kept (give a
calibrated per_tensor_scale, or None, for such tensors).
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.formats import get_format
from tcsmt.quant.blocks import (
    F32,
    TORCH_MAX_NAN,
    Quantized,
    as_float32,
    block_amax,
    from_blocks,
    to_blocks,
    to_elements,
    widen_e4m3,
)
from tcsmt.sim.inputs import round_array

E2M1_MAX = F32(6.0)
E4M3_MAX = F32(448.0)
E4M3_TINY = F32(2.0 ** -6)


def per_tensor_scale_of(x) -> np.float32:
    """amax(|x|) / (448 x 6) in float32 (torchao's per_tensor_amax_to_scale)."""
    with np.errstate(invalid="ignore"):
        amax = F32(np.max(np.abs(as_float32(x))) if np.size(x) else 0)
    amax = TORCH_MAX_NAN if np.isnan(amax) else amax      # torch.max's NaN (see blocks)
    return F32(amax / F32(E4M3_MAX * E2M1_MAX))


def quantize_nvfp4(x, per_tensor_scale="dynamic", block: int = 16, axis: int = -1) -> Quantized:
    """x (float32, bfloat16, float16; wider floats rounded to float32 first)
    in NVFP4 along ``axis`` (see the module doc): ``per_tensor_scale`` is
    "dynamic" (from x's amax), a float32 value, or None (one level)."""
    if block != 16:
        raise UserError(f"NVFP4 scales blocks of 16 elements, not {block}")
    x32 = as_float32(x)
    pts: np.float32 | None
    if isinstance(per_tensor_scale, str):
        if per_tensor_scale != "dynamic":
            raise UserError(f"per_tensor_scale {per_tensor_scale!r}: give 'dynamic', a number or None")
        pts = per_tensor_scale_of(x32)
    else:
        pts = None if per_tensor_scale is None else F32(per_tensor_scale)
    blocks, k = to_blocks(x32, block, axis)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        block_scale = block_amax(blocks) / E2M1_MAX
        wanted = block_scale if pts is None else block_scale / pts
        e4m3 = round_array(np.clip(wanted, E4M3_TINY, E4M3_MAX), get_format("e4m3"), "rne")
        s32 = widen_e4m3(e4m3)
        rcp = F32(1.0) / s32 if pts is None else (F32(1.0) / pts) / s32
        # rcp first: where both are NaN, NumPy returns the first operand's payload
        # and torch's x * rcp the second's (the payload decides a NaN's fp4 bits)
        scaled = np.clip(rcp * blocks, -E2M1_MAX, E2M1_MAX)
    elements = from_blocks(to_elements(scaled, get_format("e2m1")), k, axis)
    scales = np.moveaxis(e4m3[..., 0], -1, axis)
    return Quantized(elements, scales, block, axis % elements.ndim,
                     "nvfp4" if pts is not None else "nvfp4-block", pts)
