"""tcsmt error / tcsmt.error: the exact sums against Python's Fractions,
the error measures against results rounded on purpose, whole runs on
models whose errors are known in advance, and the command line."""

from __future__ import annotations

import json
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from cli_run import tcsmt as run_cli

import tcsmt
from tcsmt.accuracy.exact import errors, exact_sum
from tcsmt.errors import UserError
from tcsmt.model.formats import get_format

F16, BF16, F32 = get_format("float16"), get_format("bfloat16"), get_format("float32")
E4M3, E5M2 = get_format("float8_e4m3fn"), get_format("float8_e5m2")


def wide_values(rng, shape, dtype):
    """Values over the whole range of a format: subnormals, extremes, both signs, zeros."""
    bits = rng.integers(0, 1 << (8 * np.dtype(dtype).itemsize), size=shape, dtype=np.uint64)
    x = bits.astype({1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]).view(dtype)
    x = x.astype(np.float64)
    return np.where(np.isfinite(x), x, 0.0)


def low(fa, fb, fc, fout=F32):
    return min(fa.emin - fa.frac_bits + fb.emin - fb.frac_bits, fc.emin - fc.frac_bits,
               fout.emin - fout.frac_bits)


@pytest.mark.parametrize("fa,fb,da,db", [(F16, F16, np.float16, np.float16),
                                         (BF16, BF16, ml_dtypes.bfloat16, ml_dtypes.bfloat16),
                                         (E4M3, E5M2, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)])
def test_exact_sum_equals_the_fraction_sum(fa, fb, da, db):
    rng = np.random.default_rng(7)
    m, n, k = 3, 4, 37
    A, B = wide_values(rng, (m, k), da), wide_values(rng, (k, n), db)
    C = wide_values(rng, (m, n), np.float32)
    x = exact_sum(A, B, C, fa, fb, F32, low(fa, fb, F32))
    for i in range(m):
        for j in range(n):
            want = Fraction(C[i, j]) + sum(Fraction(A[i, t]) * Fraction(B[t, j]) for t in range(k))
            assert Fraction(x.ints[i * n + j]) * Fraction(2) ** x.scale == want


def rounded(value: Fraction, mode: str) -> float:
    return float(F32.value(F32.round_value(value, mode)))


def test_errors_of_results_rounded_on_purpose():
    """D rounded to nearest lies within half an ulp; D truncated lies
    within one ulp, and every inexact element went towards zero."""
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((4, 50)).astype(np.float16), rng.standard_normal((50, 5)).astype(np.float16)
    A, B, C = A.astype(np.float64), B.astype(np.float64), np.zeros((4, 5))
    x = exact_sum(A, B, C, F16, F16, F32, low(F16, F16, F32))
    values = [Fraction(v) * Fraction(2) ** x.scale for v in x.ints]
    near = errors(np.array([rounded(v, "rne") for v in values]), x, F32)
    assert near.inexact > 0 and np.abs(near.ulps).max() <= 0.5
    cut = errors(np.array([rounded(v, "rz") for v in values]), x, F32)
    assert cut.towards_zero == cut.inexact > 0 and np.abs(cut.ulps).max() < 1
    assert cut.nonfinite == near.nonfinite == 0


def test_a_single_rounding_is_within_half_an_ulp():
    """fma-chain at K = 2: the first product is exact in binary32 and the
    sum is rounded once to nearest, so no result is off by more than half
    an ulp, and the errors lean neither way."""
    doc = tcsmt.error(["fma-chain"], m=24, n=24, ks=[2], distributions=["normal"], formats="fp16:fp32")
    (row,) = doc["rows"]
    assert row["model"] == "fma-chain-fp16-fp32" and row["k"] == 2
    assert 0 < row["max_ulps"] <= 0.5
    assert 0.3 < row["towards_zero"] < 0.7


def test_truncating_units_round_positive_sums_towards_zero():
    """Hopper fp16 -> fp32 truncates (rz) after aligning with truncation:
    on all-positive inputs every inexact result is below the exact sum."""
    doc = tcsmt.error("hopper", m=8, n=8, ks=[16, 32], distributions=["uniform", "positive"])
    assert len(doc["rows"]) == 4
    for row in doc["rows"]:
        assert row["towards_zero"] == 1.0 and row["mean_signed_ulps"] < 0 and row["nonfinite"] == 0


