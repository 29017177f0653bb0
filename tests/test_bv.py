"""The Python-int interpretation and the derived operations of tcsmt.datapath.bv.

Each primitive of ``tcsmt.interp.ints`` is compared with plain Python integer
arithmetic, written out here, for every operand (pair) at widths 1 to 5.
The derived operations of ``tcsmt.datapath.bv`` (clz, shifts by amounts of any width,
shifted_out, low_mask, max/min, abs_s...) are compared the same way. These
expectations are the meaning every other interpretation (NumPy, SMT) must
share.
"""

from __future__ import annotations

import itertools

import pytest

from tcsmt.datapath import bv
from tcsmt.interp.ints import INT, DataBranchError, IntBool, IntWord

WIDTHS = [1, 2, 3, 4, 5]
I = INT


def w(v: int, width: int) -> IntWord:
    return I.const(v, width)


def val(x) -> int:
    """The unsigned value of a word or the truth of a Bool (as 0/1)."""
    if isinstance(x, IntBool):
        return int(I.value(x))
    assert isinstance(x, IntWord)
    assert 0 <= x.v < (1 << x.w), x
    return x.v


def signed(v: int, width: int) -> int:
    """Two's complement reading, written independently of interp_int."""
    return v - (1 << width) if v >= (1 << (width - 1)) else v


def pairs(width: int):
    return itertools.product(range(1 << width), repeat=2)


# ---------------------------------------------------------------------------
# Primitives, every operand pair at widths 1..5
# ---------------------------------------------------------------------------

