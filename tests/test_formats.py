"""tcsmt.model.formats against ml_dtypes and NumPy, and against exact tables.

Every 8- and 16-bit encoding of the formats ml_dtypes knows is decoded by
both and compared exactly (value, class, sign of zero). Rounding
(``Format.round_value``) is compared with ml_dtypes' own round-to-nearest-even
conversions from float32 and float64, and, for every mode, with a table of
all finite values of the format (the neighbours of a value found by
bisection, not by bit arithmetic).

ml_dtypes behaviours the tests rely on (checked with ml_dtypes 0.6):
  * float8_e4m3fn has no infinity: a value that rounds past the largest
    finite number (448) becomes NaN with the value's sign (0x7f / 0xff).
    round_value does the same on purpose (specials == "fn").
  * float6_e2m3fn, float6_e3m2fn and float4_e2m1fn have neither infinity
    nor NaN: ml_dtypes saturates to the largest finite number, and so does
    round_value (specials == "none"). ml_dtypes turns a NaN into -0 for
    these formats; round_value has no NaN input, so that is not compared.
  * float8_e4m3fnuz and float8_e5m2fnuz have no infinity and no negative
    zero: 0x80 is their one NaN, a value that rounds past the largest finite
    number becomes that NaN, and a negative value that rounds to zero gives
    +0 (0x00). round_value does the same (specials == "fnuz").
  * ml_dtypes converts float64 to its own formats through float32, so it
    rounds twice: 1 + 2^-3 + 2^-40 becomes 1 in float8_e5m2 (the tie 1.125
    after the first rounding) where one correct rounding gives 1.25.
    round_value rounds once, correctly; the float64 comparison therefore
    compares round_value of the float32 value for those formats (NumPy's
    float16 rounds float64 once and is compared directly), and
    test_ml_dtypes_rounds_float64_twice pins the difference.
"""

from __future__ import annotations

import bisect
import decimal
import random
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcsmt.errors import UserError
from tcsmt.model.formats import (
    FORMATS,
    ROUNDING_MODES,
    Format,
    format_value,
    get_format,
    internal_format,
    parse_bits,
)

ML_FORMATS = ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
              "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
SMALL_FORMATS = ML_FORMATS           # every one has at most 16 bits
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def ml_type(name: str):
    return np.float16 if name == "float16" else getattr(ml_dtypes, name)


def uint_for(fmt: Format):
    return UINT[8] if fmt.bits <= 8 else UINT[fmt.bits]


def all_encodings(fmt: Format) -> np.ndarray:
    return np.arange(1 << fmt.bits, dtype=np.uint32).astype(uint_for(fmt))


def ml_bits(fmt: Format, values: np.ndarray) -> list[int]:
    """ml_dtypes' RNE conversion of float32/float64 values into fmt, as bits."""
    out = values.astype(ml_type(fmt.name)).view(uint_for(fmt))
    return [int(x) for x in out]


# ---------------------------------------------------------------------------
# Decoding every encoding
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ML_FORMATS)
def test_every_encoding_decodes_like_ml_dtypes(name):
    fmt = get_format(name)
    enc = all_encodings(fmt)
    with np.errstate(invalid="ignore"):
        floats = enc.view(ml_type(name)).astype(np.float64)
    smallest_normal = float(ml_dtypes.finfo(ml_type(name)).smallest_normal)
    for bits, x in zip(enc.tolist(), floats.tolist()):
        kind = fmt.classify(bits)
        v = fmt.value(bits)
        if np.isnan(x):
            assert kind == "nan", hex(bits)
            assert v != v
            continue
        if np.isinf(x):
            assert kind == "inf", hex(bits)
            assert v == x
            continue
        assert kind != "nan" and kind != "inf", hex(bits)
        assert v == Fraction(x), (hex(bits), v, x)
        if x == 0:
            assert kind == "zero", hex(bits)
            assert fmt.is_negative_zero(bits) == bool(np.signbit(x)), hex(bits)
        elif abs(x) < smallest_normal:
            assert kind == "subnormal", hex(bits)
        else:
            assert kind == "normal", hex(bits)
        assert (bits >> (fmt.bits - 1)) == int(np.signbit(x)), hex(bits)


