"""Everything committed under results/ replays on the concrete models, and
every shipped architecture, and every model regen covers beside them,
has its files (or a stated reason for none)."""

import json
from pathlib import Path

import pytest

from tcsmt.cases.compare import replay_compare
from tcsmt.cases.coverage import replay_coverage
from tcsmt.errors import UserError
from tcsmt.model.catalogue import architectures
from tcsmt.properties.registry import all_properties
from tcsmt.properties.run import resolve_base, result_path
from tcsmt.regen.jobs import MODELS
from tcsmt.report.results import SCHEMA, replay

ROOT = Path(__file__).resolve().parent.parent / "results"
RESULT_FILES = sorted(p for p in ROOT.glob("*/*.json")
                      if json.loads(p.read_text()).get("schema") == SCHEMA)


def test_there_are_result_files():
    assert len(RESULT_FILES) >= len(architectures()) * 10


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_result_file_replays(path):
    report = replay(path)
    assert report.vectors == len(json.loads(path.read_text())["vectors"])
    assert not report.problems, report.problems


@pytest.mark.parametrize("arch", architectures() + list(MODELS))
def test_every_applicable_property_has_a_file(arch):
    missing = []
    for name, prop in all_properties().items():
        try:
            base = resolve_base(prop, arch)
        except UserError:
            continue                      # does not apply: regen reports the reason
        if not result_path(base, prop, ROOT).exists():
            missing.append(name)
    assert not missing, f"{arch}: no results for {missing} (run tcsmt regen {arch})"


@pytest.mark.parametrize("path", sorted((ROOT / "compare-algorithms").glob("*.json")),
                         ids=lambda p: p.stem)
def test_compare_algorithms_file_replays(path):
    assert replay_compare(path) == []


@pytest.mark.parametrize("path", sorted((ROOT / "coverage").glob("*.json")), ids=lambda p: p.stem)
def test_coverage_file_replays(path):
    assert replay_coverage(path) == []
