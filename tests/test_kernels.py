"""The compiled kernels (tcsmt.sim.cpu, tcsmt.sim.kernels) against the NumPy
interpretation, bit for bit: random GEMMs of every kind of chaining (a
partial last block, K = 1, long K, block 0 with its own program, products
taken out of order, late c, exact sums, block scales) in skinny and wide
shapes, every recorded row, the CPU kernels compiled by LLVM and the CUDA
kernels run by Numba's CUDA simulator; and the plans and code of the
kernels, which do not depend on K.

A kernel compiles in about a second per block shape and is cached on disk
(tcsmt.sim.llvm.cache_dir), so a second run loads it. Every shipped model
(one of each distinct arithmetic: tests/model_sample.py) and every recorded
folder are marked slow.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from checkout import hwdata_dir, hwdata_folders
from model_sample import distinct

from tcsmt.datapath.chain import chain_order
from tcsmt.errors import UserError
from tcsmt.interp.chain import end_program, plan, start_program, step_program
from tcsmt.interp.kernel_source import ends_source, steps_source
from tcsmt.judge.conformance import model_for, prepare_c
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.observed import recorded as hwdata
from tcsmt.sim import cpu, kernels
from tcsmt.sim.batch import dot_batch, matmul, matmul_bits, supported
from tcsmt.sim.npio import dtype_of, from_bits, to_bits

pytest.importorskip("llvmlite")


def operands(p, m: int, k: int, n: int, seed: int):
    """Random A, B, C in the model's dtypes: values over many binades,
    exact zeros, products that cancel and a row of tiny values (integer
    models: any inputs, C anywhere and a row near each end of the s32 range)."""
    rng = np.random.default_rng(seed)
    if p.fin.is_integer:
        return integer_operands(p, m, k, n, rng)
    a = rng.standard_normal((m, k)) * 2.0 ** rng.integers(-10, 10, (m, k))
    b = rng.standard_normal((k, n)) * 2.0 ** rng.integers(-10, 10, (k, n))
    a[rng.random((m, k)) < 0.1] = 0.0
    if k > 1:
        a[:, 1], b[1, :] = a[:, 0], -b[0, :]
    a[0, :] *= 2.0 ** (p.fin.emin - 2)
    c = rng.standard_normal((m, n)) * 2.0 ** rng.integers(-8, 9, (m, n))
    return (a.astype(np.float32).astype(dtype_of(p.fin)), b.astype(np.float32).astype(dtype_of(p.fb)),
            c.astype(np.float32).astype(dtype_of(p.fc)))


def integer_operands(p, m: int, k: int, n: int, rng):
    def draw(fmt, shape):
        return from_bits(rng.integers(0, 1 << fmt.bits, shape).astype(np.uint64), fmt)
    c = rng.integers(0, 1 << 32, (m, n)).astype(np.uint64)
    c[0, :] = 0x7FFFFFFF - rng.integers(0, 1 << 16, n).astype(np.uint64)
    c[-1, :] = 0x80000000 + rng.integers(0, 1 << 16, n).astype(np.uint64)
    return draw(p.fin, (m, k)), draw(p.fb, (k, n)), from_bits(c, p.fc)


def scales(p, m: int, k: int, n: int, seed: int):
    """Random scales of A [M, S] and B [S, N] in the model's scale format:
    mostly near 1, with the extremes mixed in (the smallest and largest
    encodings, zero for ue4m3, NaN, and ue4m3's ignored sign bit)."""
    rng = np.random.default_rng(seed + 1)
    fs, s = p.fscale, p.scale_count(k)

    def draw(shape):
        bits = fs.bias + rng.integers(-6, 7, shape)
        bits = np.clip(bits, 0, fs.max_exp_field) << fs.frac_bits | rng.integers(0, 1 << fs.frac_bits, shape)
        extremes = [0, 1, fs.max_exp_field << fs.frac_bits | fs.max_frac_at_emax, fs.nan_bits()]
        pick = rng.random(shape) < 0.08
        bits[pick] = rng.choice(extremes, int(pick.sum()))
        if fs.container_bits > fs.bits:                 # ue4m3 in an e4m3 byte: a sign bit, ignored
            bits |= rng.integers(0, 2, shape) << fs.bits
        return bits.astype(np.uint8).view(dtype_of(fs))
    return draw((m, s)), draw((s, n))


def same_bits(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))