@pytest.mark.parametrize("name", ML_FORMATS)
def test_format_constants_match_ml_dtypes_finfo(name):
    fmt = get_format(name)
    fi = ml_dtypes.finfo(ml_type(name))
    assert fmt.bits == fi.bits
    assert fmt.frac_bits == fi.nmant
    assert fmt.exp_bits == fi.nexp
    assert fmt.emin == fi.minexp
    assert fmt.emax == fi.maxexp - 1
    assert fmt.max_finite() == Fraction(float(fi.max))
    assert fmt.min_subnormal() == Fraction(float(fi.smallest_subnormal))
    assert fmt.value(fmt.max_finite_bits(0)) == fmt.max_finite()
    assert fmt.value(fmt.max_finite_bits(1)) == -fmt.max_finite()
    assert fmt.has_inf == (fmt.specials == "ieee")


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e5m2", "float8_e4m3fn",
                                  "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_canonical_specials(name):
    fmt = get_format(name)
    nan = fmt.nan_bits()
    assert fmt.classify(nan) == "nan"
    assert np.isnan(np.array([nan], dtype=uint_for(fmt)).view(ml_type(name))[0])
    if fmt.has_inf:
        for sign in (0, 1):
            x = np.array([fmt.inf_bits(sign)], dtype=uint_for(fmt)).view(ml_type(name))
            assert float(x[0]) == (float("-inf") if sign else float("inf"))
    else:
        with pytest.raises(ValueError):
            fmt.inf_bits(0)


def test_formats_without_nan_refuse_nan_bits():
    for name in ("float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"):
        with pytest.raises(ValueError):
            get_format(name).nan_bits()


# ---------------------------------------------------------------------------
# float32, float64 and tf32, sampled
# ---------------------------------------------------------------------------

def sample_words(bits: int, n: int, seed: int) -> list[int]:
    """Random words plus every exponent with a few fractions and the specials."""
    rng = random.Random(seed)
    fmt = {32: get_format("float32"), 64: get_format("float64")}[bits]
    out = [rng.getrandbits(bits) for _ in range(n)]
    for exp in range(1 << fmt.exp_bits):
        for frac in (0, 1, (1 << fmt.frac_bits) - 1, rng.getrandbits(fmt.frac_bits)):
            for sign in (0, 1):
                out.append(fmt.pack(sign, exp, frac))
    return out


@pytest.mark.parametrize("name,bits", [("float32", 32), ("float64", 64)])
def test_float32_float64_decode_sampled(name, bits):
    fmt = get_format(name)
    words = sample_words(bits, 4000, seed=bits)
    floats = np.array(words, dtype=UINT[bits]).view(np.float32 if bits == 32 else np.float64)
    with np.errstate(invalid="ignore"):
        floats = floats.astype(np.float64)
    for w, x in zip(words, floats.tolist()):
        kind = fmt.classify(w)
        if np.isnan(x):
            assert kind == "nan"
        elif np.isinf(x):
            assert kind == "inf" and fmt.value(w) == x
        else:
            assert fmt.value(w) == Fraction(x), hex(w)
            assert (kind == "zero") == (x == 0)
            assert fmt.is_negative_zero(w) == (x == 0 and bool(np.signbit(x)))


def test_tf32_decodes_like_the_top_19_bits_of_a_float32():
    tf32, f32 = get_format("tf32"), get_format("float32")
    assert (tf32.bits, tf32.storage_bits, tf32.exp_bits, tf32.frac_bits) == (19, 32, 8, 10)
    rng = random.Random(19)
    words = [rng.getrandbits(19) for _ in range(3000)]
    words += [tf32.pack(s, e, f) for s in (0, 1) for e in range(256) for f in (0, 1, 1023)]
    for w in words:
        as_f32 = tf32.to_storage(w)
        assert tf32.classify(w) == f32.classify(as_f32)
        v, u = tf32.value(w), f32.value(as_f32)
        assert (v != v and u != u) or v == u, hex(w)
        assert tf32.from_storage(as_f32) == w


def tf32_rne_by_bit_trick(word32: int) -> int:
    """The usual float32 -> tf32 conversion on the bits: add 0xfff plus the
    lowest kept bit, cut 13 bits (finite inputs only). Overflow lands on the
    infinity pattern by itself."""
    lsb = (word32 >> 13) & 1
    return ((word32 + 0xFFF + lsb) >> 13) & ((1 << 19) - 1)


