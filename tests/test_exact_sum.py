"""The exact block sum (align_rounding = "exact", tcsmt/datapath/exact.py)
rounds as the exact value does, although its register is a few dozen bits.

Three checks, each independent of the code under test:
  * the Fraction reference (tests/reference.py) summing in a format wide
    enough that no partial sum is ever rounded, then rounding once, on
    generated inputs built to be hard: products that cancel at several
    levels, sums on a rounding midpoint with tiny terms of either sign
    below it, results in the subnormal range, every rounding mode;
  * the NumPy interpretation against the Python-int one on the same rows;
  * a proof by SMT solvers, for small formats whose exact sums span
    more bits than the register holds, that the rounded result equals the
    rounding of a register wide enough for every exact sum (written here,
    in a few lines, without sorting or splitting), as lemmas of an
    induction over the terms (tcsmt/search/exact_register.py).
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import reference as R
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcsmt.datapath.exact import register_bits
from tcsmt.model.choose import choose
from tcsmt.model.formats import Format, get_format
from tcsmt.search import exact_register as proof
from tcsmt.search.wide_sum import wide_sum
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot_bits
from tcsmt.smt import service

WIDE = Format("exact", 15, 700)       # holds every partial sum here exactly
MODES = ("rne", "rz", "ru", "rd")


def exact_model(fin: str, block: int, mode: str = "rne", fout: str = "float32", fc: str = "float32"):
    return choose("ampere-fp16-fp32").replace(
        name=f"exact-{fin}-{fout}-{mode}", in_format=fin, c_format=fc, out_format=fout,
        block_size=block, align_rounding="exact", final_rounding=mode, carry_bits=None,
        min_exponent=None, overflow="ieee", zero_sign="ieee", product_overflow="keep")


def reference(p, a, b, c) -> int:
    return R.dot(a, b, c, in_fmt=p.fin, c_fmt=p.fc, acc_fmt=WIDE, out_fmt=p.fout,
                 mode=p.final_rounding, block_size=p.block_size)


def check(p, a, b, c):
    got, want = dot_bits(p, a, b, c), reference(p, a, b, c)
    assert got == want, (f"{p.name}: a={[p.fin.hex(x) for x in a]} b={[p.fin.hex(x) for x in b]} "
                         f"c={p.fc.hex(c)}: model {p.fout.hex(got)}, exact {p.fout.hex(want)}")


def bits_of(fmt: Format, v: Fraction) -> int:
    bits = fmt.round_value(v, "rne")
    assert fmt.value(bits) == v, (fmt.name, v)
    return bits


def hard_row(rng: random.Random, fin: Format, k: int):
    """Products and c that cancel at several levels around a rounding
    midpoint of c, with tiny terms of either sign below it."""
    f32 = get_format("float32")
    e = rng.randint(-20, 20)
    c_val = Fraction(rng.getrandbits(24) | (1 << 23), 1 << 23) * Fraction(2) ** e * rng.choice((1, -1))
    pairs = []
    top = e + rng.randint(-2, 8)
    for _ in range(k // 2):
        x = Fraction(rng.getrandbits(fin.frac_bits + 1) | (1 << fin.frac_bits), 1 << fin.frac_bits)
        lo = max(fin.emin, top // 2 - 6)
        hi = min(fin.emax, max(lo, top // 2 + 6))
        xe = rng.randint(lo, hi)
        ye = max(fin.emin, min(fin.emax, top - xe - rng.randint(0, 3)))
        pairs.append((x * Fraction(2) ** xe, Fraction(2) ** ye))
        top -= rng.randint(10, 40)                   # the next level far below
    a, b = [], []
    for x, y in pairs:
        if rng.random() < 0.6:                       # an exact cancellation
            a += [bits_of(fin, x), bits_of(fin, x)]
            b += [bits_of(fin, y), bits_of(fin, -y)]
        else:                                        # two terms of either sign
            a += [bits_of(fin, x), bits_of(fin, y)]
            b += [bits_of(fin, y * rng.choice((1, -1))), bits_of(fin, x * rng.choice((1, -1)))]
    a, b = a[:k], b[:k]
    while len(a) < k:
        a.append(0)
        b.append(0)
    if rng.random() < 0.5:                           # c on a midpoint of its own grid
        c_val += Fraction(2) ** (e - 24) * rng.choice((1, -1))
        c_val = f32.value(f32.round_value(c_val, "rz"))
    return a, b, bits_of(f32, c_val)


@pytest.mark.parametrize("fin,block", [("float16", 4), ("bfloat16", 2), ("float16", 8)])
@pytest.mark.parametrize("mode", MODES)
def test_hard_rows_round_as_the_exact_sum(fin, block, mode):
    p = exact_model(fin, block, mode)
    rng = random.Random(f"{fin}{block}{mode}")
    rows = [hard_row(rng, p.fin, 2 * block) for _ in range(150)]
    for a, b, c in rows:
        check(p, a, b, c)
    a, b, c = (np.array(x, dtype=np.uint64) for x in zip(*rows))
    want = [dot_bits(p, [int(x) for x in ra], [int(y) for y in rb], int(rc))
            for ra, rb, rc in zip(a, b, c)]
    assert dot_batch(p, a, b, c).tolist() == want


def words(fmt: Format):
    """Any encoding, often a value near 1 at a random exponent."""
    def build(s, e, f):
        return (s << (fmt.bits - 1)) | (e << fmt.frac_bits) | f
    near = st.builds(build, st.integers(0, 1), st.integers(1, (1 << fmt.exp_bits) - 2),
                     st.integers(0, (1 << fmt.frac_bits) - 1))
    return st.one_of(st.integers(0, (1 << fmt.bits) - 1), near, st.just(0))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_rows_round_as_the_exact_sum(data):
    fin = data.draw(st.sampled_from(["float16", "bfloat16"]))
    mode = data.draw(st.sampled_from(MODES))
    fout = data.draw(st.sampled_from(["float32", "float16"]))
    block = data.draw(st.sampled_from([2, 4]))
    p = exact_model(fin, block, mode, fout)
    k = data.draw(st.integers(1, 2 * block))
    a = data.draw(st.lists(words(p.fin), min_size=k, max_size=k))
    b = data.draw(st.lists(words(p.fin), min_size=k, max_size=k))
    c = data.draw(words(p.fc))
    check(p, a, b, c)


# ---------------------------------------------------------------------------
# Every pair of fp4 products with c in a wide-ranged fp8: the register
# splits (c reaches 2^15, a product 2^-2), and D's sign decides ties
# ---------------------------------------------------------------------------

def round_table(fmt: Format, mode: str, total: np.ndarray, unit: int, zero_neg: np.ndarray):
    """The encodings of the exact values total * 2^unit rounded into fmt with
    mode (IEEE overflow and signed zeros; zero_neg: an exact zero is -0),
    by search in the sorted table of fmt's finite values."""
    enc = [b for b in range(1 << fmt.bits) if fmt.classify(b) not in ("nan", "inf")]
    vals = np.array([int(fmt.value(b) * Fraction(2) ** -unit) for b in enc], dtype=np.int64)
    order = np.argsort(vals, kind="stable")
    vals, enc = vals[order], np.array(enc, dtype=np.int64)[order]
    keep = np.concatenate([[True], vals[1:] != vals[:-1]])      # zero once, as +0
    vals, enc = vals[keep], enc[keep]
    j = np.searchsorted(vals, total)
    i = np.clip(j, 1, len(vals) - 1)
    lo, hi = vals[i - 1], vals[i]
    if mode == "rne":
        up = (hi - total < total - lo) | ((hi - total == total - lo) & (enc[i] & 1 == 0))
    else:
        up = {"ru": total > lo, "rd": total >= hi, "rz": total < 0}[mode]
    out = np.where(up, enc[i], enc[i - 1])
    out = np.where(vals[np.clip(j, 0, len(vals) - 1)] == total, enc[np.clip(j, 0, len(vals) - 1)], out)
    neg = 1 << (fmt.bits - 1)
    out = np.where((out == 0) & (total < 0), neg, out)          # a value that rounds to zero keeps its sign
    top, half = int(vals[-1]), int(vals[-1] - vals[-2]) // 2
    for negative, mag in ((False, total), (True, -total)):
        tie_up = (mag == top + half) & (fmt.max_finite_bits(0) & 1 == 1)
        away = {"rne": (mag > top + half) | tie_up, "rz": np.zeros_like(mag, bool),
                "ru": mag > top if not negative else np.zeros_like(mag, bool),
                "rd": mag > top if negative else np.zeros_like(mag, bool)}[mode]
        code = neg if negative else 0
        out = np.where((mag > top) & away, fmt.inf_bits(0) | code,
                       np.where(mag > top, fmt.max_finite_bits(0) | code, out))
    return np.where(total == 0, np.where(zero_neg, neg, 0), out)


