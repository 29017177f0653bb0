"""tcsmt check: observations, recorded folders and result files against models.

The observations are our own H100 runs (results/hardware/H100) and the
recorded data (data/hwdata); the scalar interpreter (tcsmt.observed.observations.compare)
is the independent count the batch simulator's is checked against.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run
from cli_run import tcsmt as cli

import tcsmt
from tcsmt.errors import UserError
from tcsmt.judge.check import check, load_rows
from tcsmt.observed.observations import compare, read_observations

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "results" / "hardware" / "H100"


def test_h100_fp16_observations_match_hopper_in_every_row():
    r = run(["check", H100 / "mma-f16-f32.json", "--arch", "hopper"])
    assert r.exit_code == 0, r.output
    assert "hopper-fp16-fp32 (for hopper): 2000/2000 rows match" in r.output


def test_mismatches_are_counted_as_the_scalar_interpreter_counts_them():
    """ampere's model on H100 rows: the batch simulator's count equals the
    scalar interpreter's, row for row, and each mismatch is explained."""
    doc = check(H100 / "mma-f16-f32.json", ["ampere"], limit=300, show=2)
    m = doc["models"][0]
    obs = read_observations(H100 / "mma-f16-f32.json")
    obs.rows = obs.rows[:300]
    scalar = compare(obs, "ampere-fp16-fp32")
    assert (m["matched"], m["rows"]) == (scalar.matched, 300) and scalar.matched < 300
    first = m["mismatches"][0]
    assert first["index"] == scalar.mismatches[0][0].index
    assert first["model"]["hex"] == obs.fout.hex(scalar.mismatches[0][1])
    stages = [s for s, _ in first["explain"]]
    assert "alignment point" in stages and stages[-1] == "rounded"


def test_cli_shows_mismatches_with_the_models_stages_and_exits_1():
    r = run(["check", H100 / "mma-f16-f32.json", "--arch", "ampere", "--limit", "40", "--show", "1"])
    assert r.exit_code == 1
    assert "rows match (MISMATCH)" in r.output and "aligned product" in r.output
    assert "rounded" in r.output and "ulp" in r.output


def test_fp8_observations_pick_the_models_instruction():
    """H100 mma.sync e4m3 rows: --arch hopper takes the mma.sync model, not wgmma's."""
    doc = check(H100 / "mma-e4m3-f32.json", ["hopper"], show=0)
    (m,) = doc["models"]
    assert m["model"] == "hopper-e4m3-fp32-mma" and m["matched"] == m["rows"] == 2000


def test_recorded_folder_applies_its_known_problems():
    doc = check(ROOT / "data" / "hwdata" / "H100" / "E4M3", ["hopper"], show=0)
    fp32 = [m for m in doc["models"] if m["formats"] == "e4m3:fp32"]
    assert fp32 and fp32[0]["matched"] == fp32[0]["rows"] == 5000
    notes = " ".join(n for s in doc["sets"] for n in s["notes"])
    assert "c is read as +0" in notes and "never judged" in notes


def test_without_arch_the_devices_architecture_is_checked():
    doc = check(H100 / "mma-f16-f16.json", show=0)
    assert [(m["model"], m["matched"]) for m in doc["models"]] == [("hopper-fp16-fp16", 2000)]


def test_result_file_counts_agreement_with_each_hypothesis():
    doc = check(ROOT / "results" / "ampere" / "rounding.json", ["ampere"], show=0)
    (m,) = doc["models"]
    assert m["agrees_with"]["truncate"] == m["rows"] == 2      # the model's own hypothesis
    assert m["agrees_with"]["rz"] < 2


def test_every_file_with_vectors_is_read():
    for path in ("ampere/carry-bits-proof.json", "ampere/monotonicity.json",
                 "coverage/fasi-a100.json", "plans/fp16-fp32.json"):
        assert load_rows(ROOT / "results" / path)
    assert load_rows("fp16-fp32")[0].k == 16             # a shipped plan by name


def test_python_call_returns_the_document():
    doc = tcsmt.check(H100 / "mma-tf32-f32.json", "hopper", show=0)
    assert doc["schema"] == "tcsmt-check/1" and doc["models"][0]["matched"] == 2000


@pytest.mark.parametrize("args,match", [
    (["nothing.json", "--arch", "hopper"], "nothing.json: no such file"),
    ([ROOT / "data" / "hwdata", "--arch", "hopper"], "not a recorded DEVICE/FORMAT folder"),
    ([H100 / "mma-f16-f32.json", "--arch", "hopper-e4m3-fp32"], "computes float8_e4m3fn"),
    ([H100 / "mma-f16-f32.json", "--arch", "cdna3", "--set", "nonsense=1"], "unknown parameter"),
    ([ROOT / "results" / "compare-algorithms" / "ampere-k4.json", "--arch", "ampere"],
     "not operands of one matrix instruction"),
])
def test_bad_input_is_one_line_and_exit_2(args, match):
    r = run(["check", *args])
    assert r.exit_code == 2 and match in r.output and r.output.count("\n") == 1, r.output


