"""The engine a product runs on by default: Numba comes with tcsmt, so a
product that is not small runs the compiled CPU kernel, compiling it the
first time and saying so on stderr; an optional part that is missing is
one line naming the pip command."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tcsmt
from tcsmt.sim import backends, kernels


def test_llvmlite_and_numba_are_dependencies_of_every_install():
    import tomllib
    from pathlib import Path
    config = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    for package in ("llvmlite", "numba"):
        assert any(d.startswith(package) for d in config["project"]["dependencies"]), package
    assert kernels.have_compiler("cpu") and kernels.have_numba()


def test_a_product_that_is_not_small_takes_the_compiled_kernel(tmp_path, monkeypatch):
    """Even when its kernel was never compiled (a fresh cache)."""
    monkeypatch.setenv("TCSMT_KERNEL_CACHE", str(tmp_path))
    p = tcsmt.model("hopper")
    if kernels.cuda_available():
        pytest.skip("a CUDA device is present: the default is cuda")
    assert not kernels.compiled_on_disk("cpu", p, 512)
    assert backends.choose(p, 512, 512 ** 3, None) == "cpu"
    assert backends.choose(p, 16, 16 * 16 * 16, None) == "numpy"          # small: no compilation
    assert backends.choose(p, 512, 512 ** 3, "numpy") == "numpy"


def test_the_first_compilation_is_said_once_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TCSMT_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(kernels, "_COMPILED", set())
    p = tcsmt.model("volta")
    with kernels.compiling("cpu", p, 4):
        pass
    err = capsys.readouterr().err
    assert (f"compiling the cpu kernels of volta-fp16-fp32 for K = 4 (once per model and block shape: "
            f"they are kept in {tmp_path})") in err
    assert "compiled and ran in" in err
    with kernels.compiling("cpu", p, 4):                                  # known in this process
        pass
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_gemm_command_runs_the_compiled_kernel_on_a_plain_call(tmp_path):
    """tcsmt gemm at 256^3 (2^24 products) with a fresh kernel cache: it
    compiles the CPU kernel, says so, and D equals the NumPy engine's."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float16)
    b = rng.standard_normal((256, 256)).astype(np.float16)
    np.save(tmp_path / "A.npy", a)
    np.save(tmp_path / "B.npy", b)
    env = {"TCSMT_KERNEL_CACHE": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-m", "tcsmt.cli.main", "gemm", "--arch", "hopper",
                          str(tmp_path / "A.npy"), str(tmp_path / "B.npy"), "-o", str(tmp_path / "D.npy")],
                         capture_output=True, text=True, timeout=900, env={**os.environ, **env})
    assert run.returncode == 0, run.stderr
    assert "compiling the cpu kernels of hopper-fp16-fp32 for K = 256" in run.stderr
    d = np.load(tmp_path / "D.npy")
    want = tcsmt.matmul(a, b, arch="hopper", backend="numpy")
    assert np.array_equal(d.view(np.uint32), np.asarray(want).view(np.uint32))


def test_a_missing_extra_is_one_line_naming_the_pip_command():
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n    import tcsmt.torch\nexcept ModuleNotFoundError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().startswith("tcsmt.torch needs PyTorch: pip install torch==2.13.0")
    assert out.stdout.count("\n") == 1
