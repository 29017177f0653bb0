"""Integer matrix instructions (s8, u8, s4, u4 inputs; s32 c and d): the
formats against NumPy and ml_dtypes, the datapath (tcsmt.datapath.integer)
against an exact reference written here with Python ints, on hand-made edge
cases and generated ones, under wrap and both saturation readings, and every
interpretation of the datapath against the Python-int one: NumPy (batch
rows and matrix products), the SMT formula evaluated by a solver, the
compiled CPU kernel.

The reference does not look at the datapath: values are Python ints, a
block is c plus its products, "wrap" keeps the sum modulo 2^32, "final"
clamps the exact block sum once, "every_add" clamps after every addition.
"""

from __future__ import annotations

import random

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcsmt import datapath, matmul
from tcsmt.errors import ModelFileError
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import dot_bits, explain
from tcsmt.sim.npio import from_bits, to_bits
from tcsmt.smt import service
from tcsmt.smt.smtlib import evaluation_formula

LO, HI = -(1 << 31), (1 << 31) - 1
INPUTS = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15)}
DTYPES = {"int8": np.int8, "uint8": np.uint8, "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4,
          "int32": np.int32}
READINGS = [("wrap", "final"), ("saturate", "final"), ("saturate", "every_add")]


# ---------------------------------------------------------------------------
# The exact reference
# ---------------------------------------------------------------------------

def clamp(v: int) -> int:
    return min(max(v, LO), HI)


def wrap(v: int) -> int:
    return (v - LO) % (1 << 32) + LO


def reference(a: list[int], b: list[int], c: int, block: int, overflow: str, saturation: str) -> int:
    """d for integer values a, b and c (Python ints), block after block."""
    acc = c
    for i in range(0, len(a), block):
        prods = [x * y for x, y in zip(a[i:i + block], b[i:i + block])]
        if overflow == "wrap":
            acc = wrap(acc + sum(prods))
        elif saturation == "final":
            acc = clamp(acc + sum(prods))
        else:
            for t in prods:
                acc = clamp(acc + t)
    return acc


def bits_of(fmt_name: str, v: int) -> int:
    return v & ((1 << get_format(fmt_name).bits) - 1)


def run(p, a: list[int], b: list[int], c: int) -> int:
    """The model's d for integer values, as an integer."""
    d = dot_bits(p, [bits_of(p.fin.name, x) for x in a], [bits_of(p.fb.name, y) for y in b],
                 bits_of("int32", c))
    return p.fout.int_value(d)


def model(name: str, overflow: str = "wrap", saturation: str = "final"):
    return choose(name).replace(overflow=overflow, saturation=saturation)


# ---------------------------------------------------------------------------
# Formats
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(INPUTS))
def test_every_pattern_reads_as_numpy_and_ml_dtypes_read_it(name):
    fmt = get_format(name)
    bits = np.arange(1 << fmt.bits, dtype=np.uint64)
    held = from_bits(bits, fmt)
    assert held.dtype == np.dtype(DTYPES[name])
    assert [fmt.int_value(int(x)) for x in bits] == [int(v) for v in held.astype(np.int64)]
    assert np.array_equal(to_bits(held, fmt, "a"), bits)
    lo, hi = INPUTS[name]
    assert (fmt.lowest, fmt.highest) == (lo, hi)
    assert {fmt.classify(int(x)) for x in bits} == {"zero", "normal"}


def test_int32_and_the_aliases():
    s32 = get_format("s32")
    assert s32.name == "int32" and s32.bits == 32
    assert s32.int_value(0x80000000) == LO and s32.int_value(0x7FFFFFFF) == HI
    assert s32.hex(0x80000000) == "0x80000000" and get_format("u4").hex(0xf) == "0xf"
    assert s32.round_value(-2.5, "rne") == bits_of("int32", -2)
    assert s32.round_value(-2.5, "rz") == bits_of("int32", -2)
    assert s32.round_value(-2.5, "rd") == bits_of("int32", -3)
    assert s32.round_value(2 ** 40) == 0x7FFFFFFF     # past the range: its nearest end
    assert [get_format(n).name for n in ("s8", "u8", "s4", "u4", "i8")] == \
        ["int8", "uint8", "int4", "uint4", "int8"]


# ---------------------------------------------------------------------------
# Edge cases by hand
# ---------------------------------------------------------------------------