def test_json_output(tmp_path, capsys):
    code, out, err = cli(["check", H100 / "mma-bf16-f32.json", "--arch", "hopper", "--format", "json",
                            "--limit", "10"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["models"][0]["rows"] == 10 and doc["sets"][0]["what"] == "observations"
    code, old, err = cli(["check", H100 / "mma-bf16-f32.json", "--arch", "hopper", "--json",
                            "--limit", "10"], capsys)            # the old spelling, with a note
    assert code == 0 and json.loads(old)["models"] == doc["models"] and "--format json" in err


def test_all_ranks_every_model_of_the_rows_formats(capsys):
    doc = check(H100 / "mma-f16-f32.json", ["all"], limit=200)
    names = [m["model"] for m in doc["models"]]
    fp16 = [m.name for m in tcsmt.all_models() if (m.fin.name, m.fb.name, m.fc.name, m.fout.name) ==
            ("float16", "float16", "float32", "float32") and m.scale_format is None and m.sparsity == "dense"]
    assert sorted(names) == sorted(fp16) and doc["ranked"]
    matched = [m["matched"] for m in doc["models"]]
    assert matched == sorted(matched, reverse=True) and matched[0] == 200
    assert doc["models"][[m["model"] for m in doc["models"]].index("hopper-fp16-fp32")]["matched"] == 200
    code, out, _ = cli(["check", H100 / "mma-f16-f32.json", "--arch", "all", "--limit", "200"], capsys)
    assert code == 0 and "ranked by rows matched" in out and "1. " in out


def test_several_models_skip_those_without_the_formats(capsys):
    doc = check(H100 / "mma-bf16-f32.json", ["volta", "hopper"])
    assert [m["model"] for m in doc["models"]] == ["hopper-bf16-fp32"]
    assert doc["skipped"] and doc["skipped"][0].startswith("volta skipped: volta has no model")
    code, out, _ = cli(["check", H100 / "mma-bf16-f32.json", "--arch", "volta", "--arch", "hopper"], capsys)
    assert code == 0 and "note: volta skipped" in out


def test_unknown_model_for_the_formats():
    with pytest.raises(UserError, match="volta has no model for the formats"):
        check(H100 / "mma-bf16-f32.json", ["volta"])


H200 = ROOT / "results" / "hardware" / "H200"
CAMPAIGN = H200 / "campaign-20261127-101515"


def test_h200_wgmma_fp8_rows_with_c_follow_the_shipped_models():
    """Open question 6 of FACTS.md, on the H200: with c != 0 in most rows,
    wgmma's fp8 rows are the shipped models' (c inside the block), and c
    added after the block's rounded result is not."""
    obs = read_observations(CAMPAIGN / "observed-wgmma-e4m3-f32.json")
    assert obs.device == "NVIDIA H200" and sum(1 for r in obs.rows if r.c != 0) > 1500
    doc = check(CAMPAIGN / "observed-wgmma-e4m3-f32.json", ["hopper-e4m3-fp32"], show=0)
    assert doc["models"][0]["matched"] == 2000
    doc = check(CAMPAIGN / "observed-wgmma-e4m3-f32.json", ["hopper-e4m3-fp32"], ["c_placement=after"], 0)
    assert doc["models"][0]["matched"] == 1076


def test_h200_mma_fp8_into_fp16_is_the_model_file_found_there():
    """mma.sync fp8 into fp16: the wgmma model misses rows, the model file
    written from the H200's rows (the fp32 mma.sync reading with fp16 c and
    output and blocks rounded to nearest) reproduces every row."""
    for fmt, wgmma_rows in (("e4m3", 1189), ("e5m2", 1243)):
        rows = CAMPAIGN / f"observed-mma-{fmt}-f16.json"
        found = check(rows, [str(H200 / f"hopper-{fmt}-fp16-mma.toml"), f"hopper-{fmt}-fp16"], show=0)
        assert [(m["matched"], m["rows"]) for m in found["models"]] == [(2000, 2000), (wgmma_rows, 2000)]


H100_CAMPAIGN = H100 / "campaign-20261127-210714"


@pytest.mark.parametrize("unit, model, rounded_to_zero", [
    ("bf16", "hopper-bf16-fp32", 2), ("tf32", "hopper-tf32-fp32", 2),
    ("fp16-fp16", "hopper-fp16-fp16", 35), ("fp16", "hopper-fp16-fp32", 0),
    ("e4m3", "hopper-e4m3-fp32-mma", 0), ("e4m3-wgmma", "hopper-e4m3-fp32", 0)])
def test_h100_campaign_rows_are_the_shipped_hopper_models(unit, model, rounded_to_zero):
    """Every row an H100 ran in the blind identifications of the campaign
    (both phases: the plan, then confirmation) is the shipped Hopper
    model's. The rows whose non-zero sum rounds to zero came back +0; the
    model with zero_sign = positive (the Hopper models' value before those
    rows) gives -0 on exactly those."""
    rows = H100_CAMPAIGN / f"observed-identify-{unit}.json"
    obs = read_observations(rows)
    assert obs.device == "NVIDIA H100 80GB HBM3" and len(obs.rows) > 700
    doc = check(rows, [model], show=0)
    assert doc["models"][0]["matched"] == len(obs.rows)
    signed = check(rows, [model], ["zero_sign=positive"], show=0)["models"][0]
    assert len(obs.rows) - signed["matched"] == rounded_to_zero


def test_h100_rows_of_the_h200_probes_are_the_h200s():
    """The H100 ran the H200 campaign's ten probes and got the H200's rows
    bit for bit; the table names each file's rows by their SHA-256, which
    the H200's committed file must give."""
    import hashlib
    import re
    table = (H100_CAMPAIGN / "same-rows-as-H200.md").read_text()
    row = r"^\| (observed-\S+\.json) \| \S+ \| (\d+) \| .* \| ([0-9a-f]{64}) \| ok \|$"
    found = re.findall(row, table, re.M)
    assert len(found) == 10
    for name, rows, sha in found:
        doc = json.loads((CAMPAIGN / name).read_text())
        key = [[r["a"], r["b"], r["c"], r.get("sa"), r.get("sb"), r["d"]] for r in doc["observations"]]
        assert len(key) == int(rows)
        assert hashlib.sha256(json.dumps(key, separators=(",", ":")).encode()).hexdigest() == sha, name
