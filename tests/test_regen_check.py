"""tcsmt regen --check: without a solver, every committed file the current
code would write differently is named, and nothing else is.

The checks run on a copy of volta's committed files (and the case studies
regen plans beside them): the copy is current, then each kind of change
makes exactly the file it touches stale."""

import dataclasses
import importlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_run import script

import tcsmt

ROOT = Path(__file__).resolve().parent.parent / "results"


@pytest.fixture(scope="module")
def volta_root(tmp_path_factory):
    """The committed files regen writes for volta, copied."""
    from tcsmt.regen.plan import plan_jobs
    root = tmp_path_factory.mktemp("results")
    for job in plan_jobs(["volta"], None, 60.0, ROOT).jobs:
        dest = root / job.path.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(job.path, dest)
    return root


@pytest.fixture
def root(volta_root, tmp_path):
    out = tmp_path / "results"
    shutil.copytree(volta_root, out)
    return out


def stale(root, props=()) -> dict[str, str]:
    doc = tcsmt.stale_results(["volta"], list(props), root=root)
    return {Path(s["path"]).relative_to(root).as_posix(): s["why"] for s in doc["stale"]}


def edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2))


def test_committed_files_are_current(root):
    assert stale(root) == {}


def test_a_changed_output_is_named(root):
    def change(doc):
        out = doc["vectors"][0]["outputs"]["rz"]
        out["hex"], out["decimal"] = "0x00000000", "0"
    edit(root / "volta" / "rounding.json", change)
    got = stale(root, ["rounding", "order"])
    assert list(got) == ["volta/rounding.json"] and "vectors" in got["volta/rounding.json"]


def test_a_changed_question_is_named(root, monkeypatch):
    """A change of the code that states the question (here a property's
    description) makes its file stale, and no other."""
    module = importlib.import_module("tcsmt.queries.rounding")
    monkeypatch.setattr(module, "PROPERTY", dataclasses.replace(module.PROPERTY,
                                                                description="a new description"))
    got = stale(root, ["rounding"])
    assert list(got) == ["volta/rounding.json"] and "query.description" in got["volta/rounding.json"]


def test_a_changed_model_parameter_is_named(root):
    def change(doc):
        doc["hypotheses"][0]["parameters"]["align_bits"] = 5
    edit(root / "volta" / "order.json", change)
    assert "hypotheses" in stale(root, ["order"])["volta/order.json"]


def test_a_witness_that_no_longer_holds_is_named(root):
    path = root / "volta" / "monotonicity.json"
    def change(doc):
        doc["vectors"][1] = doc["vectors"][0]        # y = x: f(x) > f(y) fails
    edit(path, change)
    assert "witness" in stale(root, ["monotonicity"])["volta/monotonicity.json"]


def test_missing_and_orphan_files_are_named(root):
    """A file regen writes that is not there, and a file in a folder regen
    writes that no query writes (checked for the whole plan only)."""
    from tcsmt.regen import check
    from tcsmt.regen.plan import plan_jobs
    (root / "volta" / "rounding.json").unlink()
    shutil.copy(root / "volta" / "order.json", root / "volta" / "no-such-property.json")
    plan = plan_jobs(["volta"], ["rounding", "order"], 60.0, root)
    names = {s.path.relative_to(root).as_posix(): s.why for s in check.check_plan(plan)}
    assert names["volta/rounding.json"].startswith("missing")
    assert names["volta/no-such-property.json"].startswith("orphan")
    assert "volta/order.json" not in names
    assert not any(p.startswith("volta/") for p in stale(root, ["order"]))   # narrowed: no orphans


def test_cli_exit_status_names_the_file(root):
    args = [script(), "regen", "volta", "--property", "block-size", "--check", "--root", str(root)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 stale" in r.stdout
    edit(root / "volta" / "block-size.json", lambda doc: doc["query"].update(k=99))
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "block-size.json" in r.stdout and "query.k" in r.stdout, r.stdout


def test_a_pair_listed_unknown_that_a_vector_of_the_file_separates_is_named(root):
    """The file's own vectors are replayed: a pair it lists as unknown (or
    as proved inseparable) that one of them separates makes it stale."""
    def change(doc):
        doc["pairs"].append({"pair": ["block", "sequential"], "verdict": "unknown", "same_as": None})
    edit(root / "volta" / "order.json", change)
    got = stale(root, ["order"])
    assert list(got) == ["volta/order.json"]
    assert "block|sequential is listed unknown" in got["volta/order.json"]


def test_regen_cross_checks_the_proofs_it_writes():
    """A property job proves each inseparable pair with a second solver:
    Volta's nan-inf hypotheses all agree, and the file says the proof was
    cross-checked, each solver named once."""
    from tcsmt.regen.jobs import run_property_job
    doc = run_property_job("nan-inf", "volta", 120.0, "portfolio")
    assert doc["verdict"] == "unsat" and doc["proof"]["cross_checked"]
    for pair in doc["run"]["pairs"]:
        if pair["proved_by"]:
            assert len(pair["proved_by"]) == len(set(pair["proved_by"])) >= 2
