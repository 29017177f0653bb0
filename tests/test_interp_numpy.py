"""The NumPy interpretation against the Python-int one, primitive by primitive.

Exhaustive at small widths (every operand pair at widths 1..5, shift amounts
included, so shifts by the width and more are covered), random at widths up
to 64 (the dtype boundaries 8, 16, 32, 64 and the widths on either side of
them). Each operand is tried in the three forms a NumPy word can take: a
constant (Python int), a clean array, and a "dirty" array whose bits above
the width are set (the lazily masked results of add, sub, mul, neg, shl),
and arrays of shapes [N, 1] and [1, N] are combined to check broadcasting.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tcsmt.errors import UserError
from tcsmt.interp.arrays import NpBool, NpWord, NumpyInterp, WidthError, dtype_bits
from tcsmt.interp.ints import INT, DataBranchError, IntBool

N = NumpyInterp("test-model")
SMALL = [1, 2, 3, 4, 5]
WIDE = [6, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64]
BINARY = ["add", "sub", "mul", "bvand", "bvor", "bvxor", "shl", "lshr", "ashr",
          "eq", "ult", "ule", "slt", "sle"]
FUSED = {"smax": lambda I, x, y: I.ite(I.slt(x, y), y, x),
         "smin": lambda I, x, y: I.ite(I.slt(x, y), x, y),
         "umax": lambda I, x, y: I.ite(I.ult(x, y), y, x),
         "umin": lambda I, x, y: I.ite(I.ult(x, y), x, y)}
FORMS = ["const", "clean", "dirty"]


def word(values: np.ndarray, w: int, form: str, shape=None) -> list[NpWord] | NpWord:
    """Words of the given values in one of the three forms (a constant form
    gives one word per value)."""
    values = np.asarray(values, dtype=np.uint64)
    if form == "const":
        return [NpWord(int(v), w) for v in values]
    arr = N.array(values if shape is None else values.reshape(shape), w)
    if form == "dirty" and w < dtype_bits(w):
        junk = np.arange(arr.v.size, dtype=np.uint64).reshape(arr.v.shape) * 0x9E3779B97F4A7C15
        high = (junk << np.uint64(w)).astype(arr.v.dtype)       # bits at w and above
        return NpWord(arr.v | high, w, True)
    return arr


def values_of(r, n: int) -> list[int]:
    """Results of a NumPy primitive as n Python ints (Bools as 0/1)."""
    if isinstance(r, NpBool):
        return [int(v) for v in np.broadcast_to(np.asarray(r.b, dtype=bool), (n,)).reshape(-1)]
    assert isinstance(r, NpWord)
    out = np.broadcast_to(N.value(r), (n,)).reshape(-1)
    return [int(v) for v in out]


def int_result(op: str, x: int, y: int, w: int) -> int:
    if op in FUSED:
        r = FUSED[op](INT, INT.const(x, w), INT.const(y, w))
    else:
        r = getattr(INT, op)(INT.const(x, w), INT.const(y, w))
    return int(r.b) if isinstance(r, IntBool) else r.v


def check_binary(op: str, xs: np.ndarray, ys: np.ndarray, w: int, fx: str, fy: str) -> None:
    want = [int_result(op, int(x), int(y), w) for x, y in zip(xs, ys)]
    f = getattr(N, op)
    if fx == "const" and fy == "const":
        got = [values_of(f(a, b), 1)[0] for a, b in zip(word(xs, w, fx), word(ys, w, fy))]
    elif fx == "const" or fy == "const":
        # one constant against an array of every value
        got = []
        consts = word(xs if fx == "const" else ys, w, "const")
        for i, c in enumerate(consts):
            other = (ys if fx == "const" else xs)[i:i + 1]
            arr = word(other, w, fy if fx == "const" else fx)
            got.append(values_of(f(c, arr) if fx == "const" else f(arr, c), 1)[0])
    else:
        got = values_of(f(word(xs, w, fx), word(ys, w, fy)), len(xs))
    assert got == want, (op, w, fx, fy, [(int(x), int(y), g, e) for x, y, g, e
                                         in zip(xs, ys, got, want) if g != e][:5])


@pytest.mark.parametrize("w", SMALL)
@pytest.mark.parametrize("op", BINARY + sorted(FUSED))
def test_binary_exhaustive_small_widths(op, w):
    xs, ys = (np.array(v, dtype=np.uint64) for v in zip(*itertools.product(range(1 << w), repeat=2)))
    for fx, fy in itertools.product(FORMS, repeat=2):
        check_binary(op, xs, ys, w, fx, fy)


def random_operands(w: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random values plus the edge values (0, 1, all ones, the sign bit,
    small shift amounts and amounts around the width)."""
    rng = np.random.default_rng(seed)
    top = (1 << w) - 1
    edges = [0, 1, 2, top, top - 1, 1 << (w - 1), (1 << (w - 1)) - 1] + \
        [min(top, s) for s in (w - 1, w, w + 1, 63, 64, 65, 200)]
    edges = sorted({e & top for e in edges})
    xs = [int(v) & top for v in rng.integers(0, 1 << 63, n, dtype=np.uint64)] + edges * len(edges)
    ys = [int(v) >> (64 - w) for v in rng.integers(0, 1 << 63, n, dtype=np.uint64) * 2] + \
        [e for e in edges for _ in edges]
    return np.array(xs, dtype=np.uint64), np.array(ys, dtype=np.uint64)


