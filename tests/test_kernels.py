"""The compiled kernels (tcsmt.sim.kernels) against the NumPy interpretation,
bit for bit: random GEMMs and every recorded row, the CPU kernel compiled by
Numba and the CUDA kernel run by Numba's CUDA simulator.

Compiling a kernel takes 5 to 30 s, so the default run compiles two (one
GEMM with a rolled loop and a partial last block, one recorded folder);
every shipped model and every recorded folder are marked slow. Compiled
kernels are cached on disk (tcsmt.sim.kernels.cache_dir), so a second run
loads them.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from checkout import hwdata_dir, hwdata_folders

from tcsmt.errors import UserError
from tcsmt.interp.kernel_source import _full_segment, cpu_segments, cpu_source
from tcsmt.interp.program import record
from tcsmt.interp.rolling import roll
from tcsmt.judge.conformance import model_for, prepare_c
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.observed import recorded as hwdata
from tcsmt.sim.batch import dot_batch, matmul, supported
from tcsmt.sim.npio import dtype_of, from_bits, to_bits

numba = pytest.importorskip("numba")


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
    out = []
    for p in all_models():
        try:
            dtype_of(p.fin), dtype_of(p.fb), dtype_of(p.fc)
        except UserError:
            continue
        if supported(p):
            out.append(p.name)
    return out


# ---------------------------------------------------------------------------
# The loop found in a recorded program
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["hopper-fp16-fp32", "volta-fp16-fp16", "ada-e4m3-fp32",
                                  "blackwell-nvfp4", "blackwell-mxf8f6f4-e4m3"])
def test_a_program_of_many_blocks_rolls_into_one_loop_per_block(name):
    p = choose(name)
    prog = record(p, 8 * p.block_size)
    _, _, tile, _, _ = cpu_segments(prog, p.block_size)
    loop = roll(tile.code, tile.sources, tile.sinks, tile.counts)
    assert loop is not None and loop.count >= 7
    # the kernel's size does not grow with K: 8 and 32 blocks give sources of about one size
    small, large = (len(cpu_source(record(p, n * p.block_size), p.block_size)) for n in (8, 32))
    assert large < 1.1 * small


@pytest.mark.parametrize("name", ["hopper-fp16-fp32", "blackwell-nvfp4", "blackwell-mxf8f6f4-e4m3"])
def test_a_program_with_a_partial_last_block_rolls_over_the_whole_blocks(name):
    p = choose(name)
    prog = record(p, 8 * p.block_size + 5)
    for seg in cpu_segments(prog, p.block_size)[:3]:
        loop = roll(seg.code, seg.sources, seg.sinks, seg.counts)
        assert loop is not None and loop.count == 8


def test_a_program_taking_products_out_of_order_rolls_with_listed_rows():
    """Hopper's mma.sync fp8 takes the products with k mod 4 in {0, 1}
    first, then the others: A's words are read at rows that jump back at
    the middle of K, so the loop reads them from a table of rows."""
    p = choose("hopper-e4m3-fp32-mma")
    prog = record(p, 8 * p.block_size)
    segments = cpu_segments(prog, p.block_size)[:3] + (_full_segment(prog, p.block_size),)
    listed = 0
    for seg in segments:
        loop = roll(seg.code, seg.sources, seg.sinks, seg.counts)
        assert loop is not None and loop.count >= 7
        listed += sum(len(kind) == 3 for args in loop.args for kind in args if kind[0] == "indexed")
    assert listed > 0
    assert "np.array([" in cpu_source(prog, p.block_size)


def test_the_scales_are_read_once_per_block_in_the_loop():
    """NVFP4: blocks of 64 products, one scale per 16: each repetition reads
    scales 4j .. 4j + 3 of A (in the A part) and of B (in the B part)."""
    p = choose("blackwell-nvfp4")
    prog = record(p, 8 * p.block_size)
    part_a, part_b, _, _, _ = cpu_segments(prog, p.block_size)
    for seg, source in ((part_a, "sa"), (part_b, "sb")):
        loop = roll(seg.code, seg.sources, seg.sinks, seg.counts)
        reads = {kind[2] for args in loop.args for kind in args if kind[:2] == ("indexed", source)}
        strides = {kind[3] for args in loop.args for kind in args if kind[:2] == ("indexed", source)}
        assert reads == {0, 1, 2, 3} and strides == {4}


def test_a_program_without_repetition_is_not_rolled():
    p = choose("hopper-fp16-fp32")
    prog = record(p, p.block_size)
    _, _, tile, _, _ = cpu_segments(prog, p.block_size)
    assert roll(tile.code, tile.sources, tile.sinks, tile.counts) is None


# ---------------------------------------------------------------------------
# CPU kernels
# ---------------------------------------------------------------------------

def check_gemm(name: str, k: int, seed: int = 0, m: int = 21, n: int = 75):
    p = choose(name)
    A, B, C = operands(p, m, k, n, seed)
    SA, SB = scales(p, m, k, n, seed) if p.scale_format else (None, None)
    want = matmul(A, B, C, p, backend="numpy", scale_a=SA, scale_b=SB)
    got = matmul(A, B, C, p, backend="cpu", scale_a=SA, scale_b=SB)
    differ = np.sum(got.view(np.uint8) != want.view(np.uint8))
    assert same_bits(got, want), f"{name}, K={k}: {differ} bytes differ"


def test_cpu_gemm_equals_numpy_with_a_rolled_loop_and_a_partial_block():
    check_gemm("hopper-fp16-fp32", 2 * 16 + 5)     # the K of test_mmasim: one kernel for both


def test_cpu_gemm_in_small_tiles_and_tasks_of_several_tiles_equals_numpy():
    """Tiles of 8 x 8 over a 37 x 300 D: each task runs B's part once for a
    column of 5 tiles (the last one partial) and A's part for each tile."""
    from tcsmt.sim import kernels
    from tcsmt.sim.batch import matmul_bits
    p = choose("hopper-fp16-fp32")
    A, B, C = operands(p, 37, 2 * 16 + 5, 300, 4)
    at, bt, ct = to_bits(A, p.fin, "A").T, to_bits(B, p.fb, "B"), to_bits(C, p.fc, "C")
    assert kernels._group((37, 300), (8, 8), 1) == 5
    want = matmul_bits(p, at, bt, ct, backend="numpy")
    assert np.array_equal(kernels.run_cpu(p, at, bt, ct, threads=1, tile=(8, 8)), want)


