"""tcsmt diff with several models: the fewest vectors that separate every
pair, outputs keyed by model name, --count varied vectors, identical
circuits without a solver, files never replaced without --force, and the
note when a vector lies outside the inputs a model was validated on."""

from __future__ import annotations

import json

from cli_run import run

from tcsmt import api
from tcsmt.model.choose import choose
from tcsmt.observed.validated import outside_notes
from tcsmt.report import results
from tcsmt.search.domain import make_domain
from tcsmt.search.varied import avoiding
from tcsmt.search.vectors import Vector

NAMES = ["volta-fp16-fp32", "ampere-fp16-fp32", "hopper-fp16-fp32"]


def test_three_models_every_pair_separated_and_keyed_by_name(tmp_path):
    doc = api.diff("volta", "ampere", "hopper", timeout=60)
    assert [h["id"] for h in doc["hypotheses"]] == NAMES
    assert doc["verdict"] == "sat"
    done = {tuple(p) for v in doc["vectors"] for p in v["separates"]}
    assert done == {(a, b) for i, a in enumerate(NAMES) for b in NAMES[i + 1:]}
    for v in doc["vectors"]:
        assert set(v["outputs"]) == set(NAMES)
    results.write_result(tmp_path / "d.json", doc)
    assert results.replay(tmp_path / "d.json").ok


def test_count_gives_varied_vectors():
    doc = api.diff("volta", "ampere", count=3, timeout=60)
    vs = doc["vectors"]
    assert len(vs) == 3
    for i, v in enumerate(vs):
        assert v["separates"] == [NAMES[:2]]
        for w in vs[:i]:
            assert (v["a"], v["b"]) != (w["a"], w["b"])


def test_identical_circuits_need_no_solver():
    doc = api.diff("hopper", "blackwell", solver="z3", timeout=1)
    assert doc["verdict"] == "unsat" and doc["vectors"] == []
    assert doc["run"]["pairs"][0]["proved_by"] == ["identical circuits"]
    assert doc["run"]["solver"]["queries"] == 0


def test_identical_command_says_so(tmp_path):
    r = run(["diff", "hopper", "blackwell", "-o", str(tmp_path / "r.json")])
    assert r.exit_code == 1
    assert "identical circuits" in r.output and "proved by" not in r.output


def test_a_rerun_never_replaces_the_file(tmp_path, monkeypatch):
    """Without -o a diff goes into the current directory, never over a
    file that is there (and never into results/: regen's to write)."""
    monkeypatch.chdir(tmp_path)
    first = run(["diff", "volta", "ampere"])
    second = run(["diff", "volta", "ampere"])
    assert first.exit_code == second.exit_code == 0
    files = sorted(p.name for p in tmp_path.iterdir())
    name = "diff-volta-fp16-fp32--ampere-fp16-fp32"
    assert files == [f"{name}-2.json", f"{name}.json"]
    assert "written to diff-volta-fp16-fp32--ampere-fp16-fp32-2.json" in second.output
    explicit = run(["diff", "volta", "ampere", "-o", files[1]])
    assert explicit.exit_code == 2 and "--force" in explicit.output and explicit.output.count("\n") == 1
    assert run(["diff", "volta", "ampere", "-o", files[1], "--force"]).exit_code == 0


def test_the_same_model_twice_gets_unique_ids():
    hs = api.comparison("ampere", "ampere", "ampere", set_b=["carry_bits=3"])
    assert len({h.id for h in hs}) == 3


def test_outside_the_validated_inputs_is_noted():
    """The mixed-format fp8 wgmma models were recorded only with c = 0; the
    same-format ones were checked with c != 0 too (H200), unless a
    parameter is changed."""
    mixed = choose("hopper-e4m3-e5m2-fp32")
    one = {"hex": "0x38", "decimal": "1"}
    vec = lambda c: {"a": [one], "b": [one], "c": {"hex": "", "decimal": c}}  # noqa: E731
    notes = outside_notes([mixed, choose("hopper-e4m3-fp32-mma")], [vec("0"), vec("2")])
    assert len(notes) == 1 and "hopper-e4m3-e5m2-fp32 " in notes[0] and "--c-sign zero" in notes[0]
    assert "vector(s) 1 " in notes[0]
    assert outside_notes([mixed], [vec("0"), vec("-0")]) == []
    same = choose("hopper-e4m3-fp32")
    assert outside_notes([same], [vec("0"), vec("2")]) == []
    changed = outside_notes([same.replace(carry_bits=2)], [vec("0"), vec("2")])
    assert len(changed) == 1 and changed[0].startswith("hopper-e4m3-fp32 was validated only with c = 0")


def test_the_note_reaches_the_document():
    doc = api.diff("hopper-e4m3-e5m2-fp32", "hopper-e4m3-e5m2-fp32", set_b=["final_rounding=rne"],
                   timeout=60)
    c_zero = all(v["c"]["decimal"] in ("0", "-0") for v in doc["vectors"])
    assert doc["verdict"] == "sat" and bool(doc["run"]["notes"]) == (not c_zero)
    doc = api.diff("hopper-e4m3-e5m2-fp32", "hopper-e4m3-e5m2-fp32", set_b=["final_rounding=rne"],
                   domain=make_domain(c="zero"), timeout=60)
    assert doc["verdict"] == "sat" and doc["run"]["notes"] == []


def test_avoiding_leaves_out_the_earlier_vectors():
    p = choose("volta")
    v = Vector((0x3C00,), (0x3C00,), 0)
    d = avoiding(make_domain(), [v], c_too=True)
    assert not d.contains(p.fin, p.fc, [0x3C00], [0x3C00], 0x3F800000)      # same products
    assert not d.contains(p.fin, p.fc, [0x4000], [0x3C00], 0)               # same c
    assert d.contains(p.fin, p.fc, [0x4000], [0x3C00], 0x3F800000)
    assert d.describe() == make_domain().describe()
    json.dumps(d.describe())