def test_tf32_round_value_matches_the_bit_trick():
    tf32, f32 = get_format("tf32"), get_format("float32")
    rng = random.Random(1913)
    words = [rng.getrandbits(32) for _ in range(3000)]
    # ties and near-ties: low 13 bits exactly 0x1000, one either side
    for _ in range(1000):
        base = rng.getrandbits(19) << 13
        words += [base | 0x1000, base | 0x0FFF, base | 0x1001, base | 0x1FFF]
    words += [f32.max_finite_bits(0), f32.max_finite_bits(1), 0x7F7FF000, 0x7F7FEFFF]
    for w in words:
        if f32.classify(w) in ("nan", "inf"):
            continue
        got = tf32.round_value(f32.value(w), "rne", sign_of_zero=w >> 31)
        assert got == tf32_rne_by_bit_trick(w), (hex(w), hex(got))


def test_float64_to_float32_rounding_matches_numpy():
    f32, f64 = get_format("float32"), get_format("float64")
    words = sample_words(64, 3000, seed=6432)
    rng = random.Random(3264)
    # ties between float32 neighbours: float32 value + half an ulp, and 1 ulp of float64 either side
    for _ in range(1000):
        x = np.float32(np.array([rng.getrandbits(32)], dtype=np.uint32).view(np.float32)[0])
        if not np.isfinite(x):
            continue
        half = (np.float64(np.nextafter(x, np.float32(np.inf))) - np.float64(x)) / 2
        mid = np.float64(x) + half
        words += [int(np.array([m]).view(np.uint64)[0])
                  for m in (mid, np.nextafter(mid, 0.0), np.nextafter(mid, np.inf))]
    floats = np.array(words, dtype=np.uint64).view(np.float64)
    finite = floats[np.isfinite(floats)]
    with np.errstate(over="ignore"):
        expect = finite.astype(np.float32).view(np.uint32).tolist()
    for x, e in zip(finite.tolist(), expect):
        got = f32.round_value(Fraction(x), "rne", sign_of_zero=int(np.signbit(x)))
        assert got == e, (x, hex(got), hex(e))
    assert f64.round_value(Fraction(1, 3), "rne") == int(np.array([1 / 3]).view(np.uint64)[0])


# ---------------------------------------------------------------------------
# round_value against ml_dtypes (round to nearest even)
# ---------------------------------------------------------------------------

def finite_values(fmt: Format) -> list[Fraction]:
    return sorted(finite_table(fmt))


def finite_table(fmt: Format) -> dict[Fraction, int]:
    """Every finite value of fmt and its encoding (+0 for zero)."""
    table: dict[Fraction, int] = {}
    for bits in range(1 << fmt.bits):
        if fmt.classify(bits) not in ("nan", "inf"):
            table.setdefault(fmt.value(bits), bits)
    return table


_CACHE: dict[str, dict[Fraction, int]] = {}
_SORTED: dict[str, list[Fraction]] = {}


def encodings_cached(name: str) -> dict[Fraction, int]:
    if name not in _CACHE:
        _CACHE[name] = finite_table(get_format(name))
    return _CACHE[name]


def finite_values_cached(name: str) -> list[Fraction]:
    if name not in _SORTED:
        _SORTED[name] = sorted(encodings_cached(name))
    return _SORTED[name]


_EDGES: dict[str, list[Fraction]] = {}


def edge_values(fmt: Format) -> list[Fraction]:
    if fmt.name not in _EDGES:
        _EDGES[fmt.name] = make_edge_values(fmt)
    return _EDGES[fmt.name]


