"""Named recipes, the recipe a block-scaled model's instruction expects, and
the dtypes of a model's formats.

A recipe names how the scales are chosen; the element format and block
size come from the model (or are given):

| recipe | scales | scale choice |
|---|---|---|
| mx-floor | ue8m0 | OCP MX v1.0 section 6.3 (torchao's default) |
| mx-ceil, mx-even | ue8m0 | torchao's CEIL and EVEN |
| mx-rceil | ue8m0 | cuBLAS / TransformerEngine's reciprocal ceiling, as torchao computes it |
| mx-rceil-exact | ue8m0 | the same with the exact ceiling (cvt.rp.satfinite.ue8m0x2.f32) |
| nvfp4 | ue4m3 per 16, fp32 per tensor | NVIDIA's two-level recipe, per-tensor scale from the tensor's amax |
| nvfp4-block | ue4m3 per 16 | one level, no per-tensor scale |

A ue8m0 model (kind::mxf8f6f4, mxf4, mxf4nvf4 with ue8m0) expects MX,
mx-floor by default; a ue4m3 model (kind::mxf4nvf4 block16 ue4m3) NVFP4,
the two-level nvfp4 by default.
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import FormatMismatch, UserError
from tcsmt.model.params import ModelParams
from tcsmt.quant.blocks import Quantized
from tcsmt.quant.mx import SCALINGS, quantize_mx
from tcsmt.quant.nvfp4 import quantize_nvfp4
from tcsmt.sim.npio import dtype_of

RECIPES = tuple(f"mx-{s}" for s in SCALINGS) + ("nvfp4", "nvfp4-block")


def check_recipe(recipe: str) -> str:
    if recipe not in RECIPES:
        raise UserError(f"unknown recipe {recipe!r} (known: {', '.join(RECIPES)})")
    return recipe


def quantize(x, recipe: str = "mx-floor", elem="e4m3", block: int | None = None, axis: int = -1,
             per_tensor_scale="dynamic") -> Quantized:
    """x in a block-scaled format by a named recipe (see the module doc):
    for MX, ``elem`` elements and ``block`` (32 by default) per ue8m0
    scale; NVFP4 is always e2m1 per 16 (``per_tensor_scale`` "dynamic", a
    float32 value; "nvfp4-block" takes none). Blocks run along ``axis``."""
    check_recipe(recipe)
    if recipe.startswith("mx-"):
        return quantize_mx(x, elem, block or 32, recipe[3:], axis)
    return quantize_nvfp4(x, per_tensor_scale if recipe == "nvfp4" else None, block or 16, axis)


def default_recipe(p: ModelParams) -> str:
    """The recipe the model's instruction expects: mx-floor for ue8m0
    scales, nvfp4 for ue4m3."""
    if p.fscale is None:
        raise FormatMismatch(f"{p.name} has no block scales: its operands are not quantised")
    return "nvfp4" if p.fscale.name == "ue4m3" else "mx-floor"


def recipe_for(p: ModelParams, recipe: str | None) -> str:
    """``recipe`` (or the model's default), checked against the model's scales."""
    r = check_recipe(recipe) if recipe else default_recipe(p)
    want = default_recipe(p)
    if r.split("-")[0] != want.split("-")[0]:
        raise FormatMismatch(f"{p.name} reads {p.scale_format} scales per {p.scale_block}: "
                             f"recipe {r} makes {'ue4m3' if r.startswith('nvfp4') else 'ue8m0'} "
                             f"ones (take {'nvfp4 or nvfp4-block' if want == 'nvfp4' else 'an mx- recipe'})")
    if r.startswith("nvfp4") and p.scale_block != 16:
        raise FormatMismatch(f"{p.name} scales every {p.scale_block} products; NVFP4 scales 16")
    return r


def quantize_for(p: ModelParams, x, operand: str = "a", recipe: str | None = None,
                 per_tensor_scale="dynamic") -> Quantized:
    """An operand of a block-scaled model quantised as it reads it: A [M, K]
    (``operand`` "a") in the model's in_format with blocks along K (its
    rows), B [K, N] ("b") in its b_format with blocks along K (its
    columns); the scale block is the model's."""
    if operand not in ("a", "b"):
        raise UserError(f"operand {operand!r}: 'a' or 'b'")
    r = recipe_for(p, recipe)
    fmt = p.fin if operand == "a" else p.fb
    if np.ndim(x) != 2:
        raise UserError(f"{operand.upper()} must be 2-D; got {np.ndim(x)}-D")
    return quantize(x, r, fmt.name, p.scale_block, -1 if operand == "a" else 0, per_tensor_scale)


def dtypes(p: ModelParams) -> dict[str, np.dtype | None]:
    """The NumPy (ml_dtypes) dtype of each of the model's formats: a, b, c,
    d and, for a block-scaled model, scale (tf32 and xf32: float32, read
    as the unit reads it; ue4m3: float8_e4m3fn, its sign ignored)."""
    fs = p.fscale
    out: dict[str, np.dtype | None] = {"a": dtype_of(p.fin), "b": dtype_of(p.fb), "c": dtype_of(p.fc),
                                       "d": dtype_of(p.fout)}
    out["scale"] = dtype_of(fs) if fs is not None else None
    return out