@pytest.mark.parametrize("mode", MODES)
def test_every_pair_of_fp4_products_rounds_as_the_exact_sum(mode):
    p = exact_model("float4_e2m1fn", 2, mode, "float8_e5m2", "float8_e5m2")
    fin, fc = p.fin, p.fc
    codes = np.arange(16, dtype=np.uint64)
    a0, b0, a1, b1 = (g.reshape(-1) for g in np.meshgrid(codes, codes, codes, codes, indexing="ij"))
    cs = [fc.round_value(Fraction(v)) for v in (0, 1, -1, 3, -40960, 57344, 2 ** -16, -2 ** -14,
                                                 Fraction(7, 4), -Fraction(9, 8), 6144, -3 * 2 ** -9)]
    cs += [fc.pack(1, 0, 0)]
    rows = len(a0)
    a = np.stack([np.tile(a0, len(cs)), np.tile(a1, len(cs))], axis=1)
    b = np.stack([np.tile(b0, len(cs)), np.tile(b1, len(cs))], axis=1)
    c = np.repeat(np.array(cs, dtype=np.uint64), rows)
    got = dot_batch(p, a, b, c)
    unit = -16                                   # every value here is a multiple of 2^-16
    val = np.array([int(fin.value(int(x)) * 4) for x in codes], dtype=np.int64)   # units 2^-2
    cval = np.array([int(fc.value(int(x)) * 2 ** 16) for x in c[::rows]], dtype=np.int64)
    total = (val[a[:, 0]] * val[b[:, 0]] + val[a[:, 1]] * val[b[:, 1]]) * 2 ** 12 + np.repeat(cval, rows)
    sgn = lambda x: (x.astype(np.int64) >> (fin.bits - 1)) & 1          # noqa: E731
    neg_zero_prod = lambda i: (val[a[:, i]] * val[b[:, i]] == 0) & (sgn(a[:, i]) != sgn(b[:, i]))  # noqa: E731
    c_neg_zero = np.repeat(np.array([fc.is_negative_zero(int(x)) for x in cs]), rows)
    all_neg = neg_zero_prod(0) & neg_zero_prod(1) & c_neg_zero
    pos_zero_prod = lambda i: (val[a[:, i]] * val[b[:, i]] == 0) & (sgn(a[:, i]) == sgn(b[:, i]))  # noqa: E731
    c_pos_zero = np.repeat(np.array([fc.value(int(x)) == 0 and not fc.is_negative_zero(int(x))
                                     for x in cs]), rows)
    all_pos = pos_zero_prod(0) & pos_zero_prod(1) & c_pos_zero
    zero_neg = all_neg if mode != "rd" else ~all_pos
    want = round_table(p.fout, mode, total, unit, zero_neg)
    bad = np.nonzero(got.astype(np.int64) != want)[0]
    assert bad.size == 0, (f"{len(bad)} of {len(got)} differ; first: a {a[bad[0]]}, b {b[bad[0]]}, "
                           f"c {c[bad[0]]:#x}: model {got[bad[0]]:#x}, exact {want[bad[0]]:#x}")


