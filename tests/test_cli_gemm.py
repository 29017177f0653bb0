"""``tcsmt gemm``: .npy files in, D out, bad input as one-line UserErrors."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest
from click.testing import CliRunner

from tcsmt import matmul
from tcsmt.cli.gemm import gemm
from tcsmt.errors import UserError
from tcsmt.sim.npyfiles import load_npy


def rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(dtype)


def save(tmp_path, **arrays):
    paths = {}
    for name, arr in arrays.items():
        paths[name] = str(tmp_path / f"{name}.npy")
        np.save(paths[name], arr)
    return paths


def run(*args):
    return CliRunner().invoke(gemm, list(args))


@pytest.mark.parametrize("dtype,arch,model", [
    (np.float16, "hopper", "hopper-fp16-fp32"),
    (ml_dtypes.bfloat16, "ampere", "ampere-bf16-fp32"),
    (ml_dtypes.float8_e4m3fn, "hopper", "hopper-e4m3-fp32"),
    (ml_dtypes.float8_e5m2, "ada", "ada-e5m2-fp32"),
    (np.float32, "blackwell-tf32-fp32", "blackwell-tf32-fp32"),
])
def test_gemm_writes_what_matmul_computes(tmp_path, dtype, arch, model):
    A, B, C = rand((4, 40), dtype, 1), rand((40, 3), dtype, 2), rand((4, 3), np.float32, 3)
    p = save(tmp_path, A=A, B=B, C=C)
    out = str(tmp_path / "D.npy")
    r = run("--arch", arch, p["A"], p["B"], p["C"], "-o", out)
    assert r.exit_code == 0, r.output + repr(r.exception)
    assert model in r.output
    D = np.load(out)
    assert np.array_equal(D.view(np.uint32), matmul(A, B, C, arch=model).view(np.uint32))
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


def test_gemm_formats_and_set(tmp_path):
    A, B, C = rand((2, 20), np.float16, 1), rand((20, 2), np.float16, 2), rand((2, 2), np.float16, 3)
    p = save(tmp_path, A=A, B=B, C=C)
    out = str(tmp_path / "D.npy")
    r = run("--arch", "volta", "--formats", "fp16:fp16", "--set", "carry_bits=1", "--set",
            "min_exponent=none", p["A"], p["B"], p["C"], "-o", out)
    assert r.exit_code == 0, r.output + repr(r.exception)
    want = matmul(A, B, C, arch="volta", formats="fp16:fp16",
                  overrides=["carry_bits=1", "min_exponent=none"])
    assert np.load(out).dtype == np.float16
    assert np.array_equal(np.load(out).view(np.uint16), want.view(np.uint16))


def user_error(r) -> str:
    assert isinstance(r.exception, UserError), repr(r.exception)
    msg = str(r.exception)
    assert "\n" not in msg
    return msg


def test_gemm_bad_input_is_a_user_error_and_writes_nothing(tmp_path):
    A, B, C = rand((2, 3), np.float16, 1), rand((3, 4), np.float16, 2), rand((2, 4), np.float32, 3)
    p = save(tmp_path, A=A, B=B, C=C, Bbad=rand((5, 4), np.float16, 4), C64=C.astype(np.float64))
    out = tmp_path / "D.npy"
    assert "A's columns must equal B's rows" in user_error(
        run("--arch", "hopper", p["A"], p["Bbad"], p["C"], "-o", str(out)))
    assert "no model for A of dtype float16 and C of dtype float64" in user_error(
        run("--arch", "hopper", p["A"], p["B"], p["C64"], "-o", str(out)))
    assert "C has dtype float64" in user_error(
        run("--arch", "hopper-fp16-fp32", p["A"], p["B"], p["C64"], "-o", str(out)))
    assert "cannot read" in user_error(
        run("--arch", "hopper", str(tmp_path / "nope.npy"), p["B"], p["C"], "-o", str(out)))
    (tmp_path / "junk.npy").write_bytes(b"not an array")
    assert "not a readable .npy file" in user_error(
        run("--arch", "hopper", str(tmp_path / "junk.npy"), p["B"], p["C"], "-o", str(out)))
    assert "ampere-fp64" in user_error(
        run("--arch", "ampere-fp64", p["A"], p["B"], p["C"], "-o", str(out)))
    assert not out.exists()


def test_gemm_keeps_an_existing_output_on_error(tmp_path):
    A, B, C = rand((2, 3), np.float16, 1), rand((3, 4), np.float16, 2), rand((2, 4), np.float32, 3)
    p = save(tmp_path, A=A, B=B, C=C)
    out = tmp_path / "D.npy"
    out.write_bytes(b"old")
    user_error(run("--arch", "hopper", p["A"], p["A"], p["C"], "-o", str(out)))
    assert out.read_bytes() == b"old"
    assert "must be a .npy file" in user_error(
        run("--arch", "hopper", p["A"], p["B"], p["C"], "-o", str(tmp_path / "D.txt")))


def test_load_npy_reads_ml_dtypes_arrays_back(tmp_path):
    for dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2):
        x = rand((3, 5), dtype, 7)
        path = tmp_path / "x.npy"
        np.save(path, x)
        y = load_npy(str(path), "x")
        assert y.dtype == np.dtype(dtype) and np.array_equal(y.view(np.uint8), x.view(np.uint8))
    np.save(tmp_path / "f.npy", np.asfortranarray(rand((3, 4), ml_dtypes.bfloat16, 8)))
    f = load_npy(str(tmp_path / "f.npy"), "f")
    assert np.array_equal(f.view(np.uint16), rand((3, 4), ml_dtypes.bfloat16, 8).view(np.uint16))


def test_gemm_backend_cpu_writes_the_numpy_backends_bits(tmp_path):
    pytest.importorskip("numba")
    A, B, C = rand((6, 37), np.float16, 4), rand((37, 9), np.float16, 5), rand((6, 9), np.float32, 6)
    p = save(tmp_path, A=A, B=B, C=C)
    out = str(tmp_path / "D.npy")
    r = run("--arch", "hopper", "--backend", "cpu", p["A"], p["B"], p["C"], "-o", out)
    assert r.exit_code == 0, r.output + repr(r.exception)
    want = matmul(A, B, C, arch="hopper", backend="numpy")
    assert np.array_equal(np.load(out).view(np.uint32), want.view(np.uint32))


def test_gemm_backend_cuda_without_a_device_is_one_line(tmp_path):
    pytest.importorskip("numba")
    from tcsmt.sim.kernels import cuda_available
    if cuda_available():
        pytest.skip("a CUDA device is present")
    A, B, C = rand((2, 4), np.float16, 1), rand((4, 2), np.float16, 2), rand((2, 2), np.float32, 3)
    p = save(tmp_path, A=A, B=B, C=C)
    r = run("--arch", "hopper", "--backend", "cuda", p["A"], p["B"], p["C"], "-o", str(tmp_path / "D.npy"))
    assert r.exit_code != 0 and isinstance(r.exception, UserError)
    assert "no CUDA device" in str(r.exception)


def test_gemm_refuses_float32_for_an_fp16_model_unless_told_how_to_round(tmp_path):
    A, B = rand((3, 20), np.float32, 1), rand((20, 2), np.float32, 2)
    p = save(tmp_path, A=A, B=B)
    out = str(tmp_path / "D.npy")
    r = run("--arch", "hopper", p["A"], p["B"], "-o", out)
    assert r.exit_code != 0 and "round_inputs" in str(r.exception) and not os.path.exists(out)
    r = run("--arch", "hopper", "--round-inputs", "rne", p["A"], p["B"], "-o", out)
    assert r.exit_code == 0, r.output + repr(r.exception)
    assert "hopper-fp16-fp32" in r.output
    want = matmul(A.astype(np.float16), B.astype(np.float16), np.zeros((3, 2), np.float32), arch="hopper")
    assert np.array_equal(np.load(out).view(np.uint32), want.view(np.uint32))
