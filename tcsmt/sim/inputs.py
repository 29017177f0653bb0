"""Preparing NumPy operands for a model, and naming the model in the result.

``round_array`` rounds wider floats (float64, float32...) into a format
with one of the IEEE modes, as a user does before handing data to a
matrix unit (the hardware reads its operands as they are: this is not a
stage of the datapath). NumPy and ml_dtypes convert with round to nearest,
ties to even; for rz, ru and rd the result is moved one step, where the
nearest value lies on the wrong side of x, to its neighbour in the
format's order of encodings (which is the order of values). Overflow
follows ``Format.round_value``: infinity, or the largest finite number
where the mode rounds toward zero; fn formats give NaN, formats without
NaN or infinity (fp6, fp4) the largest finite number. tf32 and xf32 have
no dtype of their own: x is rounded in float64 to a multiple of the
format's quantum at its exponent (exact: every such multiple is a
float64) and handed back as float32 whose low 13 bits are zero. The scale
format ue8m0 (float8_e8m0fnu: powers of two, no sign) takes positive
values; ue4m3 is rounded as float8_e4m3fn (the unit ignores its sign bit).

``ModelledArray`` is D as a NumPy array that carries ``.model``, the
ModelParams that computed it.
"""

from __future__ import annotations

import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.formats import ROUNDING_MODES, Format
from tcsmt.model.params import ModelParams
from tcsmt.sim.npio import dtype_of


class ModelledArray(np.ndarray):
    """A result of tcsmt.matmul: the array, and in ``.model`` the model
    (a ModelParams: ``.model.name``, ``.model.parameter_dict()``) that
    computed it. Arrays derived from it (D + 1, D.astype(...)) carry no model."""

    model: ModelParams | None = None

    def __array_finalize__(self, obj) -> None:
        self.model = None


def with_model(D: np.ndarray, p: ModelParams) -> ModelledArray:
    out = D.view(ModelledArray)
    out.model = p
    return out


def _uint(itemsize: int):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[itemsize]


def round_array(x, fmt: Format, mode: str = "rne", name: str = "x") -> np.ndarray:
    """x (any float or integer dtype) rounded into ``fmt`` with ``mode``
    (rne, rz, ru, rd), as an array of fmt's dtype."""
    if mode not in ROUNDING_MODES:
        raise UserError(f"unknown rounding {mode!r} for {name} (known: {', '.join(ROUNDING_MODES)})")
    want = dtype_of(fmt)
    x = np.asarray(x)
    if x.dtype == want and not fmt.storage_shift:
        return x
    try:
        xf = x.astype(np.float64)
    except (TypeError, ValueError):
        raise UserError(f"{name} has dtype {x.dtype}: pass numbers") from None
    if fmt.storage_shift:
        return _round_quantum(xf, fmt, mode).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        r = xf.astype(want)
    if mode == "rne":
        return r
    return _step(xf, r, fmt, mode)


_TO_INTEGER = {"rne": np.rint, "rz": np.trunc, "ru": np.ceil, "rd": np.floor}


def _round_quantum(x: np.ndarray, fmt: Format, mode: str) -> np.ndarray:
    """x rounded into fmt with ``mode``, as float64 values: x divided by the
    quantum of its binade (2^(e - frac_bits), e no lower than emin),
    rounded to an integer, multiplied back (all exact in float64 for a
    format of up to 52 fraction bits); past the largest finite number,
    infinity or that number as Format.round_value says."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        mag = np.abs(x)
        e = np.floor(np.log2(np.where((mag > 0) & np.isfinite(mag), mag, 1.0)))
        e = np.maximum(e, fmt.emin)
        q = np.exp2(e - fmt.frac_bits)
        # log2 may land one off near a power of two: keep x / q in [2^frac, 2^(frac + 1))
        q = np.where(mag / q >= 2.0 ** (fmt.frac_bits + 1), q * 2, q)
        q = np.where((mag / q < 2.0 ** fmt.frac_bits) & (e > fmt.emin), q / 2, q)
        r = _TO_INTEGER[mode](x / q) * q
        top = float(fmt.max_finite())
        up = (r > 0) & (mode in ("rne", "ru")) | (r < 0) & (mode in ("rne", "rd"))
        over = np.isfinite(x) & (np.abs(r) > top)
        r = np.where(over, np.where(up, np.copysign(np.inf, r), np.copysign(top, r)), r)
        return np.where(np.isfinite(x), r, x)


def _step(x: np.ndarray, r: np.ndarray, fmt: Format, mode: str) -> np.ndarray:
    """r (x rounded to nearest) moved one encoding toward the side ``mode`` asks for."""
    bits = r.view(_uint(r.dtype.itemsize)).astype(np.int64)
    # the sign bit: ue4m3 is rounded as float8_e4m3fn; ue8m0 has none
    sign_at = fmt.bits - 1 if fmt.signed else fmt.storage_bits - 1 if fmt.container_bits else 63
    top = np.int64(1) << np.int64(sign_at)
    sign = (bits & top) != 0
    key = np.where(sign, -(bits & (top - 1)), bits)           # encodings in the order of values
    rv = r.astype(np.float64)
    lost = np.isnan(rv) & ~np.isnan(x)                          # overflow to NaN (fn formats)
    rv = np.where(lost, np.copysign(np.inf, x), rv)
    if mode == "rz":
        move = np.where(np.abs(rv) > np.abs(x), -np.sign(x), 0)
    elif mode == "ru":
        move = np.where(rv < x, 1, 0)
    else:
        move = np.where(rv > x, -1, 0)
    move = np.where(np.isnan(x), 0, move).astype(np.int64)
    if fmt.specials == "none":      # saturated at the largest finite number: no step past it
        move = np.where((np.abs(rv) == float(fmt.max_finite())) & (move == np.sign(rv)), 0, move)
    key = key + move
    neg = (key < 0) | ((key == 0) & np.signbit(x))
    out = np.where(neg, top | np.abs(key), key)
    out = np.where(move != 0, out, bits)
    return out.astype(_uint(r.dtype.itemsize)).view(r.dtype)
