"""The seed paper's case studies: compare-algorithms (Markidis et al. against
Ootomo-Yokota on the tensor-core models) and coverage of published suites.

Real solvers, real models: the Table 5 outcome is asked for and must be
found and replay; the coverage report must name the wrong A100 expectation
and the vector that settles it; generated gap vectors must replay. The
slow tests run every architecture and every suite with gap closing.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
from cli_run import run
from model_sample import distinct

from tcsmt.cases import algorithms as al
from tcsmt.cases import compare as cp
from tcsmt.cases import coverage as cv
from tcsmt.errors import UserError, WitnessError
from tcsmt.interp.ints import INT
from tcsmt.model.choose import choose

VOLTA = choose("volta", "fp16:fp32")


def f32(x) -> int:
    return al.F32.round_value(Fraction(x), "rne")


# ---------------------------------------------------------------------------
# The methods on concrete values
# ---------------------------------------------------------------------------

def _fp16_sample():
    rng = random.Random(7)
    vals = [0, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF]
    for e in range(1, 31):
        for sign in (0, 0x8000):
            vals += [sign | (e << 10) | f for f in (0, 1, 0x3FF, rng.randrange(1024))]
    return vals


def test_binary16_inputs_split_exactly():
    """The 'half' formulation's lemma: a binary16 value's split is (x, +0),
    for both methods' scalings."""
    s = al.setup(VOLTA)
    for h in _fp16_sample():
        x32 = al.round_to(INT, s, al.term(INT, s, al.F16, INT.const(h, 16)), al.F32)
        for scale in (0, al.SCALE_BITS):
            x16, r = al.split(INT, s, x32, scale)
            assert (x16.v, r.v) == (h, 0), hex(h)


def test_split_of_a_binary32_value():
    """1 + 2^-12 + 2^-20: binary16's 10 fraction bits keep 1, the residual
    2^-12 + 2^-20 is exact in binary16 and, scaled by 2^11, is 1/2 + 2^-9."""
    s = al.setup(VOLTA)
    x = INT.const(f32(1 + Fraction(1, 2**12) + Fraction(1, 2**20)), 32)
    x16, r = al.split(INT, s, x, 0)
    assert al.F16.value(x16.v) == 1 and al.F16.value(r.v) == Fraction(1, 2**12) + Fraction(1, 2**20)
    _, r11 = al.split(INT, s, x, al.SCALE_BITS)
    assert al.F16.value(r11.v) == Fraction(1, 2) + Fraction(1, 2**9)


def test_exact_inputs_give_exact_results():
    """Products and sums exact in binary32: both methods give the true value."""
    a, b = [f32(1.5), f32(2), 0, 0], [f32(0.25), f32(-0.5), 0, 0]
    ev = al.evaluate(VOLTA, a, b, f32(3))
    assert ev.true == Fraction(3) + Fraction(3, 8) - 1
    assert all(al.F32.value(r) == ev.true for r in ev.results.values())
    assert not ev.worse_by_vocabulary
    with pytest.raises(WitnessError, match="not less accurate"):
        cp.check_witness(VOLTA, a, b, f32(3))


def test_witness_outside_the_domain_is_refused():
    with pytest.raises(WitnessError, match="outside the domain"):
        cp.check_witness(VOLTA, [f32(2**20), 0, 0, 0], [f32(1), 0, 0, 0], 0)


def test_solver_evaluates_the_definition_as_python_does():
    """Concrete equals symbolic: binary32 inputs with non-zero residuals
    through both methods and the error comparison, on Bitwuzla and in
    Python ints, give the same bits."""
    from tcsmt.smt import service
    from tcsmt.smt.smtlib import build_formula
    a = [f32(1 + Fraction(1, 2**12) + Fraction(1, 2**20)), f32(Fraction(-33, 10)), f32(0.7), 0]
    b = [f32(Fraction(5, 3)), f32(0.375 + 2**-17), f32(-1.1), f32(2)]
    c = f32(Fraction(1, 10))
    ev = al.evaluate(VOLTA, a, b, c)
    s = al.setup(VOLTA)

    def build(I):
        A, B, C = [I.const(x, 32) for x in a], [I.const(y, 32) for y in b], I.const(c, 32)
        m, o = al.markidis(I, s, A, B, C), al.ootomo_yokota(I, s, A, B, C)
        terms = al.exact_terms(I, s, *al.inputs32(I, s, A, B), C)
        worse = al.ootomo_worse(I, s, terms, m, o)
        return [I.eq(I.var("m", 32), m), I.eq(I.var("o", 32), o),
                I.eq(I.var("w", 1), I.ite(worse, I.const(1, 1), I.const(0, 1)))]

    ans = service.solve(build_formula(build, description="concrete equals symbolic"), "bitwuzla", 60)
    assert ans.status == "sat"
    assert ans.values["m"] == ev.results["markidis"] and ans.values["o"] == ev.results["ootomo-yokota"]
    assert ans.values["w"] == int(ev.worse_by_vocabulary)
    assert abs(al.F32.value(ev.results["markidis"]) - ev.true) < Fraction(1, 2**18)


