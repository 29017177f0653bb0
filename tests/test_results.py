"""Result files (tcsmt-result/2): the golden document, validation, replay,
atomic writing that leaves unchanged stable content alone, and the replay
command. No solver is needed here.

Refresh the golden file with TCSMT_REFRESH_GOLDEN=1 after a deliberate
change of the schema (and bump SCHEMA when old files no longer read).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from cli_run import run

from tcsmt.enums import FileStatus
from tcsmt.errors import UserError
from tcsmt.model.load import params_from_dict
from tcsmt.report import results
from tcsmt.report.results import make_result, validate, write_result
from tcsmt.search.vectors import Hypothesis, Vector

GOLDEN = Path(__file__).parent / "golden" / "result_diff.json"
REFRESH = os.environ.get("TCSMT_REFRESH_GOLDEN") == "1"

BASE = dict(arch="test", in_format="float16", c_format="float32", out_format="float32",
            block_size=4, align_bits=0, carry_bits=3, align_rounding="truncate",
            normalisation="block", product_alignment="raw", final_rounding="rz",
            chaining="recursive", c_placement="global", subnormals="keep", min_exponent=-131)
P = 0x33800000          # 2^-24 in binary32


def hypotheses() -> list[Hypothesis]:
    a = params_from_dict({**BASE, "name": "volta-like"}, "test")
    b = params_from_dict({**BASE, "name": "ampere-like", "block_size": 8, "align_bits": 1,
                          "carry_bits": "unbounded", "min_exponent": -132}, "test")
    return [Hypothesis("A", a, "volta-like"), Hypothesis("B", b, "ampere-like")]


def fixed_doc() -> dict:
    """a = [1, 0], b = [1, 0], c = -(1 - 2^-24): 2^-23 with align_bits 0,
    2^-24 with 1 (Fasi et al.), and a vector both agree on."""
    one, minus = 0x3C00, 0xBF7FFFFF
    vecs = [Vector((one, 0), (one, 0), minus), Vector((one, one), (one, one), 0x3F800000)]
    query = {"kind": "diff", "description": "golden", "k": 2,
             "domain": {"finite": True}, "command": "tcsmt diff volta-like ampere-like"}
    solver = {"name": "z3", "version": "0.0", "seconds": 0.5, "formula": "full", "runs": [], "notes": []}
    run = results.run_record(1.25, [], solver, "0" * 64)
    run.update(created="2026-01-01T00:00:00+00:00", tool={"name": "tcsmt", "version": "0.0.0"})
    doc = make_result(query, hypotheses(), vecs, "sat", run)
    doc["solvers"] = {"z3": "0.0"}        # the golden file does not depend on what is installed
    return doc


def test_golden_result_document():
    text = json.dumps(fixed_doc(), indent=2) + "\n"
    if REFRESH:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.exists(), "run with TCSMT_REFRESH_GOLDEN=1 to write the golden file"
    assert text == GOLDEN.read_text(encoding="utf-8"), "schema changed (TCSMT_REFRESH_GOLDEN=1 to accept)"


def test_outputs_and_separations_come_from_the_model():
    doc = fixed_doc()
    v0, v1 = doc["vectors"]
    assert v0["outputs"]["A"]["decimal"] == "0.00000011920928955078125"       # 2^-23
    assert v0["outputs"]["B"]["decimal"] == "0.000000059604644775390625"      # 2^-24
    assert v0["separates"] == [["A", "B"]] and v1["separates"] == []
    assert v0["c"] == {"hex": "0xbf7fffff", "decimal": "-0.999999940395355224609375"}
    assert doc["hypotheses"][1]["parameters"]["carry_bits"] is None


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.update(schema="tcsmt-result/0"), "schema"),
    (lambda d: d.pop("run"), "missing key 'run'"),
    (lambda d: d.update(verdict="maybe"), "verdict"),
    (lambda d: d.update(verdict="unsat"), "proof"),
    (lambda d: d["vectors"][0]["a"][0].update(hex="0x13c00"), "more than 16 bits"),
    (lambda d: d["vectors"][0]["a"][0].update(decimal="2"), "is not the value"),
    (lambda d: d["vectors"][0]["outputs"].pop("B"), "one entry per hypothesis"),
    (lambda d: d["vectors"][0].update(separates=[["A", "C"]]), "pairs of hypothesis ids"),
    (lambda d: d["vectors"][0]["b"].pop(), "list of 2 numbers"),
    (lambda d: d["hypotheses"][1].update(id="A"), "appears twice"),
    (lambda d: d["hypotheses"][0]["parameters"].update(block_size=0), "block_size"),
])
def test_validate_names_the_first_problem(damage, message):
    doc = fixed_doc()
    damage(doc)
    with pytest.raises(UserError, match=message):
        validate(doc)


def test_replay_agrees_with_an_untouched_file(tmp_path):
    path = tmp_path / "r.json"
    assert write_result(path, fixed_doc()) == FileStatus.NEW
    report = results.replay(path)
    assert report.ok and report.vectors == 2 and report.hypotheses == 2 and report.checked == 4


def test_replay_reports_a_changed_output_and_a_false_separation(tmp_path):
    doc = fixed_doc()
    doc["vectors"][0]["outputs"]["B"] = {"hex": "0x34000000", "decimal": "0.00000011920928955078125"}
    doc["vectors"][1]["separates"] = [["A", "B"]]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    report = results.replay(path)
    assert len(report.problems) == 2, report.problems
    assert ("vector 0, hypothesis B: the file says 0x34000000, the model gives 0x33800000"
            in report.problems[0])


def test_an_invalid_document_is_never_written(tmp_path):
    doc = fixed_doc()
    doc["verdict"] = "perhaps"
    with pytest.raises(UserError):
        write_result(tmp_path / "x.json", doc)
    assert not list(tmp_path.iterdir())


def test_writing_replaces_the_old_file_whole(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    write_result(path, fixed_doc())
    assert json.loads(path.read_text())["schema"] == results.SCHEMA
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_stable_content_unchanged_leaves_the_file_byte_for_byte(tmp_path):
    path = tmp_path / "r.json"
    write_result(path, fixed_doc())
    before = path.read_bytes()
    again = fixed_doc()
    again["run"].update(seconds=99.0, created="2027-01-01T00:00:00+00:00", proved_by=["cvc5"])
    assert write_result(path, again) == FileStatus.UNCHANGED
    assert path.read_bytes() == before
    changed = fixed_doc()
    changed["query"]["description"] = "another question"
    assert write_result(path, changed) == FileStatus.CHANGED
    assert json.loads(path.read_text())["query"]["description"] == "another question"


def test_replay_command_exit_codes(tmp_path):
    good = tmp_path / "good.json"
    write_result(good, fixed_doc())
    doc = copy.deepcopy(fixed_doc())
    doc["vectors"][1]["separates"] = [["A", "B"]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    r = run(["replay", good])
    assert r.exit_code == 0 and "all 4 outputs match" in r.output
    r = run(["replay", good, bad])
    assert r.exit_code == 1 and "1 disagreement" in r.output
    r = run(["replay", junk])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "not JSON" in r.output
