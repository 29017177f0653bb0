"""Integer formats: the s8, u8, s4 and u4 inputs and the s32 c and d of
integer matrix instructions (PTX ``mma.sync`` with .s8/.u8/.s4/.u4 inputs
and .s32 accumulation, ``wgmma`` .s8/.u8, ``tcgen05.mma kind::i8``).

An ``IntFormat`` answers the questions a ``tcsmt.model.formats.Format``
answers (width, value of a bit pattern, class, hex, rounding a value into
it), so the bit patterns of both are parsed, printed, stored and compared
alike. A signed format is two's complement; the value of a pattern is the
integer itself. Read as a float, an integer has exponent 0 and no fraction
bits: value = (-1)^sign * magnitude * 2^0. That is how the datapath unpacks
it (tcsmt.datapath.terms.unpack): the magnitude of -2^(w-1) fits in w
unsigned bits, so products of magnitudes are exact in the sum of the widths.

NumPy holds them as int8, uint8, int32 and ml_dtypes' int4 and uint4 (a
4-bit value in the low half of a byte).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from tcsmt.errors import UserError


def int_format(fmt) -> IntFormat:
    """``fmt`` as the IntFormat it is: the format table holds integer formats
    among the float ones (they read as floats with no exponent or fraction),
    so a caller that found ``fmt.is_integer`` asks for it here."""
    if not isinstance(fmt, IntFormat):
        raise TypeError(f"{fmt.name} is not an integer format")
    return fmt


@dataclass(frozen=True)
class IntFormat:
    """A ``width``-bit integer format, two's complement when ``signed``.

    The fields a float Format has keep their float meanings for an integer
    read as a float: no exponent bits, no fraction bits, exponent 0, no
    infinity, no NaN, no negative zero, no subnormals."""

    name: str
    width: int
    signed: bool = True
    ml_dtype: str | None = None
    exp_bits: int = 0
    frac_bits: int = 0
    specials: str = "none"
    container_bits: int = 0
    exp_bias: int = 0
    subnormals: bool = False
    is_integer: ClassVar[bool] = True

    # -- the float-shaped questions ---------------------------------------

    @property
    def bits(self) -> int:
        return self.width

    bias = property(lambda self: 0)
    emin = property(lambda self: 0)
    emax = property(lambda self: 0)
    max_exp_field = property(lambda self: 0)
    storage_bits = property(lambda self: self.width)
    storage_shift = property(lambda self: 0)
    has_inf = property(lambda self: False)
    has_nan = property(lambda self: False)
    has_negative_zero = property(lambda self: False)

    @property
    def precision(self) -> int:
        """Significant bits of the largest magnitude."""
        return self.width - 1 if self.signed else self.width

    @property
    def lowest(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def highest(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1

    def max_finite(self) -> Fraction:
        return Fraction(self.highest)

    def min_subnormal(self) -> Fraction:
        """The smallest positive value."""
        return Fraction(1)

    # -- patterns and values ------------------------------------------------

    def _check(self, bits: int) -> None:
        if not 0 <= bits < (1 << self.width):
            raise ValueError(f"{bits:#x} is not a {self.name} encoding")

    def int_value(self, bits: int) -> int:
        """The integer a pattern holds."""
        self._check(bits)
        if self.signed and bits >> (self.width - 1):
            return bits - (1 << self.width)
        return bits

    def encode(self, v: int) -> int:
        """The pattern of the integer v (which must lie in the range)."""
        if not self.lowest <= v <= self.highest:
            raise ValueError(f"{v} does not fit in {self.name}")
        return v & ((1 << self.width) - 1)

    def value(self, bits: int) -> Fraction:
        return Fraction(self.int_value(bits))

    def fields(self, bits: int) -> tuple[int, int, int]:
        """(sign, 0, magnitude): the integer read as a float with exponent 0."""
        v = self.int_value(bits)
        return int(v < 0), 0, abs(v)

    def pack(self, sign: int, exp: int, frac: int) -> int:
        """The pattern of (-1)^sign * frac (``exp`` must be 0)."""
        if exp:
            raise ValueError(f"{self.name} has no exponent")
        return self.encode(-frac if sign else frac)

    def classify(self, bits: int) -> str:
        """zero or normal (an integer has no special values)."""
        self._check(bits)
        return "zero" if bits == 0 else "normal"

    def is_negative_zero(self, bits: int) -> bool:
        return False

    def nan_bits(self) -> int:
        raise ValueError(f"{self.name} has no NaN")

    def inf_bits(self, sign: int) -> int:
        raise ValueError(f"{self.name} has no infinity")

    def max_finite_bits(self, sign: int) -> int:
        """The largest (sign 0) or the lowest (sign 1) integer's pattern."""
        return self.encode(self.lowest if sign else self.highest)

    def to_storage(self, bits: int) -> int:
        return bits

    def from_storage(self, word: int) -> int:
        if not 0 <= word < (1 << self.width):
            raise UserError(f"{word:#x} does not fit in {self.width} bits ({self.name})")
        return word

    def hex(self, bits: int) -> str:
        return f"0x{bits:0{(self.width + 3) // 4}x}"

    def round_value(self, value: Fraction, mode: str = "rne", sign_of_zero: int = 0) -> int:
        """The pattern of ``value`` rounded to an integer with ``mode`` (rne,
        rz, ru, rd) and clamped to the range (an integer format has no
        infinity: an integer past the range becomes its nearest end)."""
        value = Fraction(value)
        floor = value.numerator // value.denominator
        rem = value - floor
        if rem == 0:
            n = floor
        elif mode == "rd" or (mode == "rz" and value > 0):
            n = floor
        elif mode in ("ru", "rz"):
            n = floor + 1
        elif mode == "rne":
            n = floor + 1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and floor & 1) else floor
        else:
            raise ValueError(f"unknown rounding mode {mode!r}")
        return self.encode(min(max(n, self.lowest), self.highest))


INTEGER_FORMATS = (
    (IntFormat("int8", 8, True, "int8"), ("s8", "i8")),
    (IntFormat("uint8", 8, False, "uint8"), ("u8",)),
    (IntFormat("int4", 4, True, "int4"), ("s4", "i4")),
    (IntFormat("uint4", 4, False, "uint4"), ("u4",)),
    (IntFormat("int32", 32, True, "int32"), ("s32", "i32")),
)
"""Each integer format with its aliases (PTX's type names)."""
