"""Quantisation and rounding: what a user does to operands before a matrix
unit reads them (not a stage of the datapath, which reads operands as they
are).

* ``round_to(x, fmt, mode)``: values rounded into any of tcsmt's formats
  with rne, rz, ru or rd, as an array of the format's dtype (tf32: float32
  with the low 13 bits zero); ``dtypes(model)``: the dtype of each of a
  model's formats.
* ``quantize(x, recipe, elem, block)``: block-scaled formats by named
  recipes, bit for bit as torchao 0.18 quantises (tcsmt.quant.recipes):
  MXFP8, MXFP6, MXFP4 with ue8m0 scales, NVFP4 with ue4m3 scales and a
  per-tensor float32 scale. ``quantize_for(model, x, "a" | "b")``
  quantises an operand as a block-scaled model reads it.

    >>> import numpy as np, tcsmt.quant as tq
    >>> q = tq.quantize(np.linspace(-1, 1, 32, dtype=np.float32), "mx-floor", "e2m1")
    >>> q.scales.astype(np.float32), q.elements[:4].astype(np.float32)
    (array([0.25], dtype=float32), array([-4., -4., -3., -3.], dtype=float32))
"""

from __future__ import annotations

import numpy as np

from tcsmt.model.formats import get_format
from tcsmt.quant.blocks import Quantized
from tcsmt.quant.mx import quantize_mx
from tcsmt.quant.nvfp4 import per_tensor_scale_of, quantize_nvfp4
from tcsmt.quant.recipes import RECIPES, default_recipe, dtypes, quantize, quantize_for, recipe_for
from tcsmt.sim.inputs import round_array


def round_to(x, fmt, mode: str = "rne") -> np.ndarray:
    """x rounded into ``fmt`` (a format name such as "e2m1", "bf16", "tf32",
    or a Format) with ``mode`` (rne, rz, ru, rd), as an array of fmt's
    dtype. Overflow: infinity, or the largest finite number where the mode
    rounds toward zero; formats without infinity saturate (fp6, fp4) or
    give NaN (e4m3)."""
    f = fmt if not isinstance(fmt, str) else get_format(fmt)
    return round_array(x, f, mode)


__all__ = ["RECIPES", "Quantized", "default_recipe", "dtypes", "per_tensor_scale_of", "quantize",
           "quantize_for", "quantize_mx", "quantize_nvfp4", "recipe_for", "round_to"]
