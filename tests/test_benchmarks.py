"""Every benchmark has a --short mode, which .ci/run runs (each script
under benchmarks/ named bench_*.py, so one added later runs too): a
benchmark whose code rots fails CI, not its next reader."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def options(path: Path) -> set[str]:
    """The option strings of every add_argument call in a script."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            out |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return out


def test_there_are_benchmarks():
    assert len(BENCHMARKS) >= 5


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_every_benchmark_has_a_short_mode(path):
    assert "--short" in options(path), f"{path.name}: add --short (seconds); .ci/run runs it"


def test_ci_runs_every_benchmark_short():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "benchmarks/bench_*.py" in ci and "--short" in ci
    assert "benchmarks/gpu_campaign.py --short" in ci
