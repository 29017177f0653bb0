"""The batch simulator (the datapath run over NumPy) against the scalar one,
the recorded GPU outputs, and itself under every way of running it.

- Recorded data: for every shipped model with a data folder, the batch
  outputs equal the recorded d on every row (except the known problems of
  data/hwdata/README.md, applied by tcsmt.observed.recorded's rules) and the scalar
  outputs on a sample of rows (all rows in the slow test).
- Generated rows (tests/batch_cases.py) for every shipped model (the slow
  test: one of each distinct arithmetic, tests/model_sample.py): batch and
  scalar agree bit for bit.
- The recorded program equals the datapath run directly with NumPy words,
  with and without the fused forms; models wider than 64 bits are refused.
- matmul: shapes, dtypes, tf32 truncation, chaining along K, tiles, memory.
"""

from __future__ import annotations

import tracemalloc
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from batch_cases import KINDS, rows
from checkout import EXPECTED_FOLDERS, hwdata_folders
from checkout import read as recording
from model_sample import MODELS as SAMPLE
from model_sample import distinct, mask_rows

from tcsmt.api import matmul
from tcsmt.errors import UserError
from tcsmt.interp import chain
from tcsmt.interp import trace as interp_trace
from tcsmt.interp.memo import RowsInterp
from tcsmt.judge import conformance
from tcsmt.model.catalogue import all_models, arch_for_device
from tcsmt.model.choose import choose
from tcsmt.model.formats import get_format
from tcsmt.observed import recorded as hwdata
from tcsmt.observed.random_rows import random_rows
from tcsmt.sim import batch
from tcsmt.sim.batch import dot_batch, supported
from tcsmt.sim.dot import dot_bits, model
from tcsmt.sim.npio import model_for_arrays

FOLDERS = hwdata_folders()
MODELS = [m for m in SAMPLE if supported(m)]          # the slow tests run every arithmetic
ALL = [m for m in all_models() if supported(m)]
DISTINCT = distinct(ALL)
REFUSED = [m for m in all_models() if not supported(m)]


def scalar(p, a, b, c, sa=None, sb=None, mask=None) -> np.ndarray:
    """The Python-int interpretation, row by row, its element stages
    (unpack, multiply) kept across the rows (RowsInterp: tests/test_memo.py
    holds it to the plain one's bits)."""
    def ints(x, i):
        return None if x is None else [int(v) for v in x[i]]
    I = RowsInterp()
    return np.array([dot_bits(p, ints(a, i), ints(b, i), int(c[i]), ints(sa, i), ints(sb, i),
                              ints(mask, i), I=I) for i in range(len(c))], dtype=np.uint64)


def generated(p, n: int, k: int, seed: int):
    """Rows of tests/batch_cases.py; for models with their own b format or
    scales, tcsmt.observed.random_rows' (every format, scales included)."""
    if p.fin.is_integer:
        return (*integer_rows(p, n, k, seed), None, None)
    if p.scale_format is None and p.fb.name == p.fin.name:
        return (*rows(p, n, k, seed), None, None)
    r = random_rows(p, k, n, seed)
    return (r.a, r.b, r.c, *r.scale_bits(p))


