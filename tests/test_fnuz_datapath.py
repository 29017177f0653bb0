"""The datapath reads and writes the fnuz formats (float8_e4m3fnuz,
float8_e5m2fnuz: no infinity, no negative zero, 0x80 the one NaN, bias one
larger than OCP's) as tcsmt.model.formats does, which tests/test_formats.py
checks against ml_dtypes."""

import random
from fractions import Fraction

import pytest

from tcsmt.datapath import Fixed, round_fixed, unpack
from tcsmt.interp.ints import INT
from tcsmt.model.formats import ROUNDING_MODES, get_format

EW = 16
FNUZ = ["float8_e4m3fnuz", "float8_e5m2fnuz"]


@pytest.mark.parametrize("name", FNUZ)
def test_unpack_reads_every_encoding(name):
    fmt = get_format(name)
    for bits in range(256):
        t = unpack(INT, fmt, INT.const(bits, 8), EW, False)
        assert t.nan.b == (fmt.classify(bits) == "nan") and not t.inf.b
        if t.nan.b:
            continue
        exp = t.exp.v - (1 << EW) if t.exp.v >> (EW - 1) else t.exp.v
        value = Fraction(t.sig.v) * Fraction(2) ** (exp - t.frac) * (-1 if t.sign.b else 1)
        assert value == fmt.value(bits), hex(bits)


def fixed(v: Fraction) -> Fixed:
    """v = mag * 2**scale with an integer mag, as an unrounded sum."""
    scale = -64
    mag = abs(v) * Fraction(2) ** -scale
    assert mag.denominator == 1
    neg = INT.bool_const(v < 0)
    return Fixed(neg, INT.const(int(mag), 128), INT.const(scale & ((1 << EW) - 1), EW),
                 INT.bool_const(False), INT.bool_const(False), INT.bool_const(False),
                 neg, INT.bool_const(v >= 0))


@pytest.mark.parametrize("name", FNUZ)
@pytest.mark.parametrize("mode", ROUNDING_MODES)
def test_round_fixed_writes_like_round_value(name, mode):
    fmt = get_format(name)
    rng = random.Random(name + mode)
    values = [Fraction(0)]
    for _ in range(1500):
        e = rng.randint(fmt.emin - fmt.frac_bits - 3, fmt.emax + 2)
        v = Fraction(rng.getrandbits(12) + 1, 1 << 11) * Fraction(2) ** e
        values += [v, -v]
    for v in values:
        got = round_fixed(INT, fixed(v), fmt, mode, EW, "ieee", "ieee", False).v
        assert got == fmt.round_value(v, mode), (name, mode, v, hex(got))
