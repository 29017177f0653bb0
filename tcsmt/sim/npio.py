"""NumPy arrays of floats <-> bit patterns of the model's formats, and the
choice of a model from the dtypes of a matrix product's operands.

dtypes by format: float16 np.float16, bfloat16 / float8_e4m3fn / float8_e5m2 /
float8_e4m3fnuz / float8_e5m2fnuz / float6_e2m3fn / float6_e3m2fn /
float4_e2m1fn / float8_e8m0fnu the ml_dtypes types of those names, float32
and float64 NumPy's, tf32 and xf32 np.float32 read as the hardware reads it:
the top 19 bits of each binary32 (sign, 8 exponent bits, 10 fraction bits),
the low 13 bits dropped; ue4m3 (NVFP4 scales) ml_dtypes.float8_e4m3fn with
the sign bit ignored; the integer formats int8, uint8 and int32 NumPy's,
int4 and uint4 ml_dtypes' (a 4-bit value in the low half of a byte).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tcsmt.errors import FormatMismatch, UserError
from tcsmt.model.catalogue import models_of
from tcsmt.model.choose import Operands, choose_or_none
from tcsmt.model.formats import Format, get_format
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.model.reference import is_reference


def dtype_of(fmt: Format) -> np.dtype:
    """The NumPy dtype that holds values of fmt (tf32 and xf32: float32)."""
    if fmt.container_bits == 32:
        return np.dtype(np.float32)
    name = fmt.ml_dtype
    if name is None:
        raise UserError(f"{fmt.name} has no NumPy dtype")
    return np.dtype(getattr(np, name, None) or getattr(ml_dtypes, name))


def _uint(itemsize: int):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[itemsize]


def to_bits(x: np.ndarray, fmt: Format, name: str) -> np.ndarray:
    """An array of fmt values -> uint64 bit patterns of fmt (same shape)."""
    want = dtype_of(fmt)
    if x.dtype != want:
        raise UserError(f"{name} has dtype {x.dtype}, but the model reads {fmt.name}: "
                        f"pass {name} as {want.name}")
    bits = np.ascontiguousarray(x).view(_uint(want.itemsize)).astype(np.uint64)
    if fmt.storage_shift:
        bits >>= np.uint64(fmt.storage_shift)     # tf32: drop the low 13 bits
    return bits & np.uint64((1 << fmt.bits) - 1)


def from_bits(bits: np.ndarray, fmt: Format) -> np.ndarray:
    """uint64 bit patterns of fmt -> an array of fmt's dtype."""
    want = dtype_of(fmt)
    word = bits << np.uint64(fmt.storage_shift) if fmt.storage_shift else bits
    return word.astype(_uint(want.itemsize)).view(want)


READ_ORDER = ("float16", "bfloat16", "tf32", "xf32", "float32", "float8_e4m3fn", "float8_e5m2",
              "float8_e4m3fnuz", "float8_e5m2fnuz", "float6_e2m3fn", "float6_e3m2fn",
              "float4_e2m1fn", "float64", "int8", "uint8", "int4", "uint4")
"""Formats an input array may hold, in the order a reference model reads
them (float32 arrays as tf32, as the other models read them)."""
C_ORDER = ("float32", "float16", "float64", "int32")
"""Formats C (and d) may hold, float32 first (c and d of a reference model
are in C's)."""


def formats_of(dtype: np.dtype, order=READ_ORDER) -> tuple[str, ...]:
    """The formats whose values an array of this dtype holds."""
    return tuple(f for f in order if _fits(get_format(f), dtype))


def array_operands(A: np.ndarray, C: np.ndarray, B: np.ndarray | None = None) -> Operands:
    """What A, B and C can hold, as tcsmt.model.choose takes it (C's formats
    with float32 first: c and d of a reference model are in C's)."""
    b = A.dtype if B is None else B.dtype
    return Operands(formats_of(A.dtype), formats_of(b),
                    tuple(f for f in C_ORDER if _fits(get_format(f), C.dtype)))


def model_for_arrays(arch, formats: str | None, overrides, A: np.ndarray,
                     C: np.ndarray, B: np.ndarray | None = None) -> ModelParams:
    """The model for a matrix product: ``arch`` a ModelParams, a model name
    or file, or an architecture whose model is chosen by ``formats`` or,
    without it, by the dtypes of A (input format), B (b format, where
    given) and C (c format); block-scaled models are chosen by name."""
    want = array_operands(A, C, B)
    if is_reference(arch) and formats is None:
        if not want.a or not want.b:
            bad, arr = ("A", A) if not want.a or B is None else ("B", B)
            raise FormatMismatch(f"{bad} has dtype {arr.dtype}, which no format "
                                 "of tcsmt reads")
        if not want.c:
            raise FormatMismatch(f"C has dtype {C.dtype}; a reference model takes float32, float16 "
                                 "or float64 C")
    p = choose_or_none(arch, formats, want)
    if p is None:
        mine = models_of(arch)
        have = ", ".join(f"{m.formats_label} (a, b {dtype_of(m.fin).name}, c {dtype_of(m.fc).name})"
                         for m in mine if _has_dtype(m))
        b_dtype = A.dtype if B is None else B.dtype
        b_part = f", B of dtype {b_dtype}" if b_dtype != A.dtype else ""
        raise FormatMismatch(f"{mine[0].arch} has no model for A of dtype {A.dtype}{b_part} "
                             f"and C of dtype {C.dtype} (it has: {have}; block-scaled models are "
                             "chosen by name)")
    return apply_overrides(p, list(overrides or []))


def _fits(fmt: Format, dtype: np.dtype) -> bool:
    try:
        return dtype_of(fmt) == dtype
    except UserError:
        return False


def _has_dtype(m: ModelParams) -> bool:
    try:
        dtype_of(m.fin), dtype_of(m.fb), dtype_of(m.fc)
    except UserError:
        return False
    return True