def gemm_models():
    """One model of each distinct arithmetic that takes dense NumPy arrays
    (sparse models' dot products run with their masks: test_batch): the
    others compile to the same kernels."""
    out = []
    for p in distinct(m for m in all_models() if m.sparsity == "dense"):
        try:
            dtype_of(p.fin), dtype_of(p.fb), dtype_of(p.fc)
        except UserError:
            continue
        if supported(p):
            out.append(p.name)
    return out


# ---------------------------------------------------------------------------
# Plans: which program runs which block, and which rows it reads
# ---------------------------------------------------------------------------

def test_the_full_blocks_share_one_program_and_the_partial_block_has_its_own():
    p = choose("hopper-fp16-fp32")
    pl = plan(p, 8 * 16 + 5)
    assert [(r.j0, r.j1, r.key.n) for r in pl.runs] == [(0, 8, 16), (8, 9, 5)]
    assert pl.order is None and list(pl.rows(8)) == list(range(128, 133))     # in order: no table


def test_block_zero_has_its_own_program_where_its_c_is_another_format():
    """hopper e4m3 -> fp32: blocks round to e8m13, so block 0's c (binary32)
    and the others' (e8m13) are Terms of two shapes."""
    pl = plan(choose("hopper-e4m3-fp32"), 5 * 32 + 1)
    assert [(r.j0, r.j1, r.key.n) for r in pl.runs] == [(0, 1, 32), (1, 5, 32), (5, 6, 1)]
    assert pl.runs[0].key.c != pl.runs[1].key.c


def test_a_dot_product_of_one_block_or_less_is_one_program():
    p = choose("hopper-fp16-fp32")
    assert [(r.j0, r.j1, r.key.n) for r in plan(p, 1).runs] == [(0, 1, 1)]
    assert [(r.j0, r.j1, r.key.n) for r in plan(p, 16).runs] == [(0, 1, 16)]


def test_products_taken_out_of_order_are_read_through_the_datapaths_order():
    """Hopper's mma.sync fp8 takes the products with k mod 4 in {0, 1}
    first: the kernels read the rows of A and B the datapath's chain_order
    gives (the one definition), blocks of 16 along it."""
    p = choose("hopper-e4m3-fp32-mma")
    pl = plan(p, 69)
    assert list(pl.order) == chain_order(p, 69)
    assert list(pl.rows(0)) == [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29]