def make_edge_values(fmt: Format) -> list[Fraction]:
    """Midpoints between neighbours, each neighbour, values just around the
    midpoints, and values beyond the largest finite number. Every pair of
    neighbours for the 8-bit formats; for the 16-bit ones the pairs near
    both ends (overflow), near zero (subnormals) and 1500 others."""
    vals = finite_values_cached(fmt.name)
    n = len(vals) - 1
    pairs = range(n)
    if n > 1000:
        zero = vals.index(Fraction(0))
        picked = set(range(300)) | set(range(n - 300, n)) | set(range(zero - 300, zero + 300))
        picked |= set(random.Random(fmt.name).sample(range(n), 1500))
        pairs = sorted(picked)
    out: list[Fraction] = []
    for i in pairs:
        lo, hi = vals[i], vals[i + 1]
        mid = (lo + hi) / 2
        tiny = (hi - lo) / 4096
        out += [lo, mid, mid + tiny, mid - tiny]
    top = fmt.max_finite()
    ulp_top = Fraction(2) ** (fmt.emax - fmt.frac_bits)
    for k in (Fraction(1, 2), Fraction(3, 4), Fraction(1), Fraction(3, 2), Fraction(2), Fraction(1000)):
        out += [top + k * ulp_top, -(top + k * ulp_top)]
    out += [fmt.min_subnormal() / 2, fmt.min_subnormal() / 3, -fmt.min_subnormal() / 2,
            fmt.min_subnormal() * Fraction(3, 4), -fmt.min_subnormal() * Fraction(3, 4)]
    return out


def exactly_float32(v: Fraction) -> bool:
    with np.errstate(over="ignore"):
        f = np.float32(float(v))
    return np.isfinite(f) and Fraction(float(f)) == v


@pytest.mark.parametrize("name", ML_FORMATS)
def test_round_value_matches_ml_dtypes_on_edges_from_float32(name):
    fmt = get_format(name)
    vals = [v for v in edge_values(fmt) if exactly_float32(v)]
    assert len(vals) > 50
    arr = np.array([float(v) for v in vals], dtype=np.float32)
    with np.errstate(over="ignore"):
        expect = ml_bits(fmt, arr)
    for v, e in zip(vals, expect):
        got = fmt.round_value(v, "rne", sign_of_zero=int(v < 0))
        assert got == e, (name, v, hex(got), hex(e))


@pytest.mark.parametrize("name", ML_FORMATS)
def test_round_value_matches_ml_dtypes_on_random_float32(name):
    fmt = get_format(name)
    rng = random.Random(name)
    words = [rng.getrandbits(32) for _ in range(3000)]
    # values within the format's range are the interesting ones: exponent near the format's
    for _ in range(3000):
        e = rng.randint(fmt.emin - fmt.frac_bits - 3, fmt.emax + 2) + 127
        e = min(max(e, 0), 254)
        words.append((rng.getrandbits(1) << 31) | (e << 23) | rng.getrandbits(23))
    arr = np.array(words, dtype=np.uint32).view(np.float32)
    arr = arr[np.isfinite(arr)]
    with np.errstate(over="ignore"):
        expect = ml_bits(fmt, arr)
    for x, e in zip(arr.astype(np.float64).tolist(), expect):
        got = fmt.round_value(Fraction(x), "rne", sign_of_zero=int(np.signbit(x)))
        assert got == e, (name, x, hex(got), hex(e))


def near_grid(data, fmt: Format, max_den_bits: int) -> Fraction:
    """A value near fmt's grid: one of its finite values plus or minus up to
    one spacing, with a fraction of the spacing that has up to
    ``max_den_bits`` bits (ties are fractions 1/2)."""
    vals = finite_values_cached(fmt.name)
    base = vals[data.draw(st.integers(0, len(vals) - 1))]
    e = fmt.emin if base == 0 else max(floor_log2_fraction(abs(base)), fmt.emin)
    spacing = Fraction(2) ** (e - fmt.frac_bits)
    num = data.draw(st.one_of(st.sampled_from([0, 1 << (max_den_bits - 1)]),
                              st.integers(0, 1 << max_den_bits)))
    tweak = data.draw(st.sampled_from([0, 0, 1, -1]))
    offset = Fraction(num + tweak, 1 << max_den_bits) * spacing
    return base + offset * data.draw(st.sampled_from([1, -1]))


