"""NumPy arrays of floats <-> bit patterns of the model's formats, and the
choice of a model from the dtypes of a matrix product's operands.

dtypes by format: float16 np.float16, bfloat16 / float8_e4m3fn / float8_e5m2 /
float8_e4m3fnuz / float8_e5m2fnuz / float6_e2m3fn / float6_e3m2fn /
float4_e2m1fn / float8_e8m0fnu the ml_dtypes types of those names, float32
and float64 NumPy's, tf32 and xf32 np.float32 read as the hardware reads it:
the top 19 bits of each binary32 (sign, 8 exponent bits, 10 fraction bits),
the low 13 bits dropped; ue4m3 (NVFP4 scales) ml_dtypes.float8_e4m3fn with
the sign bit ignored.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tcsmt.errors import UserError
from tcsmt.model.catalogue import all_models, find_model
from tcsmt.model.formats import Format, get_format
from tcsmt.model.params import ModelParams, apply_overrides
from tcsmt.model.reference import is_reference, reference_model
from tcsmt.sim.dot import model as resolve_model


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


def _is_model_spec(spec: str) -> bool:
    spec = spec.strip()
    return spec.endswith(".toml") or "/" in spec or spec in {m.name for m in all_models()}


def model_for_arrays(arch, formats: str | None, overrides, A: np.ndarray,
                     C: np.ndarray, B: np.ndarray | None = None) -> ModelParams:
    """The model for a matrix product: ``arch`` a ModelParams, a model name
    or file, or an architecture whose model is chosen by ``formats`` or,
    without it, by the dtypes of A (input format), B (b format, where
    given) and C (c format)."""
    overrides = list(overrides or [])
    if isinstance(arch, ModelParams):
        return apply_overrides(arch, overrides)
    if not isinstance(arch, str):
        raise UserError(f"arch must be an architecture or model name, not {type(arch).__name__}")
    if is_reference(arch) and formats is None:
        return apply_overrides(_reference_for_arrays(arch, A, B, C), overrides)
    if formats is not None or _is_model_spec(arch):
        return resolve_model(arch, formats, overrides)
    family = find_model(arch).arch
    mine = [m for m in all_models() if m.arch == family and m.scale_format is None]
    b_dtype = A.dtype if B is None else B.dtype
    fits = [m for m in mine if _fits(m.fin, A.dtype) and _fits(m.fb, b_dtype)
            and _fits(m.fc, C.dtype)]
    if not fits:
        have = ", ".join(f"{m.formats_label} (a, b {dtype_of(m.fin).name}, c {dtype_of(m.fc).name})"
                         for m in mine if _has_dtype(m))
        b_part = f", B of dtype {b_dtype}" if b_dtype != A.dtype else ""
        raise UserError(f"{family} has no model for A of dtype {A.dtype}{b_part} "
                        f"and C of dtype {C.dtype} "
                        f"(it has: {have}; block-scaled models are chosen by name)")
    # the default model first, then the one named ARCH-IN-OUT (others are
    # alternative hypotheses, such as blackwell-e4m3-fp32-mma)
    fits.sort(key=lambda m: (not m.default, m.name != _plain_name(m)))
    return apply_overrides(fits[0], overrides)


def _reference_for_arrays(name: str, A: np.ndarray, B, C: np.ndarray) -> ModelParams:
    """A reference model in the formats of the arrays' dtypes (float32 A
    and B read as tf32, as the other models read them; c and d in C's)."""
    def fmt(x: np.ndarray, what: str) -> str:
        for f in ("float16", "bfloat16", "tf32", "float8_e4m3fn", "float8_e5m2",
                  "float8_e4m3fnuz", "float8_e5m2fnuz", "float6_e2m3fn", "float6_e3m2fn",
                  "float4_e2m1fn", "float64"):
            try:
                if dtype_of(get_format(f)) == x.dtype:
                    return f
            except UserError:
                continue
        raise UserError(f"{what} has dtype {x.dtype}, which no format of tcsmt reads")
    fa = fmt(A, "A")
    fb = fa if B is None else fmt(B, "B")
    fc = {"float32": "float32", "float16": "float16", "float64": "float64"}.get(C.dtype.name)
    if fc is None:
        raise UserError(f"C has dtype {C.dtype}; a reference model takes float32, float16 or "
                        "float64 C")
    return reference_model(name, fa, fc, fc, fb if fb != fa else None)


def _plain_name(m: ModelParams) -> str:
    return f"{m.arch}-{m.formats_label.replace(':', '-').replace(',', '-')}"


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