# ---------------------------------------------------------------------------
# The query: Table 5 on Volta
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def table5(tmp_path_factory):
    doc = cp.run_compare("volta", 4, timeout=120, reproduce=True)
    path = tmp_path_factory.mktemp("cmp") / "volta.json"
    cp.write(path, doc)
    return doc, path


def test_table5_outcome_is_reproduced_on_volta(table5):
    doc, _ = table5
    assert doc["verdict"] == "sat" and doc["run"]["seconds"] < 120
    v = doc["vectors"][0]
    assert Fraction(v["true"]["exact"]) == 1 + Fraction(1, 2**23)
    assert v["outputs"]["markidis"]["hex"] == "0x3f800001"          # 1 + 2^-23
    assert v["outputs"]["ootomo-yokota"]["hex"] == "0x3f800000"     # 1
    assert v["less_accurate"] == "ootomo-yokota"
    assert v["true"]["binary64"]["hex"] == "0x3ff0000020000000"     # the fp64 reference agrees
    a = [int(x["hex"], 16) for x in v["a"]]
    b = [int(y["hex"], 16) for y in v["b"]]
    assert al.DOMAIN.contains(al.F32, al.F32, a, b, int(v["c"]["hex"], 16))


def test_table5_file_replays_and_a_tampered_one_does_not(table5, tmp_path):
    doc, path = table5
    assert cp.replay_compare(path) == []
    bad = json.loads(path.read_text())
    bad["vectors"][0]["outputs"]["ootomo-yokota"]["hex"] = "0x3f800001"
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(bad))
    assert any("outputs" in x for x in cp.replay_compare(p))
    p.write_text(json.dumps({**bad, "schema": "tcsmt-result/1"}))
    with pytest.raises(UserError, match="schema"):
        cp.replay_compare(p)


def test_cli_compare_algorithms(tmp_path):
    out = tmp_path / "c.json"
    r = run(["compare-algorithms", "markidis", "ootomo-yokota", "--arch", "volta", "--reproduce",
             "-o", out])
    assert r.exit_code == 0, r.output
    assert "ootomo-yokota  1 (0x3f800000)" in r.output and "markidis" in r.output
    assert "yes: Ootomo-Yokota is less accurate" in r.output
    assert json.loads(out.read_text())["verdict"] == "sat"


def test_cli_compare_algorithms_errors():
    r = run(["compare-algorithms", "markidis", "strassen", "--arch", "volta"])
    assert r.exit_code == 2 and "the methods are markidis and ootomo-yokota" in r.output
    with pytest.raises(UserError, match="unknown architecture"):
        cp.arch_model("pascal")
    with pytest.raises(ValueError, match="not an fp16-input, fp32-accumulate model"):
        al.setup(choose("hopper", "e4m3:fp32"))


ARITHMETICS = distinct([cp.arch_model(m.arch) for m in cp.fp16_fp32_models()])


@pytest.mark.slow
@pytest.mark.parametrize("arch", [m.arch for m in ARITHMETICS])
def test_every_architecture_answers(arch):
    """One architecture of each distinct fp16 -> fp32 arithmetic (9 of 13:
    Ampere and Turing compute as Ada, Hopper and Blackwell Ultra as
    Blackwell): architectures whose models' parameters are equal build one
    formula, so one of them is the same check of the others."""
    doc = cp.run_compare(arch, 4, timeout=280)
    assert doc["verdict"] == "sat" and doc["run"]["seconds"] < 300
    assert doc["vectors"][0]["less_accurate"] == "ootomo-yokota"


# ---------------------------------------------------------------------------
# Coverage
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def a100():
    return cv.run_coverage("fasi-a100", generate=False)


