"""MX quantisation (OCP Microscaling Formats v1.0): elements in fp8 (e4m3,
e5m2), fp6 (e2m3, e3m2) or fp4 (e2m1), one ue8m0 scale (a power of two,
2^-127 to 2^127, 0xff NaN) per block of 32 elements (or any block size).

The scale of a block is chosen from its largest magnitude amax, in one of
torchao's four ways (torchao.prototype.mx_formats ScaleCalculationMode),
and the bits are torchao's (0.18) on the same float32 or bfloat16 input:

* ``floor``: the specification's own (section 6.3): 2^(floor(log2 amax) -
  emax_elem), emax_elem the element format's largest exponent (e4m3 8,
  e5m2 15, e2m3 2, e3m2 4, e2m1 2). Elements are x / scale, rounded to
  nearest even; fp8 elements are clamped to the format's largest
  magnitude first, fp6 and fp4 saturate there. amax / scale lies in
  [2^emax_elem, 2^(emax_elem + 1)), so the largest elements of a block
  whose amax has a larger significand than the element format's largest
  (e4m3: 1.75) saturate: the specification's known loss at the top.
* ``ceil``: 2^(ceil(log2 amax) - emax_elem); ``even``: amax rounded to
  the element format's significand bits (ties away from zero, as
  torchao's integer add does) before the floor.
* ``rceil``: the reciprocal-ceiling recipe of cuBLAS and TransformerEngine:
  scale = 2^ceil(log2(amax / max_elem)), elements x / scale clamped to
  the element format's largest magnitude. torchao computes the ceiling
  with float32 log2, which returns the integer k for amax / max_elem just
  above 2^k (within a few float32 units in the last place); ``rceil``
  does the same. ``rceil-exact`` takes the exact ceiling, as the
  cvt.rp.satfinite.ue8m0x2.f32 instruction torchao uses under
  torch.compile on sm_100 does: they differ only there.

Where torchao departs from the specification, the bits here are
torchao's, and the departure is said: with ``floor``, ``ceil`` and
``even``, a block whose scale is 2^-127 (the smallest ue8m0, amax below
2^(emax_elem - 126)) has its elements divided by 2^-126 (torchao clamps
the float32 scale to the smallest normal), so they stand for half their
value; with ``rceil`` such a block's elements are not divided at all
(torchao multiplies by 1.0 where the scale's field is 0). A block holding
a NaN gets the NaN scale 0xff; a block holding an infinity (and no NaN)
a finite scale, with the infinity saturated to the largest element.
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.formats import Format, get_format
from tcsmt.quant.blocks import F32, Quantized, as_float32, block_amax, from_blocks, to_blocks, to_elements
from tcsmt.sim.npio import dtype_of

SCALINGS = ("floor", "ceil", "even", "rceil", "rceil-exact")
MX_ELEMENTS = ("float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
E8M0_NAN = 255


def quantize_mx(x, elem="e4m3", block: int = 32, scaling: str = "floor", axis: int = -1) -> Quantized:
    """x (float32, bfloat16, float16; wider floats rounded to float32 first)
    in MX: ``elem`` elements (e4m3, e5m2, e2m3, e3m2, e2m1), one ue8m0
    scale per ``block`` elements along ``axis``, chosen by ``scaling``
    (see the module doc). A last, partial block is allowed."""
    fmt = mx_element(elem)
    if scaling not in SCALINGS:
        raise UserError(f"unknown MX scaling {scaling!r} (known: {', '.join(SCALINGS)})")
    blocks, k = to_blocks(as_float32(x), block, axis)
    amax = block_amax(blocks)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if scaling.startswith("rceil"):
            field, scaled = _rceil(blocks, amax, fmt, exact=scaling == "rceil-exact")
        else:
            field, scaled = _power_of_two(blocks, amax, fmt, scaling)
    elements = from_blocks(to_elements(scaled, fmt), k, axis)
    scales = np.moveaxis(field[..., 0].astype(np.uint8), -1, axis)
    return Quantized(elements, scales.view(dtype_of(get_format("ue8m0"))), block,
                     axis % elements.ndim, f"mx-{scaling}")


def mx_element(elem) -> Format:
    fmt = get_format(elem)
    if fmt.name not in MX_ELEMENTS:
        raise UserError(f"{fmt.name} is not an MX element format (e4m3, e5m2, e2m3, e3m2, e2m1)")
    return fmt


def _f32_fields(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(biased exponent field, fraction field) of float32 values, as int64."""
    w = v.view(np.uint32).astype(np.int64)
    return (w >> 23) & 0xFF, w & 0x7FFFFF


def _power_of_two(blocks, amax, fmt: Format, scaling: str):
    """floor, ceil, even: the scale's biased field from amax's float32
    exponent field, and the blocks divided by the scale (torchao's to_mx)."""
    if scaling == "even":                     # amax rounded to the element's significand bits
        w = amax.view(np.uint32).astype(np.int64)
        w = (w + (1 << (23 - fmt.frac_bits - 1))) & (0x1FF << 23)
        amax = np.where(np.isnan(amax), amax, (w & 0xFFFFFFFF).astype(np.uint32).view(F32))
    exp, frac = _f32_fields(amax)
    e = exp - 127 - fmt.emax
    if scaling == "ceil":
        e = e + (frac > 0)
    field = np.clip(e, -127, 128) + 127
    field = np.where(np.isnan(amax), E8M0_NAN, field & 0xFF)
    scale = (field.astype(np.uint32) << 23).view(F32)           # 0xff: infinity
    scale = np.maximum(scale, F32(2.0 ** -126))                  # torchao's clamp (module doc)
    scaled = blocks / scale
    if fmt.bits == 8:
        top = F32(fmt.max_finite())
        scaled = np.clip(scaled, -top, top)
    return field, scaled


def _rceil(blocks, amax, fmt: Format, exact: bool):
    """rceil: scale = 2^ceil(log2(amax / max_elem)) (torchao's _to_mx_rceil)."""
    top = F32(fmt.max_finite())
    descale = amax / top
    if exact:
        m, e = np.frexp(descale.astype(np.float64))
        up = np.where(m == 0.5, e - 1, e).astype(np.float64)
        up = np.where(descale > 0, up, -np.inf)
    else:                      # float32 log2, as torch.log2 computes it, then the ceiling
        up = np.ceil(np.log2(descale.astype(np.float64)).astype(F32)).astype(np.float64)
    field = np.clip(np.nan_to_num(up, nan=0.0, posinf=127, neginf=-127), -127, 127) + 127
    field = np.where(np.isinf(descale), 254, field)
    field = np.where(np.isnan(descale), E8M0_NAN, field).astype(np.int64)
    rcp = np.exp2(F32(127) - field.astype(F32)).astype(F32)
    rcp = np.where(field == 0, F32(1.0), rcp)
    rcp = np.where(field == 254, F32(2.0 ** -127), rcp)
    rcp = np.where(field == E8M0_NAN, descale, rcp)
    scaled = np.clip(rcp * blocks, -top, top)        # NaN payloads as torch's (see nvfp4)
    return field, scaled