@pytest.mark.parametrize("w", WIDE)
@pytest.mark.parametrize("op", BINARY + sorted(FUSED))
def test_binary_random_wide(op, w):
    xs, ys = random_operands(w, 150, seed=w)
    if op in ("shl", "lshr", "ashr"):
        ys = ys % np.uint64(min(1 << w, 130)) if w < 64 else ys   # many amounts near the width
    for fx, fy in [("clean", "clean"), ("dirty", "dirty"), ("dirty", "clean"),
                   ("const", "clean"), ("clean", "const")]:
        sel = slice(None) if "const" not in (fx, fy) else slice(0, 40)
        check_binary(op, xs[sel], ys[sel], w, fx, fy)


# ---------------------------------------------------------------------------
# Unary and width-changing primitives
# ---------------------------------------------------------------------------

def unary_cases(w: int) -> np.ndarray:
    if w <= 8:
        return np.arange(1 << w, dtype=np.uint64)
    xs, _ = random_operands(w, 200, seed=100 + w)
    return xs


def check_unary(fn_np, fn_int, w: int) -> None:
    xs = unary_cases(w)
    want = [fn_int(INT.const(int(x), w)) for x in xs]
    want = [int(r.b) if isinstance(r, IntBool) else (r.v, r.w) for r in want]
    for form in FORMS:
        if form == "const":
            got = [fn_np(c) for c in word(xs, w, "const")]
            got = [values_of(r, 1)[0] if isinstance(r, NpBool) else (values_of(r, 1)[0], r.w)
                   for r in got]
        else:
            r = fn_np(word(xs, w, form))
            vals = values_of(r, len(xs))
            got = vals if isinstance(r, NpBool) else [(v, r.w) for v in vals]
        assert got == want, (w, form)


@pytest.mark.parametrize("w", SMALL + WIDE)
def test_neg_bvnot(w):
    check_unary(N.neg, INT.neg, w)
    check_unary(N.bvnot, INT.bvnot, w)


@pytest.mark.parametrize("w", SMALL + WIDE)
def test_extract_every_range(w):
    ranges = [(hi, lo) for hi in range(w) for lo in range(hi + 1)]
    if len(ranges) > 60:
        rng = np.random.default_rng(w)
        ranges = ([ranges[i] for i in rng.choice(len(ranges), 60, replace=False)]
                  + [(w - 1, 0), (w - 1, w - 1)])
    for hi, lo in ranges:
        check_unary(lambda x, hi=hi, lo=lo: N.extract(x, hi, lo),
                    lambda x, hi=hi, lo=lo: INT.extract(x, hi, lo), w)


@pytest.mark.parametrize("w", SMALL + WIDE)
def test_zext_sext(w):
    for n in sorted({0, 1, 3, 8, 64 - w} - {-1}):
        if w + n > 64:
            continue
        check_unary(lambda x, n=n: N.zext(x, n), lambda x, n=n: INT.zext(x, n), w)
        check_unary(lambda x, n=n: N.sext(x, n), lambda x, n=n: INT.sext(x, n), w)


