"""The sf-tensor/tcgen05 reading of B200's block-scaled arithmetic (models
*-sftensor, the datapath's raw-exponent window) against an independent
Fraction reference written from tcgen05_model/MODEL.md
(tests/sftensor_reference.py): random rows over the whole range, and rows
aimed at each rule of the reading (c dominant, the c-relative group window,
the 2^-174 group floor, NVFP4's groups of 4), which the tests check they
reach; the scalar and batch interpretations agree with each other."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
import sftensor_reference as ref

from tcsmt.errors import UserError
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.observed.random_rows import random_rows
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot_bits

WINDOW = {"blackwell-mxf4-sftensor": ref.MXF4, "blackwell-mxf4nvf4-b32-sftensor": ref.MXF4,
          "blackwell-mxf4nvf4-b16-sftensor": ref.MXF4, "blackwell-nvfp4-sftensor": ref.NVFP4}
SFTENSOR = sorted(m.name for m in all_models() if m.name.endswith("-sftensor"))


def reading(name: str) -> ref.Reading:
    return WINDOW.get(name, ref.MXF8F6F4)


def check_rows(p, rd, a, b, c, sa, sb) -> list[int]:
    """Every row: the model's scalar and batch outputs equal the reference's."""
    got = dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb)
    outs = []
    for i in range(len(c)):
        row = ([int(x) for x in a[i]], [int(x) for x in b[i]], int(c[i]),
               [int(x) for x in sa[i]], [int(x) for x in sb[i]])
        want = ref.dot(rd, p.fin, p.fb, p.fscale, p.scale_block, *row)
        assert dot_bits(p, *row) == want, (p.name, [hex(x) for x in row[0] + row[1]], row[2:])
        assert int(got[i]) == want, (p.name, "batch", i)
        outs.append(want)
    return outs


def test_every_reading_of_block_scaled_kinds_has_its_model():
    assert len(SFTENSOR) == 29
    for name in SFTENSOR:
        p = choose(name)
        assert not p.default and p.scale_format is not None
        assert "sf-tensor/tcgen05" in open(p.source_file).read()


@pytest.mark.parametrize("name", SFTENSOR)
def test_random_rows_equal_the_reference(name):
    p = choose(name)
    n = 60 if name in WINDOW else 24
    rows = random_rows(p, p.block_size, n, seed=3)
    mask = (1 << p.fscale.bits) - 1
    check_rows(p, reading(name), rows.a, rows.b, rows.c, rows.sa & mask, rows.sb & mask)


def aimed_rows(p, n: int, seed: int):
    """e2m1 rows whose c lies a few exponents around the largest product, or
    whose scales are tiny (results near the subnormals), with zeros and
    cancelling signs; scales of a block differ by a few exponents."""
    rng = random.Random(seed)
    k, ns, fs = p.block_size, p.scale_count(p.block_size), p.fscale
    finite = [x for x in range(1 << fs.bits) if fs.classify(x) not in ("nan", "inf")]
    a = np.zeros((n, k), dtype=np.uint64)
    b = np.zeros((n, k), dtype=np.uint64)
    c = np.zeros(n, dtype=np.uint64)
    sa = np.zeros((n, ns), dtype=np.uint64)
    sb = np.zeros((n, ns), dtype=np.uint64)
    for i in range(n):
        tiny = i % 2
        centre = rng.choice(finite[:12] if tiny else finite[len(finite) // 2 - 4:len(finite) // 2 + 4])
        for j in range(ns):
            sa[i, j] = min(max(finite[0], centre + rng.randint(-6, 6)), finite[-1])
            sb[i, j] = rng.choice(finite[:3] if tiny else finite[len(finite) // 2 - 2:len(finite) // 2 + 2])
        for m in range(k):
            if rng.random() < 0.6:
                a[i, m], b[i, m] = rng.randrange(16), rng.randrange(16)
        j = [m // p.scale_block for m in range(k)]
        top = max((ref.raw(p.fin, int(x)) + ref.raw(p.fb, int(y)) + ref.raw(fs, int(sa[i, j[m]]))
                   + ref.raw(fs, int(sb[i, j[m]])) for m, (x, y) in enumerate(zip(a[i], b[i]))
                   if x & 7 and y & 7), default=0)
        e = min(max(top + rng.randint(-6, 2), -149), 127)
        c[i] = ref.F32.round_value(rng.choice((1, -1)) * ref.Fraction(rng.randint(1, 2**24 - 1), 2**23)
                                   * ref.Fraction(2) ** e, "rz") if rng.random() < 0.85 else 0x80000000
    return a, b, c, sa, sb


def floor_rows(p, n: int, seed: int):
    """ue8m0 rows for the group floor: the first scale block near 2^-150
    (results near the subnormals, q below -174), the others 20 to 40
    exponents lower, so some groups lie below 2^-174; c zero or tiny."""
    rng = random.Random(seed)
    k, ns = p.block_size, p.scale_count(p.block_size)
    small = (0, 0, 1, 2, 9, 10, 3, 11)
    a = np.array([[rng.choice(small) for _ in range(k)] for _ in range(n)], dtype=np.uint64)
    b = np.array([[rng.randrange(16) for _ in range(k)] for _ in range(n)], dtype=np.uint64)
    c = np.array([rng.choice((0, 0x80000000, rng.randrange(1, 64), 0x80000000 | rng.randrange(1, 64)))
                  for _ in range(n)], dtype=np.uint64)
    top = [rng.randint(-152, -140) for _ in range(n)]
    pair = [[t if j == 0 else t - rng.randint(20, 40) for j in range(ns)] for t in top]
    sa = np.array([[127 + x // 2 for x in row] for row in pair], dtype=np.uint64)
    sb = np.array([[127 + x - x // 2 for x in row] for row in pair], dtype=np.uint64)
    return a, b, c, sa, sb


def c_window_rows(p, n: int, seed: int):
    """ue8m0 rows for the c-relative group window: the first group holds a
    6 x 6 product (R = S + 4), c lies between S and R with few significant
    bits, and a later scale block, 34 to 45 exponents lower, holds small
    negative products (below c, so truncated 35 bits below c)."""
    rng = random.Random(seed)
    k, ns = p.block_size, p.scale_count(p.block_size)
    a = np.zeros((n, k), dtype=np.uint64)
    b = np.zeros((n, k), dtype=np.uint64)
    c = np.zeros(n, dtype=np.uint64)
    sa = np.zeros((n, ns), dtype=np.uint64)
    sb = np.zeros((n, ns), dtype=np.uint64)
    for i in range(n):
        S = rng.randint(-10, 10)
        pair = [S] + [S - rng.randint(34, 45) for _ in range(ns - 1)]
        sa[i] = [127 + x // 2 for x in pair]
        sb[i] = [127 + x - x // 2 for x in pair]
        a[i, 0], b[i, 0] = 0x7, 0x7
        for m in range(1, 4):
            a[i, m], b[i, m] = rng.randrange(8), rng.randrange(8)
        for m in range(p.scale_block, k):
            if rng.random() < 0.3:
                a[i, m], b[i, m] = 0x9, rng.randrange(1, 8)       # -0.5 x positive
        v = ref.Fraction(rng.choice((1, 3, 5, 7)), 4) * ref.Fraction(2) ** (S + rng.randint(1, 3))
        c[i] = ref.F32.round_value(v, "rz")
    return a, b, c, sa, sb


def nvfp4_group_rows(p, n: int, seed: int):
    """ue4m3 rows for NVFP4's groups: products worth half a unit of the
    window's quantum each, one or two per group of 4, under a negative sum
    that is exact in float32, so a group of 4 truncates them to zero and a
    group of 16 keeps a unit (and the rounding toward zero moves the sum).
    Even rows: the product path (a -1 x 2^16 product sets q = -19; a later
    block with the scales 2^-9 x 2^-9 holds products of 0.25 and 0.5).
    Odd rows: c = -(1 + m/8) 2^21 dominates (q = 21 - 35 = -14; a block
    with the scales 2^-6 x 2^-7 holds the products)."""
    rng = random.Random(seed)
    k, ns = p.block_size, p.scale_count(p.block_size)
    a = np.zeros((n, k), dtype=np.uint64)
    b = np.zeros((n, k), dtype=np.uint64)
    c = np.zeros(n, dtype=np.uint64)
    one = 0x38
    sa = np.full((n, ns), one, dtype=np.uint64)
    sb = np.full((n, ns), one, dtype=np.uint64)
    for i in range(n):
        j = rng.randrange(1, ns)
        if i % 2 == 0:
            sa[i, 0] = sb[i, 0] = 0x7e
            a[i, 0], b[i, 0] = 0xa, 0x2                    # -1 x 1, times 2^16 (1.75^2)
            sa[i, j], sb[i, j] = 0x1, 0x1                  # 2^-9 x 2^-9
        else:
            c[i] = ref.F32.round_value(-(1 + ref.Fraction(rng.randrange(8), 8)) * 2**21, "rz")
            sa[i, j], sb[i, j] = 0x08, 0x04                # 2^-6 x 2^-7
        for g in rng.sample(range(4), rng.randint(2, 4)):
            m = j * p.scale_block + 4 * g + rng.randrange(4)
            a[i, m], b[i, m] = 0x1, rng.choice((0x1, 0x1, 0x2, 0x9))   # 0.5 x (0.5, 1, -0.5)
    return a, b, c, sa, sb


def differs(rows, p, r1: ref.Reading, r2: ref.Reading) -> int:
    """Rows on which the reference under r1 and under r2 give other bits."""
    a, b, c, sa, sb = rows
    n = 0
    for i in range(len(c)):
        row = ([int(v) for v in a[i]], [int(v) for v in b[i]], int(c[i]),
               [int(v) for v in sa[i]], [int(v) for v in sb[i]])
        n += ref.dot(r1, p.fin, p.fb, p.fscale, p.scale_block, *row) != \
            ref.dot(r2, p.fin, p.fb, p.fscale, p.scale_block, *row)
    return n


@pytest.mark.parametrize("name,rules", [
    ("blackwell-mxf4-sftensor", [{"floor": None}, {"c_group_window": False}]),
    ("blackwell-mxf4nvf4-b16-sftensor", [{"c_group_window": False}]),
    ("blackwell-nvfp4-sftensor", [{"group": 16}, {"c_group": 4}]),
])
def test_rows_aimed_at_each_rule_equal_the_reference(name, rules):
    """The rows reach every rule (the reference without it gives other bits
    on some of them) and the model follows the reference on all of them."""
    p = choose(name)
    rows = aimed_rows(p, 80, seed=5)
    more = (floor_rows(p, 80, seed=6), c_window_rows(p, 80, seed=7)) if p.group_floor is not None \
        else (nvfp4_group_rows(p, 80, seed=8),) if p.scale_format == "ue4m3" else ()
    rows = tuple(np.concatenate(xs) for xs in zip(rows, *more))
    check_rows(p, WINDOW[name], *rows)
    for change in rules:
        assert differs(rows, p, WINDOW[name], replace(WINDOW[name], **change)) > 0, change


def test_c_alone_keeps_its_sign_and_nan_scales_give_the_canonical_nan():
    """MODEL.md: with no non-zero product d is C's word (-0 stays -0, where
    MMA-Sim's reading adds +0); a NaN scale gives 0x7fffffff."""
    for name in ("blackwell-mxf4-sftensor", "blackwell-nvfp4-sftensor", "blackwell-mxf8f6f4-e4m3-sftensor"):
        p = choose(name)
        k, ns = p.block_size, p.scale_count(p.block_size)
        one = p.fscale.bias << p.fscale.frac_bits
        assert dot_bits(p, [0] * k, [3] * k, 0x80000000, [one] * ns, [one] * ns) == 0x80000000
        nan = next(x for x in range(1 << p.fscale.bits) if p.fscale.classify(x) == "nan")
        assert dot_bits(p, [2] * k, [2] * k, 0, [nan] + [one] * (ns - 1), [one] * ns) == 0x7FFFFFFF
    mma = choose("blackwell-mxf4")
    assert dot_bits(mma, [0] * 64, [3] * 64, 0x80000000, [0x7F] * 2, [0x7F] * 2) == 0


@pytest.mark.parametrize("sets,word", [
    (["c_window_bits=35"], "without scale_window_bits"),
    (["scale_window_bits=35"], "c_window_bits"),
    (["scale_window_bits=35", "c_window_bits=35", "c_group_size=5"], "c_group_size"),
    (["scale_window_bits=35", "c_window_bits=35", "carry_bits=3"], "unbounded"),
])
def test_window_parameters_are_checked(sets, word):
    with pytest.raises(UserError, match=word):
        choose("blackwell-mxf4", overrides=sets)