def test_coverage_names_the_wrong_a100_expectation(a100):
    failing = a100["expectations"]["failing"]
    assert [(f["vector"], f["device"], f["kind"]) for f in failing] == [
        ("fp16-fp32.monotonic-paper-c1", "A100", "relation")]
    f = failing[0]
    assert f["paper"] == "d < d(fp16-fp32.normalise-add)" and f["settled"]
    alt = {json.dumps(a["differs"]): a for a in f["would_hold_under"]}
    settle = alt[json.dumps({"align_bits": [1, 0]})]["settled_by"]
    assert settle[0]["vector"] == "fp16-fp32.align-bits"
    assert settle[0]["published"].startswith("0x33800000")      # 2^-24 on the A100
    assert settle[0]["hypothesis_gives"].startswith("0x34000000")  # 2^-23 without the bit


def test_coverage_counts_and_claims(a100):
    s = a100["summary"]
    assert s["vectors"] == 81 and s["spaces"] == 4
    assert s["expectations"] == 81 and s["expectations_holding"] == 80
    assert s["pairs_separated"] + s["pairs_unseparated"] == s["pairs"] > 0
    rows = {(c["vector"], c["device"]): c for c in a100["claims"]}
    assert rows[("fp16-fp32.align-bits", "A100")]["status"] == "holds"
    assert any("align-bits:" in p for p in rows[("fp16-fp32.align-bits", "A100")]["separated"])
    ids = {v["id"]: v for v in a100["suite_vectors"]}
    assert "align-bits:0~1" in ids["fp16-fp32.align-bits"]["separates"]["fp16-fp32@A100"]


def test_v100_suite_has_no_wrong_expectation():
    doc = cv.run_coverage("fasi-v100", space="align-bits,normalisation", generate=False)
    assert doc["expectations"]["failing"] == []
    assert [q["name"] for q in doc["spaces"][0]["questions"]] == ["align-bits", "normalisation"]


def test_gap_vectors_close_pairs_and_replay(tmp_path):
    doc = cv.run_coverage("fasi-v100", space="final-rounding,block-size", timeout=10, budget=100)
    assert doc["summary"]["pairs_unseparated"] > 0
    assert doc["summary"]["gaps_closed"] > 0 and doc["vectors"]
    for u in doc["unseparated"]:
        assert u["status"] in ("closed", "inseparable", "unknown")
    path = tmp_path / "cov.json"
    cv.write(path, doc)
    assert cv.replay_coverage(path) == []
    doc["vectors"][0]["separates"] = []
    path.write_text(json.dumps(doc))
    assert cv.replay_coverage(path)


def test_cli_coverage(tmp_path):
    out = tmp_path / "cov.json"
    r = run(["coverage", "fasi-t4", "--no-generate", "-o", out])
    assert r.exit_code == 0, r.output
    assert "WRONG: fp16-fp32.monotonic-paper-c1 on T4" in r.output
    assert "settled by fp16-fp32.align-bits" in r.output
    assert json.loads(out.read_text())["schema"] == cv.SCHEMA


def test_unknown_suite_and_property():
    with pytest.raises(UserError, match="unknown suite"):
        cv.run_coverage("fasi-h100", generate=False)
    with pytest.raises(UserError, match="unknown property"):
        cv.run_coverage("fasi-v100", space="carry-bitz", generate=False)


def test_regen_plans_the_case_studies(tmp_path):
    from tcsmt.regen import plan as regen_plan
    plan = regen_plan.plan_jobs(["volta"], None, 60.0, tmp_path)
    names = {j.name for j in plan.jobs}
    assert {"compare-algorithms/volta-k4", "compare-algorithms/volta-k4-reproduce",
            "coverage/fasi-v100"} <= names
    assert "coverage/fasi-a100" not in names and "compare-algorithms/ampere-k4" not in names
    job = next(j for j in plan.jobs if j.name == "compare-algorithms/volta-k4-reproduce")
    assert job.path == tmp_path / "compare-algorithms" / "volta-k4-reproduce.json"


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["fasi-v100", "fasi-t4", "fasi-a100", "khattak-mikaitis"])
def test_every_suite_with_gap_closing(suite, tmp_path):
    doc = cv.run_coverage(suite, timeout=10, budget=240)
    assert doc["run"]["seconds"] < 300
    path = tmp_path / "c.json"
    cv.write(path, doc)
    assert cv.replay_coverage(path) == []


def test_reproduce_says_what_it_shows():
    """--reproduce fixes the outputs to Table 5's values and asks for
    inputs: its help says a witness shows the outcome is possible on the
    model, not that the paper's finding is reproduced."""
    r = run(["compare-algorithms", "--help"])
    text = " ".join(r.output.split())
    assert r.exit_code == 0
    assert "Fix the outputs to the seed paper's Table 5 values" in text
    assert "possible on the model, not that the paper's inputs or finding are reproduced" in text