def test_register_width():
    """Four fp16 products and an fp32 c: 56 bits (the exact sum spans 280)."""
    assert register_bits(23, 23, 5) == 56


# ---------------------------------------------------------------------------
# A proof for small formats
# ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("fin,fc,fout,k,modes", [
    ("float4_e2m1fn", "float8_e5m2", "float8_e5m2", 3, ("rne", "rd")),
    ("float6_e3m2fn", "float8_e5m2", "float8_e4m3fn", 2, ("rne",)),
])
def test_solver_proves_the_register_exact(fin, fc, fout, k, modes):
    """For every a, b, c and each mode: the model's d equals round_fixed of
    the wide sum (wide_sum, units of 2^low, a register wide enough for
    every exact sum). One formula for that is answered by no solver in ten
    minutes; the same statement is proved as the lemmas of
    tcsmt/search/exact_register.py (an induction over the terms the register
    takes; its docstring says how they cover the statement), each unsat by
    Boolector and again by Bitwuzla. The lemmas that do not read the mode
    are the same formulas for every mode and are proved once."""
    models = [exact_model(fin, k, mode, fout, fc) for mode in modes]
    s = proof.spec(models[0], k)
    formulas = proof.shared(s)
    for m in models:
        formulas += proof.rounding(proof.spec(m, k),
                                   lambda I, terms: wide_sum(I, terms, s.low, s.width, s.ew))
    assert len(formulas) == 19 + 3 * len(modes)
    for f in formulas:
        for solver in ("boolector", "bitwuzla"):
            answer = service.solve(f, solver, 600)
            assert answer.status == "unsat", (f.description, solver, answer.status, answer.reason)