def test_cpu_gemm_of_nvfp4_with_random_scales_equals_numpy():
    check_gemm("blackwell-nvfp4", 256)     # the K of test_mmasim's NVFP4 GEMM: one kernel for both


@pytest.mark.slow
@pytest.mark.parametrize("name", gemm_models())
def test_cpu_gemm_equals_numpy_on_every_model(name):
    p = choose(name)
    for k in (p.block_size - 1, 3 * p.block_size + 1):
        check_gemm(name, k, seed=k)


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
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", TCSMT_KERNEL_CACHE=str(tmp_path))
    script = SIM_SCRIPT.format(tests=os.path.dirname(__file__), cases=cases)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count(" ok") == len(cases)


def test_cuda_kernel_equals_numpy_under_the_simulator(tmp_path):
    run_cuda_simulator([("hopper-fp16-fp32", 35), ("volta-fp16-fp16", 13), ("ada-e4m3-fp32", 40),
                        ("cdna3-fp16-fp32", 80),     # cdna3 at 80: rolled after reordering
                        ("blackwell-nvfp4", 144),    # scales in a rolled loop, a partial block
                        ("blackwell-mxf8f6f4-e4m3-e5m2", 40),
                        ("hopper-e4m3-fp32-mma", 69),    # rows read from a table
                        ("ampere-s8-u8-s32-satfinite", 70), ("blackwell-u8-s32", 33)], tmp_path)


@pytest.mark.slow
def test_cuda_kernel_equals_numpy_under_the_simulator_on_every_model(tmp_path):
    cases = [(name, 2 * choose(name).block_size + 1) for name in gemm_models()]
    run_cuda_simulator(cases, tmp_path)