def integer_rows(p, n: int, k: int, seed: int):
    """Integer rows: any inputs, c anywhere or near an end of the s32 range."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << p.fin.bits, (n, k)).astype(np.uint64)
    b = rng.integers(0, 1 << p.fb.bits, (n, k)).astype(np.uint64)
    c = rng.integers(0, 1 << 32, n).astype(np.uint64)
    c[: n // 3] = 0x7FFFFFFF - rng.integers(0, 1 << 16, n // 3).astype(np.uint64)
    c[n // 3: 2 * (n // 3)] = 0x80000000 + rng.integers(0, 1 << 16, n // 3).astype(np.uint64)
    return a, b, c


def hw_cases(device: str, folder: str):
    """(model, output, known-problem rules, judged) for every model of the
    device's architecture with the folder's input format and a recorded
    output (a and b both of that format, no scales: what was recorded).
    Judged against the recorded d: the architecture's own model for
    the format pair (as tcsmt conformance judges it), unless a known problem
    says otherwise; named variants (hypotheses such as *-mma) are checked
    batch against scalar only."""
    rec = recording(device, folder)
    arch = arch_for_device(device)
    for out in sorted(rec.d):
        rules = {kp.rule for kp in hwdata.known_problems(arch, rec.folder, out)}
        own = conformance.model_for(arch, rec.in_format.name, out)
        for m in all_models():
            if m.arch == arch and m.fin.name == m.fb.name == rec.in_format.name and \
                    m.scale_format is None and m.sparsity == "dense" and \
                    m.fout.name == get_format(out).name:
                judged = m is own and not ({"unreliable", "open"} & rules)
                yield m, out, rules, judged


def check_recorded(device: str, folder: str, sample: int | None) -> int:
    """Batch == recorded d (judged outputs) and batch == scalar (on
    ``sample`` rows, all when None); returns how many models were checked."""
    rec = recording(device, folder)
    checked = 0
    for p, out, rules, judged in hw_cases(device, folder):
        c = conformance.prepare_c(rec, p, "c_zero" in rules)
        got = dot_batch(p, rec.a, rec.b, c)
        if judged:
            want = conformance.recorded_outputs(rec, out, p)
            bad = np.nonzero(got != want)[0]
            assert bad.size == 0, f"{p.name} {device}/{folder} -> {out}: rows {bad[:5]} differ"
        rows_ = np.arange(rec.rows) if sample is None else \
            np.random.default_rng(0).choice(rec.rows, sample, replace=False)
        ref = scalar(p, rec.a[rows_], rec.b[rows_], c[rows_])
        assert np.array_equal(got[rows_], ref), f"{p.name} {device}/{folder}: batch != scalar"
        checked += 1
    return checked


def test_the_checkout_holds_every_recorded_folder():
    assert len(FOLDERS) == EXPECTED_FOLDERS, [f"{d}/{f.name}" for d, f in FOLDERS]


@pytest.mark.parametrize("device,folder", [(d, f.name) for d, f in FOLDERS])
def test_recorded_rows(device, folder):
    """Every row of the folder through the batch interpreter, judged
    against the recorded d where the rules of the known problems allow."""
    assert check_recorded(device, folder, sample=25) > 0, f"no shipped model for {device}/{folder}"


@pytest.mark.slow
@pytest.mark.parametrize("device,folder", [(d, f.name) for d, f in FOLDERS])
def test_recorded_rows_all_on_scalar(device, folder):
    check_recorded(device, folder, sample=None)


def test_every_model_with_data_is_checked():
    """Every shipped model whose architecture, input format and output
    format were recorded is reached by test_recorded_rows."""
    have = {(arch_for_device(d), recording(d, f.name).in_format.name, get_format(out).name)
            for d, f in FOLDERS for out in recording(d, f.name).d}
    reached = {m.name for d, f in FOLDERS for m, _, _, _ in hw_cases(d, f.name)}
    expected = {m.name for m in ALL if (m.arch, m.fin.name, m.fout.name) in have
                and m.fb.name == m.fin.name and m.scale_format is None and m.sparsity == "dense"}
    assert expected and expected <= reached


# ---------------------------------------------------------------------------
# Generated rows
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("p", MODELS, ids=lambda m: m.name)
def test_generated_rows_batch_equals_scalar(p):
    k = p.block_size + 4                                             # two blocks: chaining too
    a, b, c, sa, sb = generated(p, 64, k, seed=7)
    m = mask_rows(p, 64, k, 7)
    assert np.array_equal(dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb, mask_bits=m),
                          scalar(p, a, b, c, sa, sb, m))


@pytest.mark.slow
@pytest.mark.parametrize("p", DISTINCT, ids=lambda m: m.name)
def test_generated_rows_many(p):
    for k in (1, p.block_size, 2 * p.block_size + 1):
        a, b, c, sa, sb = generated(p, 200, k, seed=k)
        m = mask_rows(p, 200, k, k)
        assert np.array_equal(dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb, mask_bits=m),
                              scalar(p, a, b, c, sa, sb, m))


def test_generated_rows_reach_their_corners():
    """The generator's rows are what they claim: subnormal results, ties of
    fp16 outputs, infinities and NaNs all occur."""
    p = choose("ampere-fp16-fp16")
    a, b, c = rows(p, 8 * len(KINDS), p.block_size, seed=3)
    d = dot_batch(p, a, b, c)
    kinds = {p.fout.classify(int(x)) for x in d}
    assert {"subnormal", "inf", "nan", "zero", "normal"} <= kinds
    ties = 0
    for i in range(KINDS.index("output_ties"), len(c), len(KINDS)):
        exact = p.fc.value(int(c[i])) + sum(Fraction(p.fin.value(int(x))) * p.fin.value(int(y))
                                            for x, y in zip(a[i], b[i]))
        lo = p.fout.value(p.fout.round_value(exact, "rd"))
        hi = p.fout.value(p.fout.round_value(exact, "ru"))
        ties += lo != hi and exact - lo == hi - exact
    assert ties >= 4


# ---------------------------------------------------------------------------
# Ways of running the same datapath
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["volta-fp16-fp16", "hopper-fp16-fp32", "hopper-e4m3-fp32",
                                  "cdna3-bf16-fp32", "blackwell-e4m3-fp32-mma"])
def test_recorded_program_equals_direct_run(name, monkeypatch):
    p = choose(name)
    a, b, c = rows(p, 48, 2 * p.block_size + 1, seed=11)
    direct = dot_batch(p, a, b, c, engine="direct")
    assert np.array_equal(dot_batch(p, a, b, c, engine="replay"), direct)
    monkeypatch.setattr(interp_trace, "FUSE", False)
    chain.clear()
    assert np.array_equal(dot_batch(p, a, b, c, engine="replay"), direct)
    chain.clear()


def test_models_wider_than_64_bits_are_refused():
    assert REFUSED, "ampere-fp64 needs ~112-bit words and should be refused"
    for p in REFUSED:
        z = np.zeros((2, 3), dtype=np.uint64)
        with pytest.raises(UserError, match=rf"{p.name}.*at most 64 bits"):
            dot_batch(p, z, z, np.zeros(2, dtype=np.uint64))
    p = choose("ampere-fp64")
    with pytest.raises(UserError, match="ampere-fp64.*64 bits"):
        matmul(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), arch=p)


def test_dot_batch_input_errors():
    p = choose("hopper-fp16-fp32")
    z = np.zeros((3, 4), dtype=np.uint64)
    with pytest.raises(UserError, match="bit pattern"):
        dot_batch(p, z + 0x10000, z, np.zeros(3, dtype=np.uint64))
    with pytest.raises(UserError, match=r"\[N, K\]"):
        dot_batch(p, z, z[:, :2], np.zeros(3, dtype=np.uint64))


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------

def scalar_matmul_check(p, A, B, C, D, cells=None):
    """Each element of D (or the given cells) against the scalar datapath."""
    from tcsmt.sim.npio import to_bits
    ab, bb, cb = to_bits(A, p.fin, "A"), to_bits(B, p.fin, "B"), to_bits(C, p.fc, "C")
    db = to_bits(D, p.fout, "D")
    m, n = D.shape
    cells = cells or [(i, j) for i in range(m) for j in range(n)]
    for i, j in cells:
        want = dot_bits(p, [int(x) for x in ab[i]], [int(x) for x in bb[:, j]], int(cb[i, j]))
        assert int(db[i, j]) == want, (p.name, i, j)


def rand(shape, dtype, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("arch,dtype,c_dtype,want", [
    ("volta", np.float16, np.float32, "volta-fp16-fp32"),
    ("ampere", np.float16, np.float16, "ampere-fp16-fp16"),
    ("ampere", ml_dtypes.bfloat16, np.float32, "ampere-bf16-fp32"),
    ("ampere", np.float32, np.float32, "ampere-tf32-fp32"),
    ("ada", ml_dtypes.float8_e5m2, np.float32, "ada-e5m2-fp32"),
    ("hopper", ml_dtypes.float8_e4m3fn, np.float32, "hopper-e4m3-fp32"),
    ("blackwell", ml_dtypes.float8_e4m3fn, np.float32, "blackwell-e4m3-fp32"),
    ("cdna3", np.float16, np.float32, "cdna3-fp16-fp32"),
])
def test_matmul_chooses_the_model_by_dtype_and_chains_along_k(arch, dtype, c_dtype, want):
    """The model of an architecture whose formats the dtypes hold
    (tcsmt.sim.npio.model_for_arrays; tcsmt.matmul asks for formats= before
    it reads float32 as tf32), run block after block along K."""
    p = choose(want)
    m, k, n = 3, 2 * p.block_size + 3, 4
    A, B, C = rand((m, k), dtype, 1), rand((k, n), dtype, 2), rand((m, n), c_dtype, 3)
    chosen = model_for_arrays(arch, None, None, A, C, B)
    assert chosen.name == want
    D = batch.matmul(A, B, C, chosen)
    assert D.shape == (m, n) and D.dtype == np.dtype(c_dtype)
    scalar_matmul_check(p, A, B, C, D)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (1, 17, 1), (5, 1, 3), (2, 33, 1), (1, 8, 9)])
def test_matmul_shapes(m, k, n):
    p = choose("hopper-fp16-fp32")
    A, B, C = rand((m, k), np.float16, m), rand((k, n), np.float16, k), rand((m, n), np.float32, n)
    scalar_matmul_check(p, A, B, C, matmul(A, B, C, arch="hopper"))


def test_matmul_tiles_give_the_same_result():
    A, B, C = rand((37, 40), np.float16, 1), rand((40, 29), np.float16, 2), rand((37, 29), np.float32, 3)
    whole = matmul(A, B, C, arch="ampere")
    small = matmul(A, B, C, arch="ampere", max_memory=3 * batch.bytes_per_sample(choose("ampere"), 40))
    direct = batch.matmul(A, B, C, choose("ampere"), engine="direct", max_memory=200_000)
    assert np.array_equal(whole.view(np.uint32), small.view(np.uint32))
    assert np.array_equal(whole.view(np.uint32), direct.view(np.uint32))


def test_matmul_formats_and_overrides():
    A, B = rand((2, 20), ml_dtypes.bfloat16, 4), rand((20, 3), ml_dtypes.bfloat16, 5)
    C = rand((2, 3), np.float32, 6)
    D = matmul(A, B, C, arch="hopper", formats="bf16:fp32", overrides=["align_bits=0", "block_size=4"])
    p = model("hopper", "bf16:fp32", ["align_bits=0", "block_size=4"])
    scalar_matmul_check(p, A, B, C, D)


def test_matmul_reads_tf32_as_the_top_19_bits():
    A, B, C = rand((3, 9), np.float32, 7), rand((9, 2), np.float32, 8), rand((3, 2), np.float32, 9)
    low = np.uint32((1 << 13) - 1)
    A_cut = (A.view(np.uint32) & ~low).view(np.float32)
    B_cut = (B.view(np.uint32) & ~low).view(np.float32)
    assert not np.array_equal(A, A_cut)
    D = matmul(A, B, C, arch="ampere", formats="tf32:fp32")
    assert np.array_equal(D.view(np.uint32), matmul(A_cut, B_cut, C, arch="ampere-tf32-fp32").view(np.uint32))
    scalar_matmul_check(choose("ampere-tf32-fp32"), A_cut, B_cut, C, D)


def test_matmul_errors():
    A, B, C = rand((2, 3), np.float16, 1), rand((3, 4), np.float16, 2), rand((2, 4), np.float32, 3)
    with pytest.raises(UserError, match="A's columns must equal B's rows"):
        matmul(A, B[:2], C, arch="ampere")
    with pytest.raises(UserError, match="C is 2x3, expected 2x4"):
        matmul(A, B, C[:, :3], arch="ampere")
    with pytest.raises(UserError, match="2-D"):
        matmul(A[0], B, C, arch="ampere")
    with pytest.raises(UserError, match="A is float64; hopper's default model .* round_inputs"):
        matmul(A.astype(np.float64), B, C, arch="hopper")
    with pytest.raises(UserError, match="B is float32 and hopper-fp16-fp32 reads float16"):
        matmul(A, B.astype(np.float32), C, arch="hopper-fp16-fp32")
    with pytest.raises(UserError, match="C has dtype float16"):
        matmul(A, B, C.astype(np.float16), arch="ampere", formats="fp16:fp32")
    with pytest.raises(UserError, match="unknown architecture"):
        matmul(A, B, C, arch="pentium")


def test_matmul_memory_stays_within_the_budget():
    """The peak of NumPy allocations (tracemalloc sees them) stays near
    max_memory, well below holding every product of the dot products."""
    A, B, C = rand((96, 256), np.float16, 1), rand((256, 96), np.float16, 2), rand((96, 96), np.float32, 3)
    budget = 4 << 20
    matmul(A[:2], B[:, :2], C[:2, :2], arch="hopper")          # record the program first
    tracemalloc.start()
    matmul(A, B, C, arch="hopper", max_memory=budget)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    all_products = 96 * 96 * 256 * 8
    assert peak < budget + (2 << 20), peak
    assert peak < all_products / 4


@pytest.mark.slow
def test_matmul_1024_cubed_peak_memory():
    n = 1024
    A, B, C = rand((n, n), np.float16, 1), rand((n, n), np.float16, 2), rand((n, n), np.float32, 3)
    tracemalloc.start()
    D = matmul(A, B, C, arch="hopper", backend="numpy")      # the tiles' memory bound
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"1024^3 hopper fp16 GEMM: peak of traced allocations {peak / 2**20:.0f} MiB")
    assert peak < batch.DEFAULT_MEMORY + 64 * 2**20
    scalar_matmul_check(choose("hopper-fp16-fp32"), A, B, C, D, cells=[(0, 0), (511, 7), (1023, 1023)])