@pytest.mark.parametrize("wx,wy", [(1, 1), (3, 2), (5, 5), (8, 8), (7, 9), (16, 16), (20, 12),
                                   (31, 1), (32, 32), (1, 63), (40, 24)])
def test_concat(wx, wy):
    xs, _ = random_operands(wx, 60, seed=wx)
    ys, _ = random_operands(wy, 60, seed=wy + 7)
    k = min(len(xs), len(ys))
    xs, ys = xs[:k], ys[:k]
    want = [INT.concat(INT.const(int(x), wx), INT.const(int(y), wy)).v for x, y in zip(xs, ys)]
    for fx, fy in itertools.product(FORMS, repeat=2):
        if "const" in (fx, fy):
            got = []
            for i in range(k):
                a = word(xs[i:i + 1], wx, fx)
                b = word(ys[i:i + 1], wy, fy)
                got.append(values_of(N.concat(a[0] if fx == "const" else a,
                                              b[0] if fy == "const" else b), 1)[0])
        else:
            got = values_of(N.concat(word(xs, wx, fx), word(ys, wy, fy)), k)
        assert got == want, (wx, wy, fx, fy)


# ---------------------------------------------------------------------------
# ite, Bools, broadcasting
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("w", [1, 4, 8, 12, 16, 27, 32, 33, 64])
def test_ite_words(w):
    xs, ys = random_operands(w, 100, seed=3 * w)
    cs = np.arange(len(xs)) % 3 == 0
    want = [int(x) if c else int(y) for c, x, y in zip(cs, xs, ys)]
    for fx, fy in [("clean", "clean"), ("dirty", "clean"), ("clean", "dirty"), ("dirty", "dirty")]:
        got = values_of(N.ite(NpBool(cs), word(xs, w, fx), word(ys, w, fy)), len(xs))
        assert got == want, (w, fx, fy)
    # constant branches, constant and uniform conditions
    got = values_of(N.ite(NpBool(cs), NpWord(5 % (1 << w), w), NpWord(3 % (1 << w), w)), len(xs))
    assert got == [(5 if c else 3) % (1 << w) for c in cs]
    x = word(xs, w, "clean")
    assert N.ite(N.bool_const(True), x, NpWord(0, w)) is x
    assert N.ite(N.eq(x, x), x, NpWord(0, w)) is x            # a uniform Bool folds