def test_a_block_reads_its_scales_once_per_scale_block():
    """NVFP4: blocks of 64 products, a scale per 16: block j reads scales
    4j .. 4j + 3 (four slots, each shared by 16 products)."""
    p = choose("blackwell-nvfp4")
    pl = plan(p, 8 * 64 + 20)
    assert pl.srows[:8].tolist() == [[4 * j + s for s in range(4)] for j in range(8)]
    assert pl.runs[0].key.slots == tuple(i // 16 for i in range(64))
    assert pl.runs[-1].key.slots == (0,) * 16 + (1,) * 4 and pl.srows[8, :2].tolist() == [32, 33]


@pytest.mark.parametrize("name", ["hopper-fp16-fp32", "hopper-e4m3-fp32", "blackwell-nvfp4",
                                  "hopper-e4m3-fp32-mma", "cdna3-e4m3fnuz-fp32"])
def test_the_kernels_code_does_not_depend_on_k(name):
    """Compiled once per model: the modules of K = 3 blocks + 5 and of
    1000 blocks + 5 are the same code (the tail's shape is K mod the block
    size, at most block_size - 1 small modules in all)."""
    p = choose(name)
    bs = p.block_size

    def code(k):
        return {cpu.module_text(m, p, key) for m, key in cpu.modules(p, k, "gemm")}
    assert code(3 * bs + 5) == code(1000 * bs + 5)
    assert code(2 * bs) == code(400 * bs)


def test_models_of_one_arithmetic_share_their_kernels():
    """Ada's and Ampere's fp16 models compute alike: their modules are the
    same text (so one compiled object in the cache serves both); Hopper's
    e4m3 model's are not."""
    def code(name):
        p = choose(name)
        return [cpu.module_text(m, p, key) for m, key in cpu.modules(p, 2 * p.block_size + 1, "gemm")]
    assert code("ada-fp16-fp32") == code("ampere-fp16-fp32")
    assert code("ada-fp16-fp32") != code("hopper-e4m3-fp32")


# ---------------------------------------------------------------------------
# CPU kernels
# ---------------------------------------------------------------------------

def check_gemm(name: str, k: int, seed: int = 0, m: int = 21, n: int = 75, threads=None):
    p = choose(name)
    A, B, C = operands(p, m, k, n, seed)
    SA, SB = scales(p, m, k, n, seed) if p.scale_format else (None, None)
    want = matmul(A, B, C, p, backend="numpy", scale_a=SA, scale_b=SB)
    got = matmul(A, B, C, p, backend="cpu", scale_a=SA, scale_b=SB, threads=threads)
    differ = np.sum(got.view(np.uint8) != want.view(np.uint8))
    assert same_bits(got, want), f"{name}, {m}x{k}x{n}: {differ} bytes differ"


SHAPES = [  # model, M, K, N: what each case exercises
    ("hopper-fp16-fp32", 21, 2 * 16 + 5, 75),        # full blocks and a partial one
    ("hopper-fp16-fp32", 9, 1, 13),                  # K = 1
    ("hopper-fp16-fp32", 3, 4000 + 3, 5),            # long K
    ("hopper-fp16-fp32", 1, 50, 1),                  # one dot product
    ("hopper-fp16-fp32", 1, 40, 300),                # a row
    ("hopper-fp16-fp32", 70, 40, 2),                 # a column
    ("hopper-e4m3-fp32", 10, 5 * 32 + 7, 10),        # block 0's own program (e8m13 results)
    ("volta-fp16-fp32-cfp16", 6, 13, 9),             # c in fp16, d in fp32
    ("hopper-e4m3-fp32-mma", 7, 69, 12),             # products out of order, c added after
    ("blackwell-e4m3-fp32-mma", 7, 33, 12),
    ("cdna3-fp16-fp32", 9, 2 * 8 + 3, 11),           # late c
    ("cdna3-e4m3fnuz-fp32", 9, 16 + 11, 11),         # late c, two product groups
    ("cdna1-fp16-fp32", 9, 11, 11),                  # exact sums
    ("cdna2-fp16-fp32", 9, 11, 11),                  # IEEE additions in pairs
    ("blackwell-nvfp4", 21, 2 * 64 + 20, 19),        # scales per 16, groups of 16
    ("blackwell-nvfp4-sftensor", 9, 64 + 40, 11),    # the raw-exponent window
    ("blackwell-mxf8f6f4-e4m3", 9, 3 * 32 + 1, 11),  # scales per 32
    ("ampere-s8-u8-s32-satfinite", 9, 70, 11),       # integers, saturated
    ("hopper-s4-s32", 7, 2 * 64 + 5, 12),            # integers, wrapped
]


@pytest.mark.parametrize("name,m,k,n", SHAPES, ids=[f"{s[0]}-{s[1]}x{s[2]}x{s[3]}" for s in SHAPES])
def test_cpu_gemm_equals_numpy(name, m, k, n):
    check_gemm(name, k, seed=k, m=m, n=n)


def test_cpu_gemm_on_one_core_equals_numpy():
    check_gemm("hopper-fp16-fp32", 37, m=10, n=10, threads=1)


def test_cpu_gemm_in_small_tiles_and_tasks_of_several_tiles_equals_numpy():
    """Tiles of 8 x 8 over a 37 x 300 D: each task runs B's part once per
    stretch of blocks for a column of 5 tiles (the last one partial) and
    A's part for each tile."""
    p = choose("hopper-fp16-fp32")
    A, B, C = operands(p, 37, 2 * 16 + 5, 300, 4)
    at, bt, ct = to_bits(A, p.fin, "A").T, to_bits(B, p.fb, "B"), to_bits(C, p.fc, "C")
    assert cpu.tiles(37, 300, 1, (8, 8)) == (8, 8, 5)
    want = matmul_bits(p, at, bt, ct, backend="numpy")
    assert np.array_equal(kernels.run_cpu(p, at, bt, ct, threads=1, tile=(8, 8)), want)


def test_a_skinny_product_is_split_among_the_threads():
    """10 x K x 10: one tile of D would be one task; with two threads the
    tiles get 5 rows, so each thread has one. A row of 16 columns is two
    tiles of one vector; a row of 8 columns is one task (nothing to split)."""
    assert cpu.tiles(10, 10, 2) == (5, 16, 1)
    assert cpu.tiles(1, 16, 2) == (1, 8, 1) and cpu.tiles(1, 8, 2) == (1, 8, 1)
    assert cpu.tiles(10, 10, 1) == (10, 16, 1)
    assert cpu.tiles(512, 512, 2) == (32, 64, 16)


def test_the_columns_after_the_last_whole_vector_go_along_the_rows():
    """(B's vectors, vectors along the columns, columns along the rows): 10
    columns of 10 rows are one vector of 8 columns per row and 2 columns
    in vectors of rows (14 vectors of 8 lanes, not 20); one row keeps its
    vectors along the columns."""
    assert cpu.columns(10, 10) == (2, 1, 2)
    assert cpu.columns(10, 1) == (2, 2, 0)
    assert cpu.columns(64, 32) == (8, 8, 0)
    assert cpu.columns(3, 13) == (1, 0, 3)


def test_the_cpu_kernels_memory_does_not_grow_with_k():
    """Beside A and B, a call holds its tiles' state and a stretch of
    hoisted words (bounded by HOIST_BYTES): the same at K = 200 blocks and
    at K = 2000 blocks."""
    p = choose("hopper-fp16-fp32")
    rng = np.random.default_rng(0)
    peaks = []
    for k in (200 * 16, 2000 * 16):
        at, bt = (rng.integers(0, 1 << 16, (k, 8), dtype=np.uint64) for _ in range(2))
        ct = np.zeros((8, 8), dtype=np.uint64)
        kernels.run_cpu(p, at, bt, ct, threads=1)
        tracemalloc.start()
        kernels.run_cpu(p, at, bt, ct, threads=1)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.1 * peaks[0] + 4096, peaks


@pytest.mark.slow
@pytest.mark.parametrize("name", gemm_models())
def test_cpu_gemm_equals_numpy_on_every_model(name):
    p = choose(name)
    for k in (1, p.block_size - 1, 3 * p.block_size + 1):
        check_gemm(name, max(k, 1), seed=k, m=9, n=11)


def recorded_cases():
    cases = []
    for device, folder in hwdata_folders():
        rec = hwdata.read_folder(folder, device)
        for out in rec.d:
            arch = hwdata_arch(device)
            p = model_for(arch, rec.in_format.name, out) if arch else None
            if p is not None and supported(p):
                cases.append(pytest.param(device, str(folder), out, id=f"{device}-{rec.folder}-{out}"))
    return cases


def hwdata_arch(device: str):
    from tcsmt.model.catalogue import arch_for_device
    return arch_for_device(device)


def check_recorded(device: str, folder: str, out: str):
    rec = hwdata.read_folder(folder, device)
    p = model_for(hwdata_arch(device), rec.in_format.name, out)
    rules = {kp.rule for kp in hwdata.known_problems(p.arch, rec.folder, out)}
    c = prepare_c(rec, p, "c_zero" in rules)
    want = dot_batch(p, rec.a, rec.b, c)
    got = dot_batch(p, rec.a, rec.b, c, backend="cpu")
    assert np.array_equal(got, want), f"{np.sum(got != want)} of {len(want)} rows differ"


def random_rows(p, n: int, k: int, seed: int):
    """Rows of bit patterns over every encoding (NaN, infinities, zeros and
    subnormals included) with the scales of ``scales``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << p.fin.bits, (n, k), dtype=np.uint64)
    b = rng.integers(0, 1 << p.fb.bits, (n, k), dtype=np.uint64)
    c = rng.integers(0, 1 << p.fc.bits, n, dtype=np.uint64)
    if not p.scale_format:
        return a, b, c, None, None
    sa, sb = scales(p, n, k, n, seed)
    fs = p.fscale
    return a, b, c, to_bits(sa, fs, "sa"), to_bits(sb, fs, "sb").T


@pytest.mark.slow
@pytest.mark.parametrize("name", ["blackwell-nvfp4", "blackwell-mxf8f6f4-e4m3-e5m2"])
def test_rows_kernel_with_scales_equals_numpy(name):
    p = choose(name)
    a, b, c, sa, sb = random_rows(p, 300, 2 * p.block_size + 7, 3)
    want = dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb)
    got = dot_batch(p, a, b, c, sa_bits=sa, sb_bits=sb, backend="cpu")
    assert np.array_equal(got, want), f"{np.sum(got != want)} of {len(want)} rows differ"


def test_cpu_kernel_equals_numpy_on_the_recorded_h100_fp16_rows():
    check_recorded("H100", str(hwdata_dir() / "H100" / "fp16"), "fp32")


@pytest.mark.slow
@pytest.mark.parametrize("device,folder,out", recorded_cases())
def test_cpu_kernel_equals_numpy_on_every_recorded_row(device, folder, out):
    check_recorded(device, folder, out)


def test_rows_kernel_with_scales_at_k_one_and_a_partial_block_equals_numpy():
    for name, k in (("blackwell-nvfp4", 1), ("hopper-e4m3-fp32-mma", 37)):
        p = choose(name)
        a, b, c, sa, sb = random_rows(p, 100, k, 5)
        kw = dict(sa_bits=sa, sb_bits=sb) if p.scale_format else {}
        assert np.array_equal(dot_batch(p, a, b, c, backend="cpu", **kw), dot_batch(p, a, b, c, **kw))


def test_unknown_backend_is_a_user_error():
    p = choose("hopper-fp16-fp32")
    A, B, C = operands(p, 2, 3, 2, 0)
    with pytest.raises(UserError, match="unknown backend"):
        matmul(A, B, C, p, backend="fpga")


# ---------------------------------------------------------------------------
# The CUDA kernel, run by Numba's CUDA simulator (a separate process: the
# simulator is chosen when numba.cuda is first imported)
# ---------------------------------------------------------------------------

SIM_SCRIPT = """
import sys, warnings
import numpy as np
sys.path.insert(0, {tests!r})
from test_kernels import operands, same_bits, scales
from tcsmt.model.choose import choose
from tcsmt.sim.batch import matmul
from tcsmt.sim import kernels
assert kernels.cuda_available()
warnings.simplefilter("ignore", RuntimeWarning)   # NumPy scalars wrap, and say so
for name, k in {cases!r}:
    p = choose(name)
    A, B, C = operands(p, 5, k, 6, k)
    SA, SB = scales(p, 5, k, 6, k) if p.scale_format else (None, None)
    want = matmul(A, B, C, p, backend="numpy", scale_a=SA, scale_b=SB)
    got = matmul(A, B, C, p, backend="cuda", scale_a=SA, scale_b=SB)
    assert same_bits(got, want), name
    print(name, k, "ok")
"""


def run_cuda_simulator(cases, tmp_path):
    pytest.importorskip("numba")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", TCSMT_KERNEL_CACHE=str(tmp_path))
    script = SIM_SCRIPT.format(tests=os.path.dirname(__file__), cases=cases)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count(" ok") == len(cases)


def test_cuda_kernel_equals_numpy_under_the_simulator(tmp_path):
    run_cuda_simulator([("hopper-fp16-fp32", 35), ("hopper-fp16-fp32", 1), ("volta-fp16-fp16", 13),
                        ("ada-e4m3-fp32", 40),       # block 0's own program
                        ("cdna3-e4m3fnuz-fp32", 40),   # late c, two product groups
                        ("blackwell-nvfp4", 144),    # scales, a partial block
                        ("blackwell-mxf8f6f4-e4m3-e5m2", 40),
                        ("hopper-e4m3-fp32-mma", 69),    # rows read through the order
                        ("ampere-s8-u8-s32-satfinite", 70), ("blackwell-u8-s32", 33)], tmp_path)


def covering_models(names: list[str]) -> list[str]:
    """Models whose CUDA kernels (K = two blocks and one more product)
    hold, between them, every line of every named model's kernels, its
    constants included (greedily: each next model the one adding the most
    lines not yet held)."""
    lines = {n: kernel_lines(n, 2 * choose(n).block_size + 1, constants=True) for n in names}
    left, chosen = set().union(*lines.values()), []
    while left:
        best = max(names, key=lambda n: len(lines[n] & left))
        chosen.append(best)
        left -= lines[best]
    return chosen


@pytest.mark.slow
def test_cuda_kernel_equals_numpy_under_the_simulator_on_every_line_of_every_model(tmp_path):
    """Every line of every model's CUDA kernels, with its constants, runs
    under the simulator (about 35 of the 177 models hold them all): the
    simulator checks the translation of each line into Python source; each
    model's own programs are checked compiled for the CPU
    (test_cpu_gemm_equals_numpy_on_every_model)."""
    names = covering_models(gemm_models())
    assert len(names) < len(gemm_models())
    run_cuda_simulator([(name, 2 * choose(name).block_size + 1) for name in names], tmp_path)


# ---------------------------------------------------------------------------
# The CUDA kernels compiled for a GPU (NVVM, no device needed), and run on
# one where there is one
# ---------------------------------------------------------------------------

def ptx_or_skip(name: str, k: int) -> dict:
    pytest.importorskip("numba")
    from numba.cuda.cudadrv.error import NvvmSupportError
    try:
        return kernels.cuda_ptx(choose(name), k, cc=(9, 0))
    except NvvmSupportError as e:
        pytest.skip(f"NVVM (the CUDA toolkit's compiler library) not found: {e}")


def test_cuda_kernels_compile_to_ptx_for_sm_90():
    """Numba's typing and NVVM's code generation, which the simulator does
    not run: every kernel of a call (start, the full blocks', the partial
    block's, end) is PTX for sm_90 with its entry point. Volta's blocks of
    4 keep this to seconds; the slow test below compiles longer blocks and
    other chains (block 0's own program, scales, products out of order,
    late c, the raw-exponent window)."""
    ptx = ptx_or_skip("volta-fp16-fp32", 2 * 4 + 3)
    assert sorted(ptx) == ["end", "start", "steps 0 (4 products)", "steps 1 (3 products)"]
    for name, text in ptx.items():
        assert ".target sm_90" in text and ".visible .entry" in text, name


def test_a_long_loop_body_is_cut_into_blocks_that_run_one_after_the_other():
    """The steps kernel's loop body in basic blocks of CHUNK lines
    (Numba's lowering costs a block's lines times its variables), each
    after a branch never taken whose store writes ST's word back."""
    from tcsmt.interp import kernel_source
    p = choose("blackwell-nvfp4")
    key = plan(p, 64).runs[0].key
    text = steps_source(step_program(p, key), "steps", False)
    body = text.split("for j in range(j0, j1):\n", 1)[1].splitlines()
    guards = [i for i, line in enumerate(body) if line.strip() == "if j < 0:"]
    assert len(guards) >= 10
    assert all(body[i + 1].strip() == "ST[0, m, n] = ST[0, m, n]" for i in guards)
    starts = [0] + [i + 2 for i in guards]
    assert all(b - a == kernel_source.CHUNK for a, b in zip(starts, guards))


def test_cut_kernels_compile_to_the_same_ptx_as_whole_ones(monkeypatch):
    """Cutting changes what Numba is given, not what runs: with blocks of 7
    lines, Volta's kernels compile to the PTX of the uncut ones (the
    generated names aside)."""
    from tcsmt.interp import kernel_source

    def ptx(chunk: int) -> dict:
        monkeypatch.setattr(kernel_source, "CHUNK", chunk)
        kernels.cuda_module.cache_clear()
        out = ptx_or_skip("volta-fp16-fp32", 2 * 4 + 3)
        kernels.cuda_module.cache_clear()
        return {n: [re.sub(r"\S*tcsmt_kernel_cuda_\w+", "NAME", line) for line in text.splitlines()
                    if not line.strip().startswith("//")] for n, text in out.items()}
    cut, whole = ptx(7), ptx(0)
    assert cut == whole and len(cut["steps 0 (4 products)"]) > 100


PTX_MODELS = ["hopper-e4m3-fp32", "hopper-e4m3-fp32-mma", "cdna3-e4m3fnuz-fp32",
              "blackwell-nvfp4-sftensor"]
"""The chains compiled to PTX by the slow test below (17 to 57 s each at
a load of 5.5): block 0's own program, products out of order, late c, scales with
the raw-exponent window. blackwell-nvfp4 (scales) is not among them: every
line of its kernels is a line of theirs but for its names and constants
(test_the_ptx_models_hold_every_line_of_the_nvfp4_kernels)."""


def kernel_lines(name: str, k: int, constants: bool = False) -> set[str]:
    """The lines of the CUDA kernels a call of length k runs, with the
    generated names abstracted, and the constants too (what NVVM is given,
    up to them; an n-operand and/or written once) unless ``constants``
    (then each named constant is written as its value)."""
    p = choose(name)
    pl = plan(p, k)
    texts = [ends_source(start_program(p), end_program(p), "ends")]
    texts += [steps_source(step_program(p, key), "steps", pl.order is not None)
              for key in dict.fromkeys(run.key for run in pl.runs)]
    lines = set()
    for text in texts:
        value = dict(re.findall(r"^(_u\d+) = np\.uint64\((0x[0-9a-f]+)\)$", text, re.M))
        for line in text.splitlines():
            line = re.sub(r"\bv\d+\b", "v", line.strip())
            if constants:
                lines.add(re.sub(r"\b_u\d+\b", lambda m, v=value: v.get(m.group(0), m.group(0)), line))
                continue
            line = re.sub(r"\b_u\d+\b", "c", line)
            line = re.sub(r"\b(0x[0-9a-f]+|\d+)\b", "N", line)
            lines.add(re.sub(r"(v ([|&]) )+v", r"v \2 ... \2 v", line))
    return lines


def test_the_ptx_models_hold_every_line_of_the_nvfp4_kernels():
    compiled = set().union(*(kernel_lines(n, 3 * choose(n).block_size + 1) for n in PTX_MODELS))
    nvfp4 = kernel_lines("blackwell-nvfp4", 3 * 64 + 1)
    assert len(nvfp4) > 50 and not nvfp4 - compiled, sorted(nvfp4 - compiled)


@pytest.mark.slow
@pytest.mark.parametrize("name", PTX_MODELS)
def test_cuda_kernels_of_each_kind_of_chain_compile_to_ptx(name):
    for text in ptx_or_skip(name, 3 * choose(name).block_size + 1).values():
        assert ".visible .entry" in text


def test_cuda_kernel_equals_numpy_on_a_gpu():
    if not kernels.cuda_available():
        pytest.skip("no CUDA device here (numba.cuda finds none): the kernels run under the "
                    "simulator and compile to PTX above")
    for name, k in (("hopper-fp16-fp32", 35), ("blackwell-nvfp4", 144), ("hopper-e4m3-fp32-mma", 69)):
        p = choose(name)
        A, B, C = operands(p, 40, k, 33, k)
        SA, SB = scales(p, 40, k, 33, k) if p.scale_format else (None, None)
        want = matmul(A, B, C, p, backend="numpy", scale_a=SA, scale_b=SB)
        assert same_bits(matmul(A, B, C, p, backend="cuda", scale_a=SA, scale_b=SB), want), name