def test_given_inputs_and_every_model_sees_the_same_values():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((5, 40)).astype(np.float16)
    B = rng.standard_normal((40, 3)).astype(np.float16)
    C = rng.standard_normal((5, 3)).astype(np.float32)
    doc = tcsmt.error(["ampere", "ampere"], inputs=(A, B, C))
    a, b = doc["rows"]
    assert a == b and a["distribution"] == "given" and a["k"] == 40 and doc["c"] == "given"
    assert doc["m"] == 5 and doc["n"] == 3
    assert [m["same_circuit_as"] for m in doc["models"]] == [None, "ampere-fp16-fp32"]


def test_bad_requests_are_one_line_errors():
    with pytest.raises(UserError, match="unknown distribution"):
        tcsmt.error("ampere", ks=[4], distributions=["gaussian"])
    with pytest.raises(UserError, match="block-scaled"):
        tcsmt.error("blackwell-nvfp4", ks=[32])
    with pytest.raises(UserError, match="NumPy type"):
        tcsmt.error("ampere-tf32-fp32", ks=[8])


def test_command_prints_a_table_within_the_width_and_writes_the_plot(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "100")
    png, js = tmp_path / "e.png", tmp_path / "e.json"
    code, out, err = run_cli(["error", "volta", "hopper", "--m", "4", "--n", "4", "--k", "8,32",
                              "--plot", str(png), "-o", str(js)], capsys)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "volta-fp16-fp32" in out and "cancelling" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    doc = json.loads(js.read_text())
    assert len(doc["rows"]) == 2 * 4 * 2 and doc["plot"] == str(png)
    code, out, _ = run_cli(["error", "volta", "--m", "2", "--n", "2", "--k", "4", "--dist", "normal",
                            "--format", "csv"], capsys)
    assert code == 0 and out.splitlines()[0].startswith("model,distribution,k,max_ulps")
    code, _, err = run_cli(["error", "volta", "--m", "2", "--n", "2", "--k", "4", "--dist", "normal",
                            "--json", str(js)], capsys)        # the old spelling of -o, with a note
    assert code == 0 and "use -o FILE" in err and json.loads(js.read_text())["k"] == [4]


def test_use_beyond_the_recordings_is_noted_and_cancelled_sums_are_counted():
    """Hopper's mixed-format fp8 wgmma rows were all recorded with c = 0: a
    K longer than one block (32) chains blocks through c != 0, which no
    recording checks (the same-format models were checked with c != 0)."""
    doc = tcsmt.error(["hopper-e4m3-e5m2-fp32", "hopper-e4m3-fp32", "hopper"], m=4, n=4, ks=[32, 64],
                      distributions=["cancelling"])
    assert len(doc["notes"]) == 1 and doc["notes"][0].startswith("hopper-e4m3-e5m2-fp32 was validated "
                                                                  "only with c = 0")
    assert "K = 64 chains blocks of 32" in doc["notes"][0]
    assert tcsmt.error("hopper-e4m3-e5m2-fp32", m=2, n=2, ks=[32],
                       distributions=["positive"])["notes"] == []
    rows = {(r["model"], r["k"]): r for r in doc["rows"]}
    assert rows[("hopper-e4m3-fp32", 64)]["cancelled"] > 0           # fp8: the sums cancel to ~0
    positive = tcsmt.error("volta", m=4, n=4, ks=[16], distributions=["positive"])["rows"][0]
    assert positive["cancelled"] == 0


@pytest.mark.parametrize("args,words", [
    (["error", "ampere", "--k", "4,x"], "--k"),
    (["error", "ampere", "--dist", "gaussian", "--k", "4"], "unknown distribution"),
    (["error", "ampere", "--a", "A.npy"], "--a and --b"),
    (["error", "no-such-gpu", "--k", "4"], "unknown architecture"),
])
def test_command_bad_input(capsys, args, words):
    code, out, err = run_cli(args, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and words in err