EDGES = [
    # (model, a, b, c): s32 overflow upward and downward, mixed signs, s4 and u4 extremes
    ("ampere-s8-s32", [127, 127], [127, 127], HI - 10),
    ("ampere-s8-s32", [-128, -128], [127, 127], LO + 5),
    ("ampere-s8-s32", [-128, -128], [-128, -128], HI),
    ("ampere-s8-s32", [-128], [-128], LO),
    ("ampere-s8-s32", [127, -128], [127, 127], HI),          # +1 then far down: every_add differs
    ("ampere-s8-u8-s32", [-128, 127], [255, 255], LO + 100),
    ("ampere-u8-s8-s32", [255, 255], [-128, -128], LO + 65000),
    ("ampere-u8-s32", [255] * 32, [255] * 32, HI - 2_000_000),
    ("ampere-s4-s32", [-8, 7, -8], [-8, -8, 7], HI - 63),
    ("ampere-s4-u4-s32", [-8, -8], [15, 15], LO + 239),
    ("ampere-u4-s32", [15] * 64, [15] * 64, HI - 14400),
    ("ampere-s8-s32", [0, 0], [0, 0], LO),
]


@pytest.mark.parametrize("overflow,saturation", READINGS)
@pytest.mark.parametrize("case", EDGES, ids=lambda e: f"{e[0]}-{e[3]}")
def test_edge_cases_equal_the_exact_reference(case, overflow, saturation):
    name, a, b, c = case
    p = model(name, overflow, saturation)
    assert run(p, a, b, c) == reference(a, b, c, p.block_size, overflow, saturation)


def test_the_edges_overflow_in_both_directions_and_readings_differ():
    """The edge cases are not vacuous: the exact sums leave the s32 range
    upward and downward, and the three readings disagree on some."""
    exact = [c + sum(x * y for x, y in zip(a, b)) for _, a, b, c in EDGES]
    assert max(exact) > HI and min(exact) < LO
    outs = [{reference(a, b, c, 64, o, s) for o, s in READINGS} for _, a, b, c in EDGES]
    assert max(len(o) for o in outs) == 3


def test_saturation_acts_per_instruction_when_blocks_chain():
    """K = 64 on a K = 32 instruction: the first block saturates, the second
    comes down from the clamped value (one clamp per instruction)."""
    p = model("blackwell-s8-s32", "saturate")
    a, b = [127] * 32 + [-128] * 32, [127] * 64
    c = HI - 1000
    want = reference(a, b, c, 32, "saturate", "final")
    assert want == HI + (-128 * 127 * 32) and run(p, a, b, c) == want
    assert run(model("blackwell-s8-s32"), a, b, c) == wrap(c + sum(x * y for x, y in zip(a, b)))


def test_explain_names_the_products_the_sum_and_the_rule():
    p = model("ampere-s8-s32", "saturate")
    lines = dict(explain(p, [0x80, 0x7f], [0x80, 0x81], 0x7fffffff))
    assert lines["product 0"] == "16384 (exact)" and lines["product 1"] == "-16129 (exact)"
    assert lines["exact sum"] == str(HI + 16384 - 16129)
    assert lines["result"] == "0x7fffffff = 2147483647 (int32, saturated (final))"


# ---------------------------------------------------------------------------
# Generated cases
# ---------------------------------------------------------------------------

def values(fmt_name: str):
    lo, hi = INPUTS[fmt_name]
    return st.integers(lo, hi) | st.sampled_from([lo, hi, 0, -1 if lo else 1])


@st.composite
def cases(draw):
    name = draw(st.sampled_from(["ampere-s8-s32", "ampere-u8-s8-s32", "ampere-s4-u4-s32",
                                 "blackwell-s8-u8-s32"]))
    p = choose(name)
    k = draw(st.integers(1, 2 * p.block_size + 3))
    a = draw(st.lists(values(p.fin.name), min_size=k, max_size=k))
    b = draw(st.lists(values(p.fb.name), min_size=k, max_size=k))
    c = draw(st.integers(LO, HI) | st.sampled_from([LO, HI, LO + 1, HI - 1]) |
             st.integers(HI - 40_000, HI) | st.integers(LO, LO + 40_000))
    return name, a, b, c, draw(st.sampled_from(READINGS))


@settings(max_examples=300, deadline=None)
@given(cases())
def test_generated_cases_equal_the_exact_reference(case):
    name, a, b, c, (overflow, saturation) = case
    p = model(name, overflow, saturation)
    assert run(p, a, b, c) == reference(a, b, c, p.block_size, overflow, saturation)


# ---------------------------------------------------------------------------
# Every interpretation
# ---------------------------------------------------------------------------