def floor_log2_fraction(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    return e if Fraction(2) ** e <= x else e - 1


@pytest.mark.parametrize("name", ML_FORMATS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_round_value_matches_ml_dtypes_from_float64(name, data):
    """float16 (NumPy's own conversion) rounds float64 once; ml_dtypes'
    formats round float64 to float32 first and then to the format, so for
    them round_value is compared on the float32 value."""
    fmt = get_format(name)
    # offsets with up to 40 bits below the format's last bit: float64 holds
    # them, float32 does not always
    x = float(near_grid(data, fmt, 40))         # nearest float64
    if x == 0:
        return   # a zero made from a Fraction has no sign to compare
    with np.errstate(over="ignore"):
        expect = ml_bits(fmt, np.array([x], dtype=np.float64))[0]
        x32 = np.float32(x)
    if name == "float16":
        got = fmt.round_value(Fraction(x), "rne")
    elif np.isinf(x32):
        assert fmt.classify(expect) == "inf" or fmt.specials != "ieee"
        return
    else:
        got = fmt.round_value(Fraction(float(x32)), "rne", sign_of_zero=int(x < 0))
    assert got == expect, (name, x, hex(got), hex(expect))


@pytest.mark.parametrize("name,x,twice,once", [
    ("float8_e5m2", 1 + 2**-3 + 2**-40, 1.0, Fraction(5, 4)),
    ("float8_e4m3fn", 432 - 2**-35, 448.0, Fraction(416)),
    ("bfloat16", 1 + 2**-8 + 2**-40, 1.0, 1 + Fraction(1, 128)),
    ("float4_e2m1fn", 5 + 2**-40, 4.0, Fraction(6)),
])
def test_ml_dtypes_rounds_float64_twice(name, x, twice, once):
    """The known difference, pinned: ml_dtypes goes through float32 (the
    first rounding makes a tie), round_value rounds once."""
    fmt = get_format(name)
    assert float(np.array([x]).astype(ml_type(name))[0]) == twice
    assert fmt.value(fmt.round_value(Fraction(x), "rne")) == once


def test_fnuz_formats_have_one_nan_and_no_negative_zero():
    for name, bias, top in (("float8_e4m3fnuz", 8, 240), ("float8_e5m2fnuz", 16, 57344)):
        fmt = get_format(name)
        assert fmt.bias == bias and fmt.max_finite() == top and not fmt.has_inf
        assert fmt.nan_bits() == 0x80 and [fmt.classify(b) for b in range(256)].count("nan") == 1
        assert fmt.round_value(Fraction(0), "rne", sign_of_zero=1) == 0
        assert fmt.round_value(-fmt.min_subnormal() / 4, "rz") == 0
        assert fmt.round_value(Fraction(-10 ** 9), "rne") == 0x80
        assert fmt.round_value(Fraction(-10 ** 9), "rz") == fmt.max_finite_bits(1)
        assert get_format(name.removeprefix("float8_")) is fmt


def test_xf32_is_tf32_under_amds_name():
    xf32, tf32 = get_format("xf32"), get_format("tf32")
    assert (xf32.exp_bits, xf32.frac_bits, xf32.storage_bits) == (8, 10, 32)
    assert all(xf32.value(w) == tf32.value(w) for w in range(0, 1 << 19, 97) if tf32.classify(w) != "nan")


def test_negative_zero_and_underflow_sign():
    for name in ML_FORMATS + ["float32", "float64", "tf32"]:
        fmt = get_format(name)
        if not fmt.has_negative_zero:
            continue            # tested above
        assert fmt.is_negative_zero(fmt.round_value(Fraction(0), "rne", sign_of_zero=1))
        assert not fmt.is_negative_zero(fmt.round_value(Fraction(0), "rne", sign_of_zero=0))
        tiny = fmt.min_subnormal() / 4
        assert fmt.is_negative_zero(fmt.round_value(-tiny, "rne"))
        assert fmt.round_value(tiny, "rne") == 0
        assert fmt.value(fmt.round_value(tiny, "ru")) == fmt.min_subnormal()
        assert fmt.value(fmt.round_value(-tiny, "rd")) == -fmt.min_subnormal()
        assert fmt.is_negative_zero(fmt.round_value(-tiny, "rz"))


# ---------------------------------------------------------------------------
# Every rounding mode against the table of finite values
# ---------------------------------------------------------------------------

def expected_rounding(fmt: Format, table: list[Fraction], v: Fraction, mode: str):
    """The value round_value must give for v (a Fraction, or "nan"/±inf for
    the overflow cases), found from the sorted table of finite values."""
    top = table[-1]
    i = bisect.bisect_left(table, v)
    if i < len(table) and table[i] == v:
        return v
    lo = table[i - 1] if i > 0 else None          # largest value below v
    hi = table[i] if i < len(table) else None     # smallest value above v
    if mode == "rne":
        if lo is not None and hi is not None:
            if v - lo != hi - v:
                return lo if v - lo < hi - v else hi
            even = encodings_cached(fmt.name)[lo] & 1 == 0
            return lo if even else hi
        # beyond the largest finite number: IEEE rounds with an unbounded
        # exponent; past top + half an ulp it overflows, and at exactly
        # top + half an ulp the tie goes to top only if top is even (it is
        # for float8_e4m3fn, whose largest fraction is 110, not 111)
        half = Fraction(2) ** (fmt.emax - fmt.frac_bits) / 2
        top_even = encodings_cached(fmt.name)[top] & 1 == 0
        if abs(v) < top + half or (abs(v) == top + half and top_even):
            return top if v > 0 else -top
        return overflow_value(fmt, v > 0)
    if mode == "rz":
        cand = lo if v > 0 else hi
        return cand if cand is not None else (top if v > 0 else -top)
    if mode == "ru":
        return hi if hi is not None else overflow_value(fmt, True)
    if mode == "rd":
        return lo if lo is not None else overflow_value(fmt, False)
    raise AssertionError(mode)


def overflow_value(fmt: Format, positive: bool):
    """What a rounding away from zero past the largest finite number gives:
    infinity (ieee), NaN (fn, like ml_dtypes), the largest finite (none)."""
    if fmt.specials == "ieee":
        return float("inf") if positive else float("-inf")
    if fmt.specials in ("fn", "fnuz"):
        return "nan"
    top = fmt.max_finite()
    return top if positive else -top


def check_mode(fmt: Format, table: list[Fraction], v: Fraction, mode: str) -> None:
    got_bits = fmt.round_value(v, mode)
    got = fmt.value(got_bits)
    want = expected_rounding(fmt, table, v, mode)
    if want == "nan":
        assert got != got, (fmt.name, v, mode, hex(got_bits))
        assert got_bits >> (fmt.bits - 1) == int(v < 0 or fmt.specials == "fnuz")
        return
    assert got == want, (fmt.name, v, mode, got, want)
    if got == 0:
        assert fmt.is_negative_zero(got_bits) == (v < 0 and fmt.has_negative_zero), (fmt.name, v)


@pytest.mark.parametrize("mode", ROUNDING_MODES)
@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_round_value_every_mode_on_edges(name, mode):
    fmt = get_format(name)
    table = finite_values_cached(name)
    for v in edge_values(fmt):
        if v != 0:
            check_mode(fmt, table, v, mode)


@pytest.mark.parametrize("name", SMALL_FORMATS)
@settings(max_examples=150, deadline=None)
@given(mode=st.sampled_from(ROUNDING_MODES), data=st.data())
def test_round_value_every_mode_random(name, mode, data):
    fmt = get_format(name)
    table = finite_values_cached(name)
    v = near_grid(data, fmt, 12)
    if v != 0:
        check_mode(fmt, table, v, mode)


@pytest.mark.parametrize("mode", ROUNDING_MODES)
def test_round_value_float32_directed_modes_against_nextafter(mode):
    """float32: the result lies on the mode's side of v, and its neighbour
    (NumPy's nextafter) lies on the other side."""
    f32 = get_format("float32")
    rng = random.Random(32 + len(mode))
    for _ in range(1500):
        e = rng.randint(-152, 130)
        v = Fraction(rng.getrandbits(40) + 1, 1 << 39) * Fraction(2) ** e * rng.choice((1, -1))
        bits = f32.round_value(v, mode)
        r = np.array([bits], dtype=np.uint32).view(np.float32)[0]
        if not np.isfinite(r):
            assert abs(v) > f32.max_finite()
            continue
        rv = Fraction(float(r))
        with np.errstate(over="ignore"):
            up = np.nextafter(r, np.float32(np.inf))
            dn = np.nextafter(r, np.float32(-np.inf))
        if mode == "rne":
            assert abs(rv - v) <= abs(Fraction(float(up)) - v) if np.isfinite(up) else True
            assert abs(rv - v) <= abs(Fraction(float(dn)) - v) if np.isfinite(dn) else True
            continue
        toward = {"ru": "up", "rd": "down", "rz": "down" if v > 0 else "up"}[mode]
        if toward == "up":
            assert rv >= v and (not np.isfinite(dn) or Fraction(float(dn)) < v), (v, mode)
        else:
            assert rv <= v and (not np.isfinite(up) or Fraction(float(up)) > v), (v, mode)


def test_round_value_rejects_unknown_mode():
    with pytest.raises(ValueError):
        get_format("float16").round_value(Fraction(1), "rna")


# ---------------------------------------------------------------------------
# Names, parsing, internal formats, decimal rendering
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("alias,name", [
    ("fp16", "float16"), ("half", "float16"), ("binary16", "float16"), ("F16", "float16"),
    ("bf16", "bfloat16"), (" BF16 ", "bfloat16"), ("bfloat16", "bfloat16"),
    ("fp32", "float32"), ("single", "float32"), ("binary32", "float32"), ("f32", "float32"),
    ("fp64", "float64"), ("double", "float64"), ("binary64", "float64"),
    ("tf32", "tf32"), ("TensorFloat32", "tf32"),
    ("e4m3", "float8_e4m3fn"), ("fp8", "float8_e4m3fn"), ("fp8_e4m3", "float8_e4m3fn"),
    ("e5m2", "float8_e5m2"), ("bf8", "float8_e5m2"), ("fp8_e5m2", "float8_e5m2"),
    ("e2m3", "float6_e2m3fn"), ("fp6_e2m3", "float6_e2m3fn"),
    ("e3m2", "float6_e3m2fn"), ("fp6_e3m2", "float6_e3m2fn"),
    ("e2m1", "float4_e2m1fn"), ("fp4", "float4_e2m1fn"), ("fp4_e2m1", "float4_e2m1fn"),
])
def test_aliases(alias, name):
    assert get_format(alias).name == name
    assert get_format(alias) is FORMATS[name]


@pytest.mark.parametrize("bad", ["fp12", "", "e1m3", "e16m3", "e5m0", "e5m", "float8", "int16"])
def test_unknown_format_names_are_user_errors(bad):
    with pytest.raises(UserError):
        get_format(bad)


def test_internal_format_e8m13():
    fmt = get_format("e8m13")
    assert fmt == internal_format(8, 13)
    assert (fmt.exp_bits, fmt.frac_bits, fmt.bits, fmt.bias) == (8, 13, 22, 127)
    assert fmt.specials == "ieee" and fmt.has_inf and fmt.has_nan
    f32 = get_format("float32")
    assert (fmt.emin, fmt.emax) == (f32.emin, f32.emax)
    assert fmt.max_finite() == (2 - Fraction(1, 1 << 13)) * Fraction(2) ** 127
    assert fmt.min_subnormal() == Fraction(2) ** -139
    # e8m13 is float32 with its low 10 fraction bits cut: values agree
    rng = random.Random(813)
    for _ in range(2000):
        w = rng.getrandbits(22)
        v, u = fmt.value(w), f32.value(w << 10)
        assert (v != v and u != u) or v == u, hex(w)
    # rounding toward zero into e8m13 cuts the low 10 bits of a float32
    for _ in range(2000):
        w = rng.getrandbits(32)
        if f32.classify(w) in ("nan", "inf"):
            continue
        assert fmt.round_value(f32.value(w), "rz", sign_of_zero=w >> 31) == w >> 10, hex(w)


def test_parse_bits():
    f16, tf32, f32 = get_format("float16"), get_format("tf32"), get_format("float32")
    assert parse_bits("0x3c00", f16) == 0x3C00
    assert parse_bits("0X3C00 ", f16) == 0x3C00
    assert parse_bits("0x3f800000", f32) == 0x3F800000
    assert tf32.value(parse_bits("0x3f800000", tf32)) == 1
    assert tf32.value(parse_bits("0x3f802000", tf32)) == 1 + Fraction(1, 1024)   # bit 13: tf32's last bit
    assert parse_bits("0xffffe000", tf32) == (1 << 19) - 1
    for bad in ("0x3f801000", "0x3f800001", "0x3f800fff"):       # low 13 bits must be zero
        with pytest.raises(UserError, match="low 13 bits"):
            parse_bits(bad, tf32)
    for bad, fmt in (("0x10000", f16), ("0x1ffffffff", tf32), ("3c00", f16), ("0xzz", f16), ("0x", f16)):
        with pytest.raises(UserError):
            parse_bits(bad, fmt)
    assert tf32.hex(parse_bits("0x3f802000", tf32)) == "0x3f802000"
    assert f16.hex(0x1) == "0x0001"


def exact_decimal(v: Fraction) -> str:
    """v as a decimal with the decimal module at a precision that holds it exactly."""
    with decimal.localcontext() as ctx:
        ctx.prec = 2000
        d = decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator)
        s = format(d.normalize(), "f")
    return s


@pytest.mark.parametrize("v,text", [
    (Fraction(0), "0"), (Fraction(1), "1"), (Fraction(-3, 4), "-0.75"), (Fraction(1, 2), "0.5"),
    (Fraction(1, 1 << 24), "0.000000059604644775390625"), (Fraction(65504), "65504"),
    (Fraction(5, 4) * 1024, "1280"), (float("inf"), "inf"), (float("-inf"), "-inf"),
    (float("nan"), "nan"),
])
def test_format_value_pinned(v, text):
    assert format_value(v) == text


@settings(max_examples=300, deadline=None)
@given(num=st.integers(-(1 << 60), 1 << 60), k=st.integers(0, 160))
def test_format_value_is_the_exact_decimal(num, k):
    v = Fraction(num, 1 << k)
    s = format_value(v)
    assert Fraction(s) == v
    assert s == ("0" if v == 0 else exact_decimal(v))


def test_format_value_of_every_float32_power_of_two():
    for e in range(-149, 128):
        v = Fraction(2) ** e
        assert Fraction(format_value(v)) == v
        assert format_value(v) == exact_decimal(v)


# ---------------------------------------------------------------------------
# Scale formats: ue8m0 (MX) and ue4m3 (NVFP4)
# ---------------------------------------------------------------------------

def test_ue8m0_decodes_every_encoding_like_ml_dtypes():
    fmt = get_format("ue8m0")
    assert fmt.name == "float8_e8m0fnu" and fmt.bits == 8 and not fmt.signed
    enc = np.arange(256, dtype=np.uint8)
    with np.errstate(invalid="ignore"):
        floats = enc.view(ml_dtypes.float8_e8m0fnu).astype(np.float64).tolist()
    for bits, x in zip(enc.tolist(), floats):
        if np.isnan(x):
            assert fmt.classify(bits) == "nan" and bits == 0xFF == fmt.nan_bits()
            continue
        assert fmt.classify(bits) == "normal", hex(bits)      # no zero, no subnormals
        assert fmt.value(bits) == Fraction(x) == Fraction(2) ** (bits - 127), hex(bits)
    fi = ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu)
    assert (fmt.emin, fmt.emax + 1, fmt.max_finite()) == (fi.minexp, fi.maxexp, Fraction(float(fi.max)))
    assert fmt.min_subnormal() == Fraction(2) ** -127


