"""torchao's MX and NVFP4 quantisers (torchao.prototype.mx_formats, 0.18)
as bits, and the tensors the tests hand to them and to tcsmt.quant.

torchao is the oracle here: its functions are called as its MXTensor.to_mx
and NVFP4Tensor.to_nvfp4 call them (to_mx, nvfp4_quantize, the packed fp4
unpacked into one element per byte), never re-implemented.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.mx_tensor import MXTensor, to_mx
    from torchao.prototype.mx_formats.nvfp4_tensor import (
        NVFP4Tensor,
        nvfp4_quantize,
        per_tensor_amax_to_scale,
    )

__all__ = ["ELEMENTS", "MXTensor", "NVFP4Tensor", "mx_bits", "nvfp4_bits", "tensors"]

ELEMENTS = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "e2m3": DTYPE_FP6_E2M3,
            "e3m2": DTYPE_FP6_E3M2, "e2m1": torch.float4_e2m1fn_x2}
MAX_ELEMENT = {"e4m3": 448.0, "e5m2": 57344.0, "e2m3": 7.5, "e3m2": 28.0, "e2m1": 6.0}


def mx_bits(x: torch.Tensor, elem: str, block: int, scaling: str):
    """(scale bits, element bits) of torchao's to_mx, one element per byte."""
    s, d = to_mx(x, ELEMENTS[elem], block, ScaleCalculationMode(scaling))
    d = unpack_uint4(d) if elem == "e2m1" else d.view(torch.uint8)
    return s.view(torch.uint8).numpy(), d.numpy()


def nvfp4_bits(x: torch.Tensor, per_tensor_scale):
    """(scale bits, element bits, per-tensor scale) of torchao's nvfp4_quantize;
    per_tensor_scale "dynamic" is torchao's per_tensor_amax_to_scale of
    torch.max(|x|), as its dynamic activation quantisation computes it."""
    if per_tensor_scale == "dynamic":
        pts = per_tensor_amax_to_scale(torch.max(torch.abs(x)))
    else:
        pts = None if per_tensor_scale is None else torch.tensor(per_tensor_scale, dtype=torch.float32)
    s, d = nvfp4_quantize(x, 16, pts)
    return s.view(torch.uint8).numpy(), unpack_uint4(d).numpy(), pts


def tensors(seed: int) -> dict[str, np.ndarray]:
    """float32 tensors: normal values, rows of far-apart magnitudes, every
    magnitude down to float32's subnormals, hand-made edge rows, and blocks
    whose amax / max_element lies a few units in the last place above a
    power of two (where float32 log2 rounds to the integer)."""
    rng = np.random.default_rng(seed)
    edge = np.zeros((8, 64), np.float32)
    edge[1, :] = np.nan
    edge[2, 3] = np.nan
    edge[3, 5], edge[4, 7] = np.inf, -np.inf
    edge[5, :] = 3e38
    edge[6, :] = 1e-40
    edge[7, :32], edge[7, 40] = -0.0, 2.0 ** -127
    base = np.exp2(rng.integers(-120, 110, (15, 1))).astype(np.float32)
    near = rng.uniform(-1, 1, (15, 64)).astype(np.float32) * base
    tops = np.repeat(np.float32(list(MAX_ELEMENT.values())), 3)[:, None] * base
    near[:, :1] = (tops.view(np.uint32) + rng.integers(1, 4, (15, 1)).astype(np.uint32)).view(np.float32)
    return {
        "normal": rng.standard_normal((64, 256)).astype(np.float32),
        "row-magnitudes": (rng.standard_normal((32, 128))
                           * np.exp2(rng.integers(-140, 120, (32, 1)))).astype(np.float32),
        "any-magnitude": (rng.standard_normal((16, 64))
                          * np.exp2(rng.integers(-149, 127, (16, 64)))).astype(np.float32),
        "edge": edge,
        "near-powers": near,
    }