def random_rows(p, rows: int, k: int, seed: int):
    """Bit patterns: any inputs, c anywhere and near both ends of the range."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << p.fin.bits, (rows, k)).astype(np.uint64)
    b = rng.integers(0, 1 << p.fb.bits, (rows, k)).astype(np.uint64)
    c = rng.integers(0, 1 << 32, rows)
    ends = rng.random(rows) < 0.5
    n, near = int(ends.sum()), 1 << (p.fin.bits + p.fb.bits - 2)    # about one product
    c[ends] = np.where(rng.random(n) < 0.5, HI - rng.integers(0, near, n),
                       (1 << 31) + rng.integers(0, near, n))
    return a, b, c.astype(np.uint64)


INTERP_MODELS = ["ampere-s8-s32", "ampere-u8-s8-s32", "ampere-s4-u4-s32", "blackwell-u8-s32"]


@pytest.mark.parametrize("overflow,saturation", READINGS)
@pytest.mark.parametrize("name", INTERP_MODELS)
def test_numpy_rows_equal_python_ints(name, overflow, saturation):
    p = model(name, overflow, saturation)
    a, b, c = random_rows(p, 300, p.block_size + 5, 7)
    got = dot_batch(p, a, b, c)
    want = [dot_bits(p, [int(x) for x in a[r]], [int(x) for x in b[r]], int(c[r])) for r in range(300)]
    assert [int(x) for x in got] == want
    sums = [p.fc.int_value(int(c[r])) + sum(p.fin.int_value(int(x)) * p.fb.int_value(int(y))
                                            for x, y in zip(a[r], b[r])) for r in range(300)]
    assert sum(not LO <= x <= HI for x in sums) > 20     # many rows leave the range


@pytest.mark.parametrize("solver", ["bitwuzla", "z3"])
@pytest.mark.parametrize("overflow,saturation", READINGS)
def test_the_solver_evaluates_the_formula_as_python_ints(solver, overflow, saturation):
    if not service.installed(solver):
        pytest.skip(f"{solver} is not installed")
    p = model("ampere-s8-u8-s32", overflow, saturation)
    k = 6
    a, b, c = random_rows(p.replace(block_size=4), 12, k, 3)

    def build(I):
        xs = [I.var(f"a{i}", p.fin.bits) for i in range(k)]
        ys = [I.var(f"b{i}", p.fb.bits) for i in range(k)]
        return datapath.dot(I, p.replace(block_size=4), xs, ys, I.var("c", 32))

    points = [{**{f"a{i}": int(a[r, i]) for i in range(k)}, **{f"b{i}": int(b[r, i]) for i in range(k)},
               "c": int(c[r])} for r in range(12)]
    answer = service.solve(evaluation_formula(build, points), solver, timeout=120)
    assert answer.status == "sat"
    q = p.replace(block_size=4)
    for r in range(12):
        assert answer.values[f"out{r}"] == dot_bits(q, [int(x) for x in a[r]], [int(x) for x in b[r]],
                                                     int(c[r]))


def matrices(p, m: int, k: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    lo, hi = INPUTS[p.fin.name]
    lob, hib = INPUTS[p.fb.name]
    A = rng.integers(lo, hi + 1, (m, k)).astype(DTYPES[p.fin.name])
    B = rng.integers(lob, hib + 1, (k, n)).astype(DTYPES[p.fb.name])
    C = rng.integers(LO, HI + 1, (m, n), dtype=np.int64)
    C[0, :] = HI - rng.integers(0, 1000, n)
    C[1, :] = LO + rng.integers(0, 1000, n)
    return A, B, C.astype(np.int32)


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("overflow,saturation", READINGS)
def test_matrix_products_equal_the_reference(backend, overflow, saturation):
    p = model("ampere-s8-u8-s32", overflow, saturation)
    A, B, C = matrices(p, 5, 70, 6, 11)
    D = matmul(A, B, C, model=p, backend=backend)
    assert D.dtype == np.int32
    want = [[reference([int(x) for x in A[i]], [int(y) for y in B[:, j]], int(C[i, j]), p.block_size,
                       overflow, saturation) for j in range(6)] for i in range(5)]
    assert D.tolist() == want


def test_the_dtypes_choose_the_integer_model():
    A = np.zeros((2, 32), np.int8)
    B = np.zeros((32, 2), np.uint8)
    C = np.full((2, 2), 7, np.int32)
    D = matmul(A, B, C, arch="ampere")
    assert D.dtype == np.int32 and (D == 7).all()


# ---------------------------------------------------------------------------
# Published B200 results
# ---------------------------------------------------------------------------

# sf-tensor/tcgen05, tcgen05_model/validation.py: eight frozen B200 result
# words of tcgen05.mma kind::i8 (K = 32). Each case's inputs come from
# random.Random(seed): 32 bytes of A (randrange(256)), 32 of B, then C as a
# 32-bit word (getrandbits(32), its bits 23..30 cleared to bit 30..23's
# pattern below 0xff: the generator draws a finite float32 pattern).
B200_I8 = [("u8", "u8", False, 500, 0x078A5C64), ("s8", "u8", False, 501, 0xF66E2FA6),
           ("u8", "s8", False, 502, 0xD73F1A46), ("s8", "s8", True, 503, 0x8063D12F),
           ("s8", "s8", False, 504, 0xA4679E93), ("u8", "u8", True, 505, 0x55DB8BB8),
           ("s8", "u8", True, 506, 0xB47F6330), ("u8", "s8", True, 507, 0x8533C14D)]


def sftensor_inputs(seed: int):
    rng = random.Random(seed)
    a = [rng.randrange(256) for _ in range(32)]
    b = [rng.randrange(256) for _ in range(32)]
    c = rng.getrandbits(32)
    if c & 0x7F800000 == 0x7F800000:
        c &= 0x807FFFFF
    return a, b, c


@pytest.mark.parametrize("case", B200_I8, ids=lambda x: f"{x[0]}-{x[1]}-{'sat' if x[2] else 'wrap'}")
def test_blackwell_models_reproduce_the_published_b200_words(case):
    a_type, b_type, sat, seed, word = case
    name = f"blackwell-{a_type}" + (f"-{b_type}" if b_type != a_type else "") + "-s32" + \
        ("-satfinite" if sat else "")
    a, b, c = sftensor_inputs(seed)
    assert dot_bits(choose(name), a, b, c) == word


# ---------------------------------------------------------------------------
# The models and their checks
# ---------------------------------------------------------------------------

def test_every_integer_model_is_exact_and_sourced():
    ints = [m for m in all_models() if m.fout.is_integer and m.sparsity == "dense"]
    assert len(ints) == 64         # 16 per mma.sync architecture, 8 of wgmma, 8 of tcgen05
    assert {m.arch for m in ints} == {"ampere", "ada", "hopper", "blackwell"}
    for m in ints:
        assert m.align_rounding == "exact" and m.overflow in ("wrap", "saturate")
        assert ("satfinite" in m.name) == (m.overflow == "saturate") == ("satfinite" in m.instruction
                                                                          or "saturate" in m.instruction)
        text = open(m.source_file, encoding="utf-8").read()
        assert ("measured by sf-tensor on B200" if m.arch == "blackwell" else
                "from sources, not measured") in m.description, m.name
        assert "# source:" in text


@pytest.mark.parametrize("change,key", [
    ({"in_format": "float16"}, "in_format"),
    ({"overflow": "inf"}, "overflow"),
    ({"align_rounding": "truncate"}, "align_rounding"),
    ({"min_exponent": -10}, "min_exponent"),
    ({"c_format": "int8"}, "c_format"),
])
def test_integer_models_refuse_float_choices(change, key):
    with pytest.raises(ModelFileError, match=f"key '{key}'"):
        choose("ampere-s8-s32").replace(**change)


def test_float_models_refuse_integer_overflow():
    with pytest.raises(ModelFileError, match="key 'overflow'"):
        choose("ampere").replace(overflow="wrap")


def test_a_satfinite_probe_is_checked_against_the_saturating_model(tmp_path):
    """Observations of a .satfinite instruction (simulated, as a device would
    print them): the architecture stands for its saturating model, which
    matches every row, and the wrapping one misses the rows past the range."""
    import json

    from tcsmt.api import check
    from tcsmt.instructions.table import instruction_by_name
    from tcsmt.observed.vectors import random_vectors
    from tcsmt.probes.harness import simulated_observations
    ins = instruction_by_name("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32")
    data = random_vectors(ins.formats(), 32, 60, 4)
    data["instruction"] = ins.name
    vectors = tmp_path / "v.json"
    vectors.write_text(json.dumps(data))
    obs = tmp_path / "obs.json"
    obs.write_text(json.dumps(simulated_observations(vectors, "ampere-s8-u8-s32-satfinite")))
    rows = {m["model"]: m["matched"] for m in check(str(obs), ["ampere", "ampere-s8-u8-s32"])["models"]}
    assert rows["ampere-s8-u8-s32-satfinite"] == 60 and rows["ampere-s8-u8-s32"] < 60