def test_ue4m3_is_e4m3_with_the_sign_bit_ignored():
    fmt, e4m3 = get_format("ue4m3"), get_format("e4m3")
    assert (fmt.bits, fmt.storage_bits, fmt.signed) == (7, 8, False)
    enc = np.arange(256, dtype=np.uint8)
    with np.errstate(invalid="ignore"):
        floats = enc.view(ml_dtypes.float8_e4m3fn).astype(np.float64).tolist()
    for word, x in zip(enc.tolist(), floats):
        bits = parse_bits(f"{word:#04x}", fmt)
        assert bits == word & 0x7F
        if np.isnan(x):
            assert fmt.classify(bits) == "nan" and bits == fmt.nan_bits() == 0x7F
            continue
        assert fmt.value(bits) == abs(Fraction(x)) == abs(e4m3.value(word)), hex(word)
        assert fmt.classify(bits) == e4m3.classify(bits), hex(word)
        assert not fmt.is_negative_zero(bits)
    assert fmt.hex(0x38) == "0x38" and fmt.value(0x38) == 1


def test_scale_formats_are_not_rounded_into():
    for name in ("ue8m0", "ue4m3"):
        with pytest.raises(ValueError):
            get_format(name).round_value(Fraction(1))
    with pytest.raises(ValueError):
        get_format("ue8m0").pack(1, 0, 0)
