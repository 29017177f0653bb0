"""The published test suites as data (queries/suites/*.json, tcsmt.cases.suites).

Every shipped suite loads and is what its builder writes. Every published
expectation (a device's output, or a published order between two outputs)
is run through the shipped model of its device, and exactly the
expectations listed in KNOWN_WRONG disagree, each for the reason given.
Malformed suite files give one-line errors naming the file and the key.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest

from tcsmt.cases.suites import (
    Formats,
    check_suite,
    claims,
    evaluate,
    find_suite,
    list_suites,
    load_suite,
    parse_exact,
    suite_from_dict,
    suites_dir,
    vector_inputs,
)
from tcsmt.errors import UserError
from tcsmt.model.formats import get_format
from tcsmt.sim.dot import dot_bits, model, to_bits

SHIPPED = ["fasi-a100", "fasi-t4", "fasi-v100", "khattak-mikaitis"]

# Published expectations the shipped models contradict, with the reason.
# (suite, vector id, device, "expected" or "relation") -> reason
KNOWN_WRONG = {
    ("fasi-t4", "fp16-fp32.monotonic-paper-c1", "T4", "relation"):
        "the paper's monotonicity pair (c = 1 - 2^-24 gives 1 + 2^-23, c = 1 gives 1) was "
        "measured on V100 and its claim extended to T4; T4 keeps one more alignment bit, so "
        "with c = 1 the four 2^-24 products survive and d = 1 + 2^-22 > 1 + 2^-23",
    ("fasi-a100", "fp16-fp32.monotonic-paper-c1", "A100", "relation"):
        "as for T4: the A100 keeps one more alignment bit than V100, so with c = 1 the four "
        "2^-24 products survive and d = 1 + 2^-22 > 1 + 2^-23: the pair is monotonic there",
}


@pytest.fixture(scope="module")
def suites():
    return {name: find_suite(name) for name in list_suites()}


def test_every_shipped_suite_loads(suites):
    assert sorted(suites) == SHIPPED
    for name, s in suites.items():
        assert s.name == name and s.vectors and s.source
        assert all(v.claims for v in s.vectors), name


def test_shipped_files_are_what_the_builder_writes():
    from tcsmt.queries.suites._build import all_suites, dumps
    built = all_suites()
    assert sorted(built) == SHIPPED
    for name, data in built.items():
        text = (suites_dir() / f"{name}.json").read_text(encoding="utf-8")
        assert text == dumps(data) + "\n", f"{name}.json is stale: run python -m tcsmt.queries.suites._build"


def test_vector_counts(suites):
    # V100: 5 binary16-output and 24 binary32-output vectors; T4 adds the
    # programs' monotonicity pair, the paper's pair and its text example;
    # A100: the T4 binary16 set plus bfloat16 and TensorFloat-32 groups.
    counts = {name: len(s.vectors) for name, s in suites.items()}
    assert counts == {"fasi-v100": 29, "fasi-t4": 32, "fasi-a100": 81, "khattak-mikaitis": 218}
    groups = {v.group for v in suites["fasi-a100"].vectors}
    assert groups == {"fp16-fp32", "fp16-fp16", "bf16-fp32", "tf32-fp32"}


@pytest.mark.parametrize("name", SHIPPED)
def test_published_expectations_against_the_shipped_models(suites, name):
    results = check_suite(suites[name])
    assert results
    wrong = {(name, r.vector.id, r.device, r.kind): r for r in results if not r.holds}
    known = {k for k in KNOWN_WRONG if k[0] == name}
    detail = "; ".join(f"{k[1]} on {k[2]} ({r.model}): paper {r.want}, model {r.got}"
                       for k, r in wrong.items() if k not in known)
    assert set(wrong) == known, detail or f"expected to disagree but agree: {known - set(wrong)}"


def test_every_device_of_the_papers_is_checked(suites):
    devices = {name: {r.device for r in check_suite(s)} for name, s in suites.items()}
    assert devices == {"fasi-v100": {"V100"}, "fasi-t4": {"T4"}, "fasi-a100": {"A100"},
                       "khattak-mikaitis": {"RTX 3060", "RTX 1000 Ada"}}


def test_turing_block_size_is_not_told_apart(suites):
    """T4's block size is disputed (4 or 8): with 4, the T4 suite gives the
    same outputs, so the same expectations hold and fail."""
    eight = check_suite(suites["fasi-t4"])
    four = check_suite(suites["fasi-t4"], overrides={"T4": {"block_size": 4}})
    assert [(r.vector.id, r.got, r.holds) for r in eight] == [(r.vector.id, r.got, r.holds) for r in four]
    assert {r.model for r in four} == {"turing-fp16-fp32[block_size=4]", "turing-fp16-fp16[block_size=4]"}


def test_expectations_can_fail(suites):
    """Without A100's extra alignment bit the vectors that reveal it fail:
    the check is not vacuous."""
    results = check_suite(suites["fasi-a100"], overrides={"A100": {"align_bits": 0}})
    failing = {r.vector.id for r in results if not r.holds}
    assert {"fp16-fp32.align-bits", "bf16-fp32.align-bits", "tf32-fp32.align-bits",
            "fp16-fp32.normalise-subtract"} <= failing
    assert "fp16-fp32.monotonic-paper-c1" not in failing      # V100-like: the paper's claim holds
    # blocks of 4 on the RTX 3060: Algorithm 1's first step fails from k = 5
    # (the sums of two blocks are rounded), which Table I's N_FMA = 8 rules out
    km = check_suite(suites["khattak-mikaitis"], overrides={"RTX 3060": {"block_size": 4}})
    assert {r.vector.id for r in km if not r.holds and r.device == "RTX 3060"} == {
        f"{g}.alg1-size-k{k}-{sign}" for g in ("fp16-fp32", "bf16-fp32")
        for k in (5, 6, 7, 8) for sign in ("pos", "neg")}


def test_claims_yields_every_vector_claim_pair(suites):
    s = suites["fasi-v100"]
    pairs = list(claims(s))
    assert len(pairs) == sum(len(v.claims) for v in s.vectors)
    assert all(cl in v.claims for v, cl in pairs)
    params = {cl.parameter for _, cl in pairs}
    assert {"align_bits", "normalisation", "carry_bits", "final_rounding", "align_rounding",
            "subnormals", "product_rounding", "add_order"} <= params


def test_the_a100_extra_bit_vector(suites):
    """The vector the brief names: c = -(1 - 2^-24), one product 1 gives
    2^-23 on V100 and 2^-24 on A100, and the hex is the published value."""
    v = suites["fasi-v100"].vector("fp16-fp32.align-bits")
    w = suites["fasi-a100"].vector("fp16-fp32.align-bits")
    assert v.c.bits == w.c.bits == 0xBF7FFFFF
    assert v.claims[0].expected["V100"].bits == 0x34000000
    assert w.claims[0].expected["A100"].bits == 0x33800000


def test_vector_inputs_in_own_and_other_formats(suites):
    v = suites["fasi-v100"].vector("fp16-fp32.products-exact-4")
    a, b, c = vector_inputs(v)
    assert a == b == [0x3BFF] * 4 and c == 0
    # the same exact values in bfloat16 do not fit: 1 - 2^-11 needs 11 bits
    with pytest.raises(UserError, match="not exactly representable in bfloat16"):
        vector_inputs(v, {"in": "bf16", "c": "fp32"})
    w = suites["fasi-v100"].vector("fp16-fp32.align-bits")
    a, b, c = vector_inputs(w, model("ampere-tf32-fp32"))
    assert a[0] == to_bits(get_format("tf32"), 1) and c == 0xBF7FFFFF


def test_evaluate_runs_the_vectors_in_the_model_formats(suites):
    s = suites["fasi-a100"]
    p = model("ampere-bf16-fp32")
    out = evaluate(s, p)
    assert set(out) == {v.id for v in s.vectors if v.group == "bf16-fp32"}
    v = s.vector("bf16-fp32.align-bits")
    assert out[v.id].bits == dot_bits(p, *vector_inputs(v)) == 0x33800000
    with pytest.raises(UserError, match="no vector in"):
        evaluate(s, "hopper-e4m3-fp32")


def test_parse_exact():
    assert parse_exact("1 - 2^-24") == 1 - Fraction(1, 1 << 24)
    assert parse_exact("-(2^-23 + 2^-24)") == -Fraction(3, 1 << 24)
    assert parse_exact("4*(1 - 2^-10 + 2^-22)") == 4 * (1 - Fraction(1, 1024) + Fraction(1, 1 << 22))
    assert parse_exact("-2^-24") == -Fraction(1, 1 << 24)
    assert parse_exact("1.875") == Fraction(15, 8)
    for bad in ("", "1 +", "2^0.5", "(1", "1 2", "x"):
        with pytest.raises(ValueError):
            parse_exact(bad)


# ---------------------------------------------------------------------------
# Malformed files: one-line errors naming the file and the key
# ---------------------------------------------------------------------------

def _small() -> dict:
    return {"schema": "tcsmt-suite/1", "name": "t", "source": "s", "k": 1,
            "formats": {"in": "float16", "c": "float32", "out": "float32"},
            "vectors": [
                {"id": "one", "description": "d",
                 "a": [{"hex": "0x3c00", "value": "1"}], "b": [{"hex": "0x3c00", "value": "1"}],
                 "c": {"hex": "0xbf7fffff", "value": "-(1 - 2^-24)"},
                 "claims": [{"feature": "f", "parameter": "align_bits", "reveals": "r",
                             "expected": {"V100": {"hex": "0x34000000", "value": "2^-23"}}}]},
                {"id": "two", "description": "d",
                 "a": [{"hex": "0x3c00", "value": "1"}], "b": [{"hex": "0x3c00", "value": "1"}],
                 "c": {"hex": "0x00000000", "value": "0"},
                 "claims": [{"feature": "f", "parameter": "normalisation", "reveals": "r",
                             "relation": {"op": ">", "vector": "one", "devices": ["V100"]}}]}]}


def _set(path, value):
    def edit(d):
        *head, last = path
        for key in head:
            d = d[key]
        if value is KeyError:
            del d[last]
        else:
            d[last] = value
    return edit


MALFORMED = [
    ("schema", _set(["schema"], "tcsmt-suite/2"), "schema"),
    ("no vectors", _set(["vectors"], []), "vectors"),
    ("unknown top key", _set(["vector"], []), "vector"),
    ("bad format", _set(["formats", "in"], "float17"), "formats.in"),
    ("hex and value disagree", _set(["vectors", 0, "c", "value"], "-(1 - 2^-23)"),
     "vectors[0] (one).c.value"),
    ("hex too wide", _set(["vectors", 0, "a", 0, "hex"], "0x13c00"), "vectors[0] (one).a[0].hex"),
    ("not hex", _set(["vectors", 0, "b", 0, "hex"], "3c00"), "vectors[0] (one).b[0].hex"),
    ("value not a number", _set(["vectors", 0, "b", 0, "value"], "one"), "vectors[0] (one).b[0].value"),
    ("wrong decimal", _set(["vectors", 0, "a", 0, "decimal"], "1.0"), "vectors[0] (one).a[0].decimal"),
    ("k mismatch", _set(["k"], 2), "vectors[0] (one).a"),
    ("missing c", _set(["vectors", 0, "c"], KeyError), "vectors[0] (one).c"),
    ("missing description", _set(["vectors", 0, "description"], KeyError), "vectors[0] (one).description"),
    ("duplicate id", _set(["vectors", 1, "id"], "one"), "vectors[1].id"),
    ("bad id", _set(["vectors", 1, "id"], "Two words"), "vectors[1].id"),
    ("unknown device", _set(["vectors", 0, "claims", 0, "expected", "V101"],
                            {"hex": "0x0", "value": "0"}), "vectors[0] (one).claims[0].expected.V101"),
    ("expected in wrong format", _set(["vectors", 0, "claims", 0, "expected", "V100", "hex"], "0x0400"),
     "vectors[0] (one).claims[0].expected.V100.value"),
    ("unknown parameter", _set(["vectors", 0, "claims", 0, "parameter"], "extra_bits"),
     "vectors[0] (one).claims[0].parameter"),
    ("no claims", _set(["vectors", 0, "claims"], []), "vectors[0] (one).claims"),
    ("unknown claim key", _set(["vectors", 0, "claims", 0, "expect"], {}),
     "vectors[0] (one).claims[0].expect"),
    ("relation to nothing", _set(["vectors", 1, "claims", 0, "relation", "vector"], "three"),
     "vectors[1] (two).claims[0].relation.vector"),
    ("relation op", _set(["vectors", 1, "claims", 0, "relation", "op"], ">="),
     "vectors[1] (two).claims[0].relation.op"),
    ("relation devices", _set(["vectors", 1, "claims", 0, "relation", "devices"], []),
     "vectors[1] (two).claims[0].relation.devices"),
]


def test_the_small_suite_is_well_formed():
    s = suite_from_dict(_small(), "small.json")
    assert [v.id for v in s.vectors] == ["one", "two"]
    # V100 gives 2^-23 for one, and 1 > 2^-23 for two; flipping the order fails
    assert [r.holds for r in check_suite(s)] == [True, True]
    data = _small()
    data["vectors"][1]["claims"][0]["relation"]["op"] = "<"
    assert [r.holds for r in check_suite(suite_from_dict(data, "small.json"))] == [True, False]


@pytest.mark.parametrize("what,edit,key", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_suite_gives_one_line_error(tmp_path, what, edit, key):
    data = copy.deepcopy(_small())
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        load_suite(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: key '{key}'"), msg


def test_unreadable_and_invalid_json(tmp_path):
    with pytest.raises(UserError, match="cannot read"):
        load_suite(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "tcsmt-suite/1",')
    with pytest.raises(UserError) as info:
        load_suite(bad)
    assert str(info.value).startswith(f"{bad}: not JSON: line 1") and "\n" not in str(info.value)
    with pytest.raises(UserError, match="unknown suite 'fasi-h100'"):
        find_suite("fasi-h100")


def test_formats_record():
    f = Formats(get_format("fp16"), get_format("fp32"), get_format("fp32"))
    assert f.matches(model("volta-fp16-fp32")) and not f.matches(model("volta-fp16-fp16"))
