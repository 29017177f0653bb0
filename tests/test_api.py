"""The Python API: one call per command, returning the document the command
prints; tcsmt.matmul names its model, takes C as optional and refuses
wider inputs unless told how to round them."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from cli_run import tcsmt as cli

import tcsmt
from tcsmt import api
from tcsmt.errors import UserError
from tcsmt.model.formats import get_format
from tcsmt.regen.jobs import has_unknown
from tcsmt.sim.inputs import round_array

ROOT = Path(__file__).resolve().parent.parent


def test_every_call_is_exported_from_the_package():
    package = Path(tcsmt.__file__).parent
    for name, target in tcsmt.API.items():
        assert getattr(tcsmt, name) is getattr(api, target), name
        assert name in tcsmt.__all__
        assert not (package / name).exists() and name not in ("models", "queries", "plans"), \
            f"tcsmt.{name} would be shadowed by the package of that name"


COMMAND_CALLS = {"models": "models", "simulate": "simulate", "conformance": "conformance",
                 "check": "check", "params": "params", "model save": "model_save", "find": "find",
                 "prove": "prove_carry_bits", "properties": "properties", "regen": "regen",
                 "diff": "diff", "equiv": "equiv", "replay": "replay", "gemm": "gemm", "error": "error",
                 "agreement": "agreement", "harness": "harness", "plan": "plan", "identify": "identify",
                 "compare-algorithms": "compare_algorithms", "coverage": "coverage"}


def _commands(group, prefix=""):
    import click
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}"


def test_every_command_has_its_call():
    """tcsmt.api has one call per command (the command parses, calls it and
    prints what it returns); every call spells out its keyword arguments."""
    import inspect

    from tcsmt.cli.main import cli
    assert sorted(_commands(cli)) == sorted(COMMAND_CALLS)
    for call in COMMAND_CALLS.values():
        fn = getattr(api, call)
        kinds = {p.kind for p in inspect.signature(fn).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{call} hides keywords in **kw"
        assert fn.__doc__, call


def test_dot_takes_storage_words_as_matmul_and_files_do():
    """tf32 travels in a binary32 word everywhere: tcsmt.dot, simulate and
    tcsmt.matmul agree on 1 * 1 + 0 (0x3f800000), and a word with low bits
    set is not a tf32 value."""
    one = 0x3F800000
    assert tcsmt.dot("ampere-tf32-fp32", [one], [one], 0).hex == "0x3f800000"
    assert tcsmt.simulate("ampere-tf32-fp32", [one], [one], 0)["d"]["hex"] == "0x3f800000"
    D = tcsmt.matmul(np.ones((1, 1), np.float32), np.ones((1, 1), np.float32), arch="ampere-tf32-fp32")
    assert D.view(np.uint32)[0, 0] == one
    with pytest.raises(UserError, match="low 13 bits must be zero"):
        tcsmt.dot("ampere-tf32-fp32", [one | 1], [one], 0)


def test_dir_of_the_package_lists_the_public_calls():
    assert set(dir(tcsmt)) == set(tcsmt.__all__)
    assert {"matmul", "plan", "identify_unit", "harness", "gemm", "choose_model"} <= set(dir(tcsmt))


def test_simulate_is_the_command_s_document(capsys):
    doc = tcsmt.simulate("ampere", ["0x3c00", "1"], ["0x3c00", "2^-24"], "0x3f800000", explain=True)
    assert doc["model"] == "ampere-fp16-fp32" and doc["d"]["hex"] == "0x40000000"
    assert doc["a"][1]["decimal"] == "1" and doc["b"][1]["hex"] == "0x0001"
    assert any(stage.strip() == "rounded" for stage, _ in doc["stages"])
    code, out, _ = cli(["simulate", "--arch", "ampere", "--a", "0x3c00,1", "--b", "0x3c00,2^-24",
                        "--c", "0x3f800000"], capsys)
    assert code == 0 and f"d      {doc['d']['hex']} = {doc['d']['decimal']}" in out
    assert tcsmt.simulate("ampere", [0x3C00], [0x3C00], 0)["d"]["decimal"] == "1"     # ints are bits
    with pytest.raises(UserError, match="must match"):
        tcsmt.simulate("ampere", [1, 2], [1], 0)


def test_conformance_counts_rows(tmp_path):
    doc = tcsmt.conformance(ROOT / "data" / "hwdata" / "A100", limit=50)
    assert doc["schema"] == "tcsmt-conformance/2"
    judged = [f for f in doc["folders"] if f["judged"]]
    assert judged and all(f["matched"] == f["rows"] == 50 for f in judged)
    assert doc["summary"]["judged"] == doc["summary"]["matched"] == 50 * len(judged)
    json.dumps(doc)


def test_matmul_names_its_model_and_takes_c_as_optional():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 20)).astype(np.float16)
    B = rng.standard_normal((20, 4)).astype(np.float16)
    D = tcsmt.matmul(A, B, arch="hopper")
    assert D.model.name == "hopper-fp16-fp32" and D.dtype == np.float32 and D.shape == (3, 4)
    with_zeros = tcsmt.matmul(A, B, np.zeros((3, 4), np.float32), arch="hopper")
    assert np.array_equal(D.view(np.uint32), with_zeros.view(np.uint32))
    assert (D + 1).model is None


def test_matmul_refuses_float32_for_an_fp16_model_unless_told_how_to_round():
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((2, 8)).astype(np.float32), rng.standard_normal((8, 2)).astype(np.float32)
    with pytest.raises(UserError, match="round_inputs"):
        tcsmt.matmul(A, B, arch="ampere")
    with pytest.raises(UserError, match="round_inputs"):
        tcsmt.matmul(A, B, arch="ampere-bf16-fp32")
    D = tcsmt.matmul(A, B, arch="ampere", round_inputs="rne")
    want = tcsmt.matmul(A.astype(np.float16), B.astype(np.float16), arch="ampere")
    assert D.model.name == "ampere-fp16-fp32" and np.array_equal(D.view(np.uint32), want.view(np.uint32))
    assert tcsmt.matmul(A, B, arch="ampere", formats="tf32:fp32").model.name == "ampere-tf32-fp32"
    rz = tcsmt.matmul(A, B, arch="ampere-bf16-fp32", round_inputs="rz")
    cut = tcsmt.matmul(round_array(A, get_format("bfloat16"), "rz"),
                       round_array(B, get_format("bfloat16"), "rz"), arch="ampere-bf16-fp32")
    assert np.array_equal(rz.view(np.uint32), cut.view(np.uint32))


@pytest.mark.parametrize("fmt", ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize("mode", ["rne", "rz", "ru", "rd"])
def test_round_array_equals_the_exact_rounding(fmt, mode):
    f = get_format(fmt)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(400) * 2.0 ** rng.integers(-26, 18, 400)
    below = np.arange(1, 200, dtype=np.uint16).view(np.float16).astype(np.float64)
    ties = (below[:-1] + below[1:]) / 2                          # midpoints of fp16 values
    edge = [0.0, -0.0, 65519.99, 65520.0, 1e9, -1e9, 448.0, 464.0, 5e-324, -5e-324]
    x = np.concatenate([x, x.astype(np.float32), ties, -ties, edge]).astype(np.float64)
    got = round_array(x, f, mode)
    bits = got.view(np.uint8 if f.bits == 8 else np.uint16).astype(int)
    for v, b in zip(x, bits):
        want = f.round_value(Fraction(float(v)), mode, sign_of_zero=int(np.signbit(v)))
        assert b == want, (v, hex(b), hex(want))
    if f.has_inf:                                                 # infinity is exact in every mode
        inf = round_array(np.array([np.inf, -np.inf]), f, mode).astype(np.float64)
        assert list(inf) == [np.inf, -np.inf]


def test_round_array_rounds_into_tf32_and_refuses_unknown_modes():
    got = round_array(np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11]), get_format("tf32"), "rne")
    assert got.dtype == np.float32 and list(got) == [1.0, 1 + 2.0 ** -9]      # ties to even
    assert round_array(np.float32([1 + 2.0 ** -11]), get_format("tf32"), "ru")[0] == 1 + 2.0 ** -10
    with pytest.raises(UserError, match="unknown rounding"):
        round_array(np.ones(2), get_format("float16"), "nearest")
    same = np.ones(2, ml_dtypes.bfloat16)
    assert round_array(same, get_format("bfloat16")) is same


def test_equiv_and_replay(tmp_path):
    doc = tcsmt.equiv("volta", "ampere", timeout=60)
    assert doc["verdict"] == "sat" and doc["query"]["kind"] == "equiv"
    path = tmp_path / "e.json"
    path.write_text(json.dumps(doc))
    assert tcsmt.replay(path).ok


def test_find_and_properties(tmp_path):
    prior = tmp_path / "rounding.json"
    shutil.copy(ROOT / "results" / "ampere" / "rounding.json", prior)
    doc = tcsmt.find("rounding", "ampere", prior=prior, timeout=30)
    assert doc["verdict"] == "sat" and [h["id"] for h in doc["hypotheses"]][:2] == ["truncate", "rz"]
    rows = {r["property"]: r for r in tcsmt.list_properties("ampere")}
    assert rows["rounding"]["hypotheses"] == ["truncate", "rz", "rne", "ru", "rd"]


def test_prove_carry_bits_volta():
    doc = tcsmt.prove_carry_bits("volta", timeout=60)
    assert doc["query"]["fewest"] == 3 and doc["verdict"] == "unsat"


def test_coverage_without_generating():
    doc = tcsmt.coverage("fasi-v100", generate=False)
    assert doc["schema"].startswith("tcsmt-coverage/") and doc["summary"]["vectors"] == 29


def test_compare_algorithms_from_the_committed_result():
    prior = ROOT / "results" / "compare-algorithms" / "volta-k4.json"
    doc = tcsmt.compare_algorithms("volta", 4, prior=prior, timeout=60)
    assert doc["verdict"] == json.loads(prior.read_text())["verdict"]


def test_regenerate_one_query(tmp_path):
    seen = []
    doc = tcsmt.regenerate(["volta"], ["rounding"], root=tmp_path, timeout=30, jobs=1,
                           progress=lambda name, done, total: seen.append((done, total)))
    assert doc["counts"] == {"new": 1} and doc["outcomes"][0]["name"] == "volta/rounding"
    assert seen[-1] == (1, 1)
    first = json.loads((tmp_path / "volta" / "rounding.json").read_text())
    again = tcsmt.regenerate(["volta"], ["rounding"], root=tmp_path, timeout=30, jobs=1)
    # a file with an unknown at any level (on a busy machine, the one vector for
    # all pairs may find no answer in 30 s) is never a cache hit
    if has_unknown(first):
        assert "cached" not in again["counts"], again
    else:
        assert again["counts"] == {"cached": 1}, again


def test_conformance_counts_every_recorded_row_judged_or_not():
    """All recorded rows: the judged ones all match, and every row not
    judged is counted under the reason it is not."""
    total = tcsmt.conformance(ROOT / "data" / "hwdata")["summary"]
    assert total["rows"] == 150_000 and total["judged"] == total["matched"] == 110_000
    assert sum(total["not_judged"].values()) == 40_000
    assert total["judged_with_c_zero"] == 10_000


@pytest.mark.parametrize("fmt", ["E4M3", "E5M2"])
def test_the_mma_fp8_hypotheses_hold_on_every_b200_row(fmt):
    """The -mma fp8 models (c_placement, c_rounding and term_order fitted on
    the H100 and B200 recordings, so this is a fit, not a validation) keep
    reproducing every B200 fp8 -> fp32 row; the tcgen05 default does not."""
    doc = tcsmt.conformance(ROOT / "data" / "hwdata" / "B200")
    by_model = {f["model"]: f for f in doc["folders"] if f["output"] == "fp32" and f["folder"] == fmt}
    mma = by_model[f"blackwell-{fmt.lower()}-fp32-mma"]
    assert mma["matched"] == mma["rows"] == 5000
    assert by_model[f"blackwell-{fmt.lower()}-fp32"]["matched"] < 4000
