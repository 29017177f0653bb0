"""The JSON Schemas of tcsmt's files (tcsmt/schemas): every committed file
matches its schema, the schemas are sound and cannot drift from the code,
and the writers refuse a document that breaks its schema while the tests
run (tests/conftest.py sets TCSMT_CHECK_SCHEMAS=1)."""

from __future__ import annotations

import json
import tomllib

import pytest
from checkout import ROOT
from jsonschema import Draft202012Validator

from tcsmt import schemas
from tcsmt.errors import BadFile, InternalError
from tcsmt.fileio import write_json_atomic

JSON_FILES = sorted(
    [p for p in (ROOT / "results").rglob("*.json") if ".cache" not in p.parts]
    + list((ROOT / "queries" / "suites").glob("*.json"))
    + list((ROOT / "docs").glob("*.json"))
    + list((ROOT / "tests" / "golden").glob("*.json")))
MODEL_FILES = sorted((ROOT / "models").glob("*.toml"))
SPACE_FILES = sorted(list((ROOT / "results" / "plans").glob("*.toml"))
                     + list((ROOT / "benchmarks").glob("*.toml")))


def _rel(path) -> str:
    return str(path.relative_to(ROOT))


def test_every_committed_file_matches_its_schema():
    """Every JSON file under results/ (results, plans, observations and
    identification reports under results/hardware/, the MMA-Sim agreement
    table, coverage and compare files), the suites, the docs' and the
    golden JSON; every model file and every space file (TOML, their parsed
    form)."""
    assert len(JSON_FILES) > 400 and len(MODEL_FILES) > 200 and len(SPACE_FILES) >= 4
    bad, seen = [], {}
    for path in JSON_FILES:
        doc = json.loads(path.read_text(encoding="utf-8"))
        name = schemas.name_for(doc)
        seen[name] = seen.get(name, 0) + 1
        found = "names no schema" if name is None else schemas.problem(doc, name)
        if found:
            bad.append(f"{_rel(path)}: {found}")
    for paths, name in ((MODEL_FILES, "model"), (SPACE_FILES, "space")):
        for path in paths:
            found = schemas.problem(tomllib.loads(path.read_text(encoding="utf-8")), name)
            if found:
                bad.append(f"{_rel(path)}: {found}")
    assert not bad, "\n".join(bad)
    assert {"result", "plan", "observations", "identification", "agreement", "coverage", "compare",
            "suite", "error"} <= set(seen)


def test_every_schema_is_a_sound_draft_2020_12_schema_with_an_id_and_a_title():
    assert len(schemas.names()) >= 17
    for name in schemas.names():
        s = schemas.load(name)
        Draft202012Validator.check_schema(s)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert s["$id"] == f"urn:tcsmt:schema:{name}", name
        assert s["title"] and s["description"], name


def test_the_model_schema_is_generated_from_modelparams_and_the_choices():
    """A new parameter or choice changes the generated schema; the shipped
    file must then be written again (python -m tcsmt.model.fileschema)."""
    from tcsmt.model.choices import CHOICES
    from tcsmt.model.fileschema import model_schema
    from tcsmt.model.params import FIELD_NAMES
    shipped = schemas.load("model")
    assert shipped == model_schema(), "run: python -m tcsmt.model.fileschema"
    assert set(shipped["properties"]) == {"base", *FIELD_NAMES}
    for key, values in CHOICES.items():
        assert shipped["$defs"][f"value-{key}"]["enum"] == list(values)


def test_the_enums_of_the_schemas_are_those_of_the_code():
    from tcsmt.cases.suite_file import DEVICE_ARCH, RELATION_OPS
    from tcsmt.enums import PairVerdict, Status, Verdict
    from tcsmt.identify.report import CLASS_STATUS
    from tcsmt.model.choices import SPARSITIES
    from tcsmt.report.results import SOLVER_PACKAGES
    common = schemas.load("common")["$defs"]
    assert common["sparsity"]["enum"] == list(SPARSITIES)
    assert common["verdict"]["enum"] == list(Verdict)
    assert common["solver_status"]["enum"] == list(Status)
    assert common["pair_verdict"]["enum"] == list(PairVerdict)
    assert common["solvers"]["propertyNames"]["enum"] == sorted(SOLVER_PACKAGES)
    plan = schemas.load("plan")["properties"]["classes"]["items"]["properties"]["status"]
    assert plan["enum"] == list(CLASS_STATUS)
    claim = schemas.load("suite")["properties"]["vectors"]["items"]["properties"]["claims"]["items"]
    assert claim["properties"]["expected"]["propertyNames"]["enum"] == list(DEVICE_ARCH)
    assert claim["properties"]["relation"]["properties"]["op"]["enum"] == list(RELATION_OPS)


def test_every_document_tcsmt_writes_names_a_shipped_schema():
    """The "schema" value of every document kind finds its schema file."""
    from tcsmt.accuracy import error
    from tcsmt.cases import compare, coverage, suite_file
    from tcsmt.identify import loop, plan, report, verdict
    from tcsmt.judge import check, conformance
    from tcsmt.observed import observations
    from tcsmt.peer import agreement
    from tcsmt.report import results
    modules = (error, compare, coverage, suite_file, plan, report, loop, verdict, check, conformance,
               observations, agreement, results)
    found = {m.__name__: schemas.name_for({"schema": m.SCHEMA}) for m in modules}
    assert None not in found.values(), found
    assert len(set(found.values())) == len(modules)


def test_a_document_that_breaks_its_schema_is_one_line_naming_the_place():
    doc = json.loads((ROOT / "results" / "ampere" / "rounding.json").read_text(encoding="utf-8"))
    schemas.check(doc, where="rounding.json")
    doc["vectors"][0]["a"][1]["hex"] = "3c00"
    with pytest.raises(BadFile) as e:
        schemas.check(doc, where="rounding.json")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("rounding.json: does not match the result schema: ")
    assert "$.vectors[0].a[1].hex" in msg and "'3c00'" in msg
    with pytest.raises(BadFile, match="not a document tcsmt reads"):
        schemas.check({"schema": "tcsmt-result/9"}, where="x.json")


def test_the_writer_refuses_what_breaks_its_schema_and_leaves_the_file_alone(tmp_path, monkeypatch):
    """While the tests run, write_json_atomic checks each document: a bad
    one is an InternalError (a bug of tcsmt's), the file is not touched; a
    document of no known schema is refused too. Unset, nothing is checked."""
    path = tmp_path / "out.json"
    path.write_text("old\n")
    bad = {"schema": "tcsmt-error/1", "m": 0}
    with pytest.raises(InternalError, match="breaks the error schema"):
        write_json_atomic(path, bad)
    with pytest.raises(InternalError, match="no known schema"):
        write_json_atomic(path, {"rows": []})
    assert path.read_text() == "old\n"
    write_json_atomic(path, {"a": "0" * 64}, schema="regen-cache")
    monkeypatch.setenv(schemas.CHECK_ENV, "0")
    write_json_atomic(path, bad)
    assert json.loads(path.read_text()) == bad


def test_the_formats_page_shows_every_schema():
    """docs/formats.md is what tcsmt.schemas.page writes: a section per
    format with its schema's text (python -m tcsmt.schemas.page)."""
    from tcsmt.schemas.page import markdown
    page = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert page == markdown(), "run: python -m tcsmt.schemas.page docs/formats.md"
    for name in schemas.names():
        assert (schemas.FOLDER / f"{name}.schema.json").read_text(encoding="utf-8").strip() in page
