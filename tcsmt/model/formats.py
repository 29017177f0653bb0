"""Binary floating-point formats: bit patterns, fields, classes and exact values.

Everything here works on Python ints and ``fractions.Fraction`` and is used for
input and output (parsing hex, printing exact decimals) and as an independent
oracle in tests. The datapath itself decodes formats again, in bit-vector form,
in ``tcsmt.datapath``; the two are checked against each other and against
ml_dtypes.

Naming: ``frac_bits`` are stored fraction bits, ``sig`` is the significand with
its hidden bit, ``exp`` is the biased exponent field, ``e`` the unbiased
exponent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, cast

from tcsmt.errors import UserError
from tcsmt.model.integers import INTEGER_FORMATS

ROUNDING_MODES = ("rne", "rz", "ru", "rd")


@dataclass(frozen=True)
class Format:
    """A binary floating-point format.

    ``specials`` says how the all-ones exponent is used:
      * ``"ieee"``: infinities (fraction 0) and NaNs (fraction non-zero);
      * ``"fn"``: finite only, except NaN where exponent and fraction are all
        ones (float8_e4m3fn);
      * ``"none"``: every encoding is a finite number (fp6, fp4, e8m13);
      * ``"fnuz"``: finite only, no negative zero: the encoding of -0 (sign
        bit alone) is the one NaN (float8_e4m3fnuz, float8_e5m2fnuz).

    ``container_bits`` is the width the format is stored in when that is wider
    than its encoding: tf32 (and xf32) live in the top 19 bits of a binary32
    word; an unsigned format in a wider container (ue4m3 in a byte) lives in its low
    bits and the container's top bit is ignored, as the hardware ignores the
    sign bit of an e4m3 scale. ``exp_bias`` is the exponent bias when it is
    not the usual 2**(exp_bits-1) - 1 (the fnuz formats' is one larger).

    ``signed`` is False for the scale formats, which have no sign bit.
    ``subnormals`` is False where the exponent field 0 is an ordinary binade
    (float8_e8m0fnu: 2^-127, no zero and no subnormals).
    """

    name: str
    exp_bits: int
    frac_bits: int
    specials: str = "ieee"
    container_bits: int = 0
    ml_dtype: str | None = None
    exp_bias: int | None = None
    signed: bool = True
    subnormals: bool = True
    is_integer: ClassVar[bool] = False    # integer formats: tcsmt.model.integers

    @property
    def bits(self) -> int:
        return int(self.signed) + self.exp_bits + self.frac_bits

    @property
    def bias(self) -> int:
        if self.exp_bias is not None:
            return self.exp_bias
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal number (and of subnormals)."""
        return (1 if self.subnormals else 0) - self.bias

    @property
    def max_exp_field(self) -> int:
        """Largest biased exponent field of a finite number."""
        if self.specials == "ieee" or (self.specials == "fn" and self.frac_bits == 0):
            return (1 << self.exp_bits) - 2
        return (1 << self.exp_bits) - 1

    @property
    def emax(self) -> int:
        return self.max_exp_field - self.bias

    @property
    def max_frac_at_emax(self) -> int:
        """Largest fraction field of a finite number at ``emax``."""
        full = (1 << self.frac_bits) - 1
        return full - 1 if self.specials == "fn" and self.frac_bits else full

    @property
    def precision(self) -> int:
        return self.frac_bits + 1

    @property
    def storage_bits(self) -> int:
        return self.container_bits or self.bits

    @property
    def storage_shift(self) -> int:
        """Low bits of the container below the encoding (tf32: 13)."""
        return 0 if not self.signed else self.storage_bits - self.bits

    @property
    def has_inf(self) -> bool:
        return self.specials == "ieee"

    @property
    def has_nan(self) -> bool:
        return self.specials in ("ieee", "fn", "fnuz")

    @property
    def has_negative_zero(self) -> bool:
        return self.specials != "fnuz"

    def max_finite(self) -> Fraction:
        sig = (1 << self.frac_bits) | self.max_frac_at_emax
        return Fraction(sig) * Fraction(2) ** (self.emax - self.frac_bits)

    @property
    def last_exp(self) -> int:
        """The exponent of the smallest positive value (its last place)."""
        return self.emin - (self.frac_bits if self.subnormals else 0)

    def min_subnormal(self) -> Fraction:
        """The smallest positive value (the smallest normal one without subnormals)."""
        return Fraction(2) ** self.last_exp

    # -- fields ----------------------------------------------------------

    def fields(self, bits: int) -> tuple[int, int, int]:
        """(sign, biased exponent field, fraction field) of an encoding."""
        if not 0 <= bits < (1 << self.bits):
            raise ValueError(f"{bits:#x} is not a {self.name} encoding")
        frac = bits & ((1 << self.frac_bits) - 1)
        exp = (bits >> self.frac_bits) & ((1 << self.exp_bits) - 1)
        return (bits >> (self.bits - 1) if self.signed else 0), exp, frac

    def pack(self, sign: int, exp: int, frac: int) -> int:
        if sign and not self.signed:
            raise ValueError(f"{self.name} has no sign bit")
        return (sign << (self.bits - 1)) | (exp << self.frac_bits) | frac

    def classify(self, bits: int) -> str:
        """One of zero, subnormal, normal, inf, nan."""
        _, exp, frac = self.fields(bits)
        all_ones = (1 << self.exp_bits) - 1
        if self.specials == "ieee" and exp == all_ones:
            return "nan" if frac else "inf"
        if self.specials == "fn" and exp == all_ones and frac == (1 << self.frac_bits) - 1:
            return "nan"
        if self.specials == "fnuz" and bits == 1 << (self.bits - 1):
            return "nan"
        if exp == 0 and self.subnormals:
            return "subnormal" if frac else "zero"
        return "normal"

    def value(self, bits: int) -> Fraction | float:
        """Exact value; ``float('nan')`` or ``±float('inf')`` for specials."""
        sign, exp, frac = self.fields(bits)
        cls = self.classify(bits)
        if cls == "nan":
            return float("nan")
        if cls == "inf":
            return float("-inf") if sign else float("inf")
        if not self.subnormals:
            sig, e = frac | (1 << self.frac_bits), exp - self.bias
        else:
            sig = frac if exp == 0 else frac | (1 << self.frac_bits)
            e = max(exp, 1) - self.bias
        v = Fraction(sig) * Fraction(2) ** (e - self.frac_bits)
        return -v if sign else v

    def finite_value(self, bits: int) -> Fraction:
        """Exact value of a finite encoding; ValueError for NaN or infinity."""
        v = self.value(bits)
        if isinstance(v, float):
            raise ValueError(f"{self.hex(bits)} is not a finite {self.name} value")
        return v

    def is_negative_zero(self, bits: int) -> bool:
        return self.signed and self.classify(bits) == "zero" and bits >> (self.bits - 1) == 1

    def nan_bits(self) -> int:
        """The canonical quiet NaN with sign 0 and all fraction bits set
        (fnuz formats: their one NaN, the sign bit alone)."""
        if not self.has_nan:
            raise ValueError(f"{self.name} has no NaN")
        if self.specials == "fnuz":
            return 1 << (self.bits - 1)
        return self.pack(0, (1 << self.exp_bits) - 1, (1 << self.frac_bits) - 1)

    def inf_bits(self, sign: int) -> int:
        if not self.has_inf:
            raise ValueError(f"{self.name} has no infinity")
        return self.pack(sign, (1 << self.exp_bits) - 1, 0)

    def max_finite_bits(self, sign: int) -> int:
        return self.pack(sign, self.max_exp_field, self.max_frac_at_emax)

    # -- storage (tf32 in a binary32 word) ------------------------------------

    def to_storage(self, bits: int) -> int:
        return bits << self.storage_shift

    def from_storage(self, word: int) -> int:
        shift = self.storage_shift
        if not 0 <= word < (1 << self.storage_bits):
            raise UserError(f"{word:#x} does not fit in {self.storage_bits} bits ({self.name})")
        if not self.signed:
            return word & ((1 << self.bits) - 1)    # the container's sign bit is ignored
        if word & ((1 << shift) - 1):
            raise UserError(
                f"{word:#x} is not a {self.name} value: its low {shift} bits must be zero")
        return word >> shift

    def hex(self, bits: int) -> str:
        digits = (self.storage_bits + 3) // 4
        return f"0x{self.to_storage(bits):0{digits}x}"

    # -- rounding an exact value into the format --------------------------------

    def round_value(self, value: Fraction, mode: str = "rne", sign_of_zero: int = 0) -> int:
        """Encoding of ``value`` rounded with ``mode`` (rne, rz, ru, rd).

        Overflow follows IEEE 754: infinity where the mode rounds away from
        zero past the largest finite number, the largest finite number where
        it rounds toward zero. Formats without infinity saturate to NaN (fn,
        fnuz) or to the largest finite number (none). ``sign_of_zero`` gives
        the sign of an exact zero; a zero of an fnuz format is always +0.
        """
        if mode not in ROUNDING_MODES:
            raise ValueError(f"unknown rounding mode {mode!r}")
        if not self.signed or not self.subnormals:
            raise ValueError(f"{self.name} is a scale format: values are not rounded into it")
        if not self.has_negative_zero:
            sign_of_zero = 0
        if value == 0:
            return self.pack(sign_of_zero, 0, 0)
        sign = 1 if value < 0 else 0
        mag = -value if sign else value
        e = _floor_log2(mag)
        e = max(e, self.emin)
        quantum = Fraction(2) ** (e - self.frac_bits)
        q, rem = divmod(mag, quantum)
        q = int(q)
        if _round_up(q, rem, quantum, mode, sign):
            q += 1
        if q == 0:
            return self.pack(sign if self.has_negative_zero else 0, 0, 0)
        if q >> (self.frac_bits + 1):  # carried into the next binade
            q >>= 1
            e += 1
        if q >> self.frac_bits == 0:  # subnormal
            return self.pack(sign, 0, q)
        exp = e + self.bias
        frac = q & ((1 << self.frac_bits) - 1)
        if exp > self.max_exp_field or (exp == self.max_exp_field and frac > self.max_frac_at_emax):
            return self._overflow(sign, mode)
        return self.pack(sign, exp, frac)

    def _overflow(self, sign: int, mode: str) -> int:
        toward_zero = mode == "rz" or (mode == "ru" and sign) or (mode == "rd" and not sign)
        if toward_zero or self.specials == "none":
            return self.max_finite_bits(sign)
        if self.specials == "fn":
            return self.pack(sign, (1 << self.exp_bits) - 1, (1 << self.frac_bits) - 1)
        if self.specials == "fnuz":
            return self.nan_bits()
        return self.inf_bits(sign)


def _floor_log2(x: Fraction) -> int:
    """The largest e with 2**e <= x, for x > 0."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def _round_up(q: int, rem: Fraction, quantum: Fraction, mode: str, sign: int) -> bool:
    if rem == 0:
        return False
    if mode == "rz":
        return False
    if mode == "ru":
        return not sign
    if mode == "rd":
        return bool(sign)
    half = quantum / 2
    return rem > half or (rem == half and q & 1 == 1)


FORMATS: dict[str, Format] = {}
ALIASES: dict[str, str] = {}


def _register(fmt: Format, *aliases: str) -> None:
    FORMATS[fmt.name] = fmt
    for alias in (fmt.name, *aliases):
        ALIASES[alias.lower()] = fmt.name


_register(Format("float64", 11, 52, ml_dtype="float64"), "fp64", "f64", "double", "binary64")
_register(Format("float32", 8, 23, ml_dtype="float32"), "fp32", "f32", "single", "binary32")
_register(Format("tf32", 8, 10, container_bits=32), "tensorfloat32")
# AMD CDNA3's xf32: MMA-Sim 2.1.1 reads each binary32 input's top 19 bits
# (truncate_fp32_to_tf32), the same numbers as tf32 under AMD's name
_register(Format("xf32", 8, 10, container_bits=32))
_register(Format("float16", 5, 10, ml_dtype="float16"), "fp16", "f16", "half", "binary16")
_register(Format("bfloat16", 8, 7, ml_dtype="bfloat16"), "bf16")
_register(Format("float8_e4m3fn", 4, 3, "fn", ml_dtype="float8_e4m3fn"), "e4m3", "fp8_e4m3", "fp8")
_register(Format("float8_e5m2", 5, 2, ml_dtype="float8_e5m2"), "e5m2", "fp8_e5m2", "bf8")
# fnuz: finite, no negative zero (0x80 is NaN), bias one larger than OCP's
# (AMD CDNA3 "fp8" and "bf8"; ml_dtypes float8_e4m3fnuz, float8_e5m2fnuz)
_register(Format("float8_e4m3fnuz", 4, 3, "fnuz", ml_dtype="float8_e4m3fnuz", exp_bias=8),
          "e4m3fnuz", "fp8_e4m3fnuz")
_register(Format("float8_e5m2fnuz", 5, 2, "fnuz", ml_dtype="float8_e5m2fnuz", exp_bias=16),
          "e5m2fnuz", "fp8_e5m2fnuz")
_register(Format("float6_e2m3fn", 2, 3, "none", ml_dtype="float6_e2m3fn"), "e2m3", "fp6_e2m3")
_register(Format("float6_e3m2fn", 3, 2, "none", ml_dtype="float6_e3m2fn"), "e3m2", "fp6_e3m2")
_register(Format("float4_e2m1fn", 2, 1, "none", ml_dtype="float4_e2m1fn"), "e2m1", "fp4", "fp4_e2m1")
# scale formats of block-scaled matrix products (MX: ue8m0; NVFP4: ue4m3)
_register(Format("float8_e8m0fnu", 8, 0, "fn", ml_dtype="float8_e8m0fnu", signed=False,
                 subnormals=False), "ue8m0", "e8m0")
_register(Format("ue4m3", 4, 3, "fn", container_bits=8, ml_dtype="float8_e4m3fn", signed=False))
# integer inputs and accumulators (s8, u8, s4, u4; s32)
for _fmt, _aliases in INTEGER_FORMATS:     # an IntFormat answers every question a Format does
    _register(cast(Format, _fmt), *_aliases)


@functools.cache
def internal_format(exp_bits: int, frac_bits: int) -> Format:
    """A format ``eXmY`` with IEEE specials, used for internal roundings
    (e8m13); one object for each (formats are frozen), which the stages
    that share results (tcsmt.interp.memo) find by its number."""
    return Format(f"e{exp_bits}m{frac_bits}", exp_bits, frac_bits)


def get_format(name: str) -> Format:
    """Look a format up by its name or an alias (fp16, bf16, e4m3, e8m13...)."""
    fmt = FORMATS.get(name) if type(name) is str else None   # a canonical name: its own alias
    if fmt is not None:
        return fmt
    key = str(name).strip().lower()
    if key in ALIASES:
        return FORMATS[ALIASES[key]]
    if key.startswith("e") and "m" in key:
        exp_s, _, frac_s = key[1:].partition("m")
        if exp_s.isdigit() and frac_s.isdigit() and 2 <= int(exp_s) <= 15 and 0 < int(frac_s) <= 112:
            return internal_format(int(exp_s), int(frac_s))
    known = ", ".join(sorted(FORMATS))
    raise UserError(f"unknown format {name!r} (known: {known}, or eXmY)")


def parse_bits(text: str, fmt: Format) -> int:
    """Parse a hex bit pattern (0x3c00) in ``fmt``'s storage width."""
    t = text.strip().lower()
    if not t.startswith("0x"):
        raise UserError(f"{text!r} is not a hex bit pattern (write it as 0x...)")
    try:
        word = int(t[2:], 16)
    except ValueError:
        raise UserError(f"{text!r} is not a hex bit pattern") from None
    if word >> fmt.storage_bits:
        raise UserError(
            f"{text} has more than {fmt.storage_bits} bits: not a {fmt.name} value")
    return fmt.from_storage(word)


def format_value(value: Fraction | float) -> str:
    """An exact decimal string for a value (every binary fraction is a finite decimal)."""
    if isinstance(value, float):
        if value != value:
            return "nan"
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    v = abs(value)
    den = v.denominator
    k = den.bit_length() - 1  # den is a power of two
    digits = v.numerator * 5**k
    s = str(digits)
    if k == 0:
        return sign + s
    s = s.rjust(k + 1, "0")
    whole, frac = s[:-k], s[-k:].rstrip("0")
    return sign + whole + ("." + frac if frac else "")


def describe(fmt: Format, bits: int) -> str:
    """``0x3c00 (1)`` style rendering, with the class for specials."""
    v = fmt.value(bits)
    if fmt.is_negative_zero(bits):
        return f"{fmt.hex(bits)} (-0)"
    return f"{fmt.hex(bits)} ({format_value(v)})"