@pytest.mark.parametrize("w", [1, 3, 5, 8, 12, 16, 27, 32, 33, 64])
def test_neg_if_is_ite_of_neg(w):
    """The fused neg_if(c, x) against ite(c, neg(x), x) of interp_int."""
    xs = unary_cases(w)
    cs = np.arange(len(xs)) % 3 != 1
    want = [INT.ite(INT.bool_const(bool(c)), INT.neg(INT.const(int(x), w)), INT.const(int(x), w)).v
            for c, x in zip(cs, xs)]
    for form in ("clean", "dirty"):
        assert values_of(N.neg_if(NpBool(cs), word(xs, w, form)), len(xs)) == want, (w, form)
    for i in range(0, len(xs), max(1, len(xs) // 8)):
        x = NpWord(int(xs[i]), w)
        for c in (True, False):
            assert values_of(N.neg_if(NpBool(c), x), 1) == [(-int(xs[i]) if c else int(xs[i])) % (1 << w)]
        cc = np.array([True, False, True])
        assert values_of(N.neg_if(NpBool(cc), x), 3) == \
            [(-int(xs[i]) if c else int(xs[i])) % (1 << w) for c in cc]
    # broadcasting: a condition per row, a value per column
    k = min(4, len(xs))
    col = N.array(xs[:k].reshape(1, k), w)
    got = N.value(N.neg_if(NpBool(np.array([[True], [False]])), col), (2, k))
    assert [int(v) for v in got[0]] == [(-int(x)) % (1 << w) for x in xs[:k]]
    assert [int(v) for v in got[1]] == [int(x) for x in xs[:k]]


def test_ite_bools_and_connectives_exhaustive():
    """Every combination of three Bools, each a constant or an array."""
    grid = np.array(list(itertools.product([False, True], repeat=3)))
    c, x, y = grid.T
    forms = {"arr": lambda v: NpBool(v.copy()), "const": None}
    for fc, fx, fy in itertools.product(forms, repeat=3):
        for i in range(len(grid)):
            sel = slice(None) if "const" not in (fc, fx, fy) else slice(i, i + 1)
            def mk(v, f, sel=sel):
                return NpBool(bool(v[sel][0])) if f == "const" else NpBool(v[sel].copy())
            cb, xb, yb = mk(c, fc), mk(x, fx), mk(y, fy)
            n = len(c[sel])
            checks = {
                "ite": (N.ite(cb, xb, yb), np.where(c[sel], x[sel], y[sel])),
                "and": (N.and_(cb, xb, yb), c[sel] & x[sel] & y[sel]),
                "or": (N.or_(cb, xb, yb), c[sel] | x[sel] | y[sel]),
                "not": (N.not_(cb), ~c[sel]),
                "xor": (N.xor_(cb, xb), c[sel] ^ x[sel]),
            }
            for name, (got, want) in checks.items():
                assert values_of(got, n) == [int(v) for v in want], (name, fc, fx, fy, i)
            if "const" not in (fc, fx, fy):
                break
    assert values_of(N.and_(), 1) == [1] and values_of(N.or_(), 1) == [0]


def test_broadcasting_rows_and_columns():
    w = 12
    rows = N.array(np.arange(7, dtype=np.uint64)[:, None] * 300, w)
    cols = N.array(np.arange(5, dtype=np.uint64)[None, :] * 811, w)
    for op in BINARY + sorted(FUSED):
        r = getattr(N, op)(rows, cols)
        got = np.asarray(N.value(r, (7, 5)) if isinstance(r, NpWord) else np.broadcast_to(r.b, (7, 5)))
        for i, j in itertools.product(range(7), range(5)):
            assert int(got[i, j]) == int_result(op, i * 300 % 4096, j * 811 % 4096, w), (op, i, j)


def test_data_branches_refuse_bool():
    x = N.array(np.arange(4, dtype=np.uint64), 3)
    with pytest.raises(DataBranchError):
        bool(x)
    with pytest.raises(DataBranchError):
        bool(N.ult(x, N.const(2, 3)))
    with pytest.raises(DataBranchError):
        bool(N.const(1, 3))


def test_width_mismatch_is_an_error():
    with pytest.raises(ValueError):
        N.add(N.const(1, 3), N.const(1, 4))
    with pytest.raises(ValueError):
        N.ite(N.bool_const(True), N.const(1, 3), N.const(1, 4))


def test_words_wider_than_64_bits_are_refused():
    x = N.array(np.arange(4, dtype=np.uint64), 40)
    for make in (lambda: N.const(0, 65), lambda: N.concat(x, x), lambda: N.zext(x, 25),
                 lambda: N.sext(x, 30), lambda: N.array(np.zeros(2, np.uint64), 100)):
        with pytest.raises(WidthError) as e:
            make()
        assert isinstance(e.value, UserError)
        assert "test-model" in str(e.value) and "64 bits" in str(e.value)
    assert N.concat(N.array(np.arange(4, dtype=np.uint64), 32), N.const(0, 32)).w == 64


@pytest.mark.parametrize("w", list(range(1, 65)))
def test_count_leading_zeros_is_the_ints(w):
    """bv.clz's native count (the bit length through float64's exponent, a
    64-bit value by its halves) against the Python ints' at every width, in
    the three forms, around 2**53 (where float64 stops being exact) too."""
    import random
    rng = random.Random(w)
    xs = {0, 1, _ones(w), 1 << (w - 1)} | {rng.getrandbits(rng.randint(1, w)) for _ in range(40)}
    xs |= {((1 << j) - 1) & _ones(w) for j in range(1, w + 1)} | {(1 << j) & _ones(w) for j in range(w)}
    vals = np.array(sorted(xs), dtype=np.uint64)
    want = [INT.count_leading_zeros(INT.const(int(x), w)) for x in vals]
    assert {r.w for r in want} == {max(1, w.bit_length())}
    for form in FORMS:
        if form == "const":
            got = [values_of(N.count_leading_zeros(x), 1)[0] for x in word(vals, w, form)]
        else:
            r = N.count_leading_zeros(word(vals, w, form))
            assert r.w == want[0].w
            got = values_of(r, len(vals))
        assert got == [r.v for r in want], (w, form)


def _ones(w: int) -> int:
    return (1 << w) - 1