BINARY = {
    "add": lambda x, y, n: (x + y) % (1 << n),
    "sub": lambda x, y, n: (x - y) % (1 << n),
    "mul": lambda x, y, n: (x * y) % (1 << n),
    "bvand": lambda x, y, n: x & y,
    "bvor": lambda x, y, n: x | y,
    "bvxor": lambda x, y, n: x ^ y,
    # a shift by the width or more gives 0, or all sign bits for ashr
    "shl": lambda x, s, n: (x * 2**s) % (1 << n) if s < n else 0,
    "lshr": lambda x, s, n: x // 2**s if s < n else 0,
    "ashr": lambda x, s, n: (signed(x, n) // 2**min(s, n)) % (1 << n),
    "eq": lambda x, y, n: int(x == y),
    "ult": lambda x, y, n: int(x < y),
    "ule": lambda x, y, n: int(x <= y),
    "slt": lambda x, y, n: int(signed(x, n) < signed(y, n)),
    "sle": lambda x, y, n: int(signed(x, n) <= signed(y, n)),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("n", WIDTHS)
def test_binary_primitive_exhaustive(op, n):
    f = getattr(I, op)
    want = BINARY[op]
    for x, y in pairs(n):
        r = f(w(x, n), w(y, n))
        assert val(r) == want(x, y, n), (op, n, x, y)
        if isinstance(r, IntWord):
            assert I.width(r) == n


def test_ashr_examples():
    # -8 >> 1 = -4, and a shift past the width keeps only sign bits
    assert val(I.ashr(w(0b1000, 4), w(1, 4))) == 0b1100
    assert val(I.ashr(w(0b1000, 4), w(15, 4))) == 0b1111
    assert val(I.ashr(w(0b0111, 4), w(15, 4))) == 0
    assert val(I.ashr(w(0b0111, 4), w(4, 4))) == 0


UNARY = {
    "neg": lambda x, n: (-x) % (1 << n),
    "bvnot": lambda x, n: (1 << n) - 1 - x,
}


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("n", WIDTHS)
def test_unary_primitive_exhaustive(op, n):
    for x in range(1 << n):
        r = getattr(I, op)(w(x, n))
        assert val(r) == UNARY[op](x, n) and I.width(r) == n, (op, n, x)


@pytest.mark.parametrize("n", WIDTHS)
def test_const_wraps_modulo_width(n):
    for v in range(-40, 40):
        x = I.const(v, n)
        assert val(x) == v % (1 << n) and I.width(x) == n
    assert val(I.const((1 << 70) + 3, n)) == 3 % (1 << n)
    with pytest.raises(ValueError):
        I.const(1, 0)


@pytest.mark.parametrize("n", WIDTHS)
def test_extract_every_range(n):
    for x in range(1 << n):
        for lo in range(n):
            for hi in range(lo, n):
                r = I.extract(w(x, n), hi, lo)
                assert I.width(r) == hi - lo + 1
                assert val(r) == (x // 2**lo) % 2 ** (hi - lo + 1), (x, hi, lo)
    for hi, lo in ((n, 0), (0, 1), (n + 3, n), (-1, 0)):
        if 0 <= lo <= hi < n:
            continue
        with pytest.raises(ValueError):
            I.extract(w(0, n), hi, lo)


def test_concat_every_pair_of_widths():
    for n, m in itertools.product(range(1, 5), repeat=2):
        for x in range(1 << n):
            for y in range(1 << m):
                r = I.concat(w(x, n), w(y, m))
                assert I.width(r) == n + m
                assert val(r) == x * 2**m + y


@pytest.mark.parametrize("n", WIDTHS)
def test_zext_and_sext(n):
    for x in range(1 << n):
        for k in range(0, 4):
            z, s = I.zext(w(x, n), k), I.sext(w(x, n), k)
            assert I.width(z) == I.width(s) == n + k
            assert val(z) == x
            assert val(s) == signed(x, n) % (1 << (n + k))
            assert signed(val(s), n + k) == signed(x, n)


def test_ite_on_words_and_bools():
    t, f = I.bool_const(True), I.bool_const(False)
    for n in WIDTHS:
        for x, y in pairs(n):
            assert val(I.ite(t, w(x, n), w(y, n))) == x
            assert val(I.ite(f, w(x, n), w(y, n))) == y
    assert val(I.ite(t, f, t)) == 0 and val(I.ite(f, f, t)) == 1
    with pytest.raises(ValueError):
        I.ite(t, w(1, 3), w(1, 4))


def test_bool_connectives():
    bools = [I.bool_const(False), I.bool_const(True)]
    for k in range(0, 4):
        for combo in itertools.product([0, 1], repeat=k):
            args = [bools[b] for b in combo]
            assert val(I.and_(*args)) == int(all(combo))
            assert val(I.or_(*args)) == int(any(combo))
    assert val(I.not_(bools[0])) == 1 and val(I.not_(bools[1])) == 0
    assert val(I.bool_const(1)) == 1 and val(I.bool_const(0)) == 0


@pytest.mark.parametrize("op", ["add", "sub", "mul", "bvand", "bvor", "bvxor",
                                "shl", "lshr", "ashr", "eq", "ult", "ule", "slt", "sle"])
def test_width_mismatch_is_refused(op):
    with pytest.raises(ValueError):
        getattr(I, op)(w(1, 3), w(1, 4))


def test_width_and_primitive_list():
    assert I.width(w(5, 7)) == 7
    for name in bv.PRIMITIVES:
        assert callable(getattr(I, name)), name


# ---------------------------------------------------------------------------
# The refusal of bool(): a Python `if` on data fails at once
# ---------------------------------------------------------------------------

def test_words_and_bools_refuse_bool():
    x, b = w(1, 4), I.bool_const(True)
    for thing in (x, b, I.eq(x, x), I.ult(x, x)):
        with pytest.raises(DataBranchError):
            bool(thing)
        with pytest.raises(DataBranchError):
            if thing:
                pass
        with pytest.raises(DataBranchError):
            _ = not thing
        with pytest.raises(DataBranchError):
            _ = thing and True
        with pytest.raises(DataBranchError):
            _ = thing or True
    assert issubclass(DataBranchError, TypeError)


def test_words_refuse_python_equality_and_hashing():
    with pytest.raises(DataBranchError):
        _ = w(1, 4) == w(1, 4)
    with pytest.raises(TypeError):
        hash(w(1, 4))


# ---------------------------------------------------------------------------
# Derived operations, exhaustive at small widths
# ---------------------------------------------------------------------------

def test_bits_for():
    for n in range(0, 300):
        k = bv.bits_for(n)
        assert k >= 1 and n < 2**k and (k == 1 or n >= 2 ** (k - 1))


@pytest.mark.parametrize("n", list(range(1, 9)))
def test_clz(n):
    for x in range(1 << n):
        r = bv.clz(I, w(x, n))
        want = n if x == 0 else n - len(bin(x)[2:])
        assert val(r) == want, (n, x)
        assert I.width(r) == bv.bits_for(n)
        g = bv.clz_generic(I, w(x, n))      # what interpretations without a native count run
        assert (val(g), I.width(g)) == (val(r), I.width(r)), (n, x)


def test_native_clz_is_the_generic_one_at_every_width():
    """The Python ints count leading zeros natively (bit_length); the words
    they give are those of clz over the primitives, at widths up to 130,
    for zero, one bit set, all ones and random values."""
    import random
    rng = random.Random(5)
    assert hasattr(I, "count_leading_zeros")
    for n in range(1, 131):
        xs = {0, 1, (1 << n) - 1, 1 << (n - 1)} | {rng.getrandbits(rng.randint(1, n)) for _ in range(20)}
        for x in xs:
            r, g = bv.clz(I, w(x, n)), bv.clz_generic(I, w(x, n))
            assert (val(r), I.width(r)) == (val(g), I.width(g)), (n, x)


def test_constants_are_shared_but_never_changed():
    """The ints interpretation reuses constant words; a reused word holds
    its value, and values outside a width are reduced as before."""
    from tcsmt.interp.ints import IntInterp
    fresh = IntInterp()             # INT's table may be full after other tests
    a, b = fresh.const(5, 8), fresh.const(5, 8)
    assert a is b and val(a) == 5
    assert val(fresh.const(-1, 8)) == 255 and val(fresh.const(256 + 3, 8)) == 3
    assert val(fresh.add(a, b)) == 10 and val(a) == 5
    with pytest.raises(ValueError):
        fresh.const(1, 0)
    for v in range(IntInterp.CONSTS + 10):      # past a full table, words are still right
        assert val(fresh.const(v, 16)) == v


@pytest.mark.parametrize("n", WIDTHS)
def test_shifts_by_amounts_of_any_width(n):
    """lshr_by / shl_by with a shift amount narrower than, as wide as, and
    wider than the word; amounts of the width or more give 0."""
    for sw in range(1, n + 4):
        for x in range(1 << n):
            for s in range(1 << sw):
                r = bv.lshr_by(I, w(x, n), w(s, sw))
                assert val(r) == (x >> s if s < n else 0) and I.width(r) == n, (n, sw, x, s)
                r = bv.shl_by(I, w(x, n), w(s, sw))
                assert val(r) == ((x << s) % (1 << n) if s < n else 0) and I.width(r) == n


@pytest.mark.parametrize("n", WIDTHS)
def test_shifted_out_and_low_mask(n):
    for sw in range(1, n + 3):
        for s in range(1 << sw):
            mask = bv.low_mask(I, w(s, sw), n)
            assert I.width(mask) == n
            assert val(mask) == (1 << min(s, n)) - 1, (n, sw, s)
            for x in range(1 << n):
                lost = x % (1 << min(s, n)) != 0       # a one bit below the cut
                assert val(bv.shifted_out(I, w(x, n), w(s, sw))) == int(lost), (n, x, s)


@pytest.mark.parametrize("n", WIDTHS)
def test_max_min(n):
    for x, y in pairs(n):
        X, Y = w(x, n), w(y, n)
        assert val(bv.umax(I, X, Y)) == max(x, y)
        sx, sy = signed(x, n), signed(y, n)
        assert signed(val(bv.smax(I, X, Y)), n) == max(sx, sy)
        assert signed(val(bv.smin(I, X, Y)), n) == min(sx, sy)


@pytest.mark.parametrize("n", WIDTHS)
def test_abs_s_and_neg_if(n):
    for x in range(1 << n):
        neg, mag = bv.abs_s(I, w(x, n))
        assert val(neg) == int(signed(x, n) < 0)
        # |x| read as unsigned: the most negative value is its own magnitude 2**(n-1)
        assert val(mag) == abs(signed(x, n)), (n, x)
        for c in (False, True):
            r = bv.neg_if(I, I.bool_const(c), w(x, n))
            assert val(r) == ((-x) % (1 << n) if c else x)


@pytest.mark.parametrize("n", WIDTHS)
def test_resize_and_sconst(n):
    for x in range(1 << n):
        for m in range(1, 8):
            assert val(bv.resize_u(I, w(x, n), m)) == x % (1 << m)
            rs = bv.resize_s(I, w(x, n), m)
            assert I.width(rs) == m
            if m >= n:
                assert signed(val(rs), m) == signed(x, n)
            else:
                assert val(rs) == x % (1 << m)
    for v in range(-(1 << (n - 1)), 1 << (n - 1)):
        assert signed(val(bv.sconst(I, v, n)), n) == v
    for v in (1 << (n - 1), -(1 << (n - 1)) - 1):
        with pytest.raises(ValueError):
            bv.sconst(I, v, n)


@pytest.mark.parametrize("n", WIDTHS)
def test_bit_helpers(n):
    for x in range(1 << n):
        X = w(x, n)
        assert val(bv.is_zero(I, X)) == int(x == 0)
        assert val(bv.msb(I, X)) == x >> (n - 1)
        for i in range(n):
            assert val(bv.bit(I, X, i)) == (x >> i) & 1
    assert val(bv.zero(I, n)) == 0 and val(bv.ones(I, n)) == (1 << n) - 1
    for c in (False, True):
        for m in (1, 3):
            r = bv.from_bool(I, I.bool_const(c), m)
            assert val(r) == int(c) and I.width(r) == m


def test_bool_helpers():
    F, T = I.bool_const(False), I.bool_const(True)
    assert val(bv.all_(I, [])) == 1 and val(bv.any_(I, [])) == 0
    for k in range(1, 4):
        for combo in itertools.product([0, 1], repeat=k):
            bs = [T if c else F for c in combo]
            assert val(bv.all_(I, bs)) == int(all(combo))
            assert val(bv.any_(I, bs)) == int(any(combo))
    for a, b in itertools.product([0, 1], repeat=2):
        assert val(bv.xor_b(I, T if a else F, T if b else F)) == a ^ b
