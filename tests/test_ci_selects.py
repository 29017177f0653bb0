"""Every test runs in CI: no marker combination is left that none of the
pytest commands of .ci/run selects.

Markers must be registered ([tool.pytest.ini_options] markers, with
--strict-markers in addopts), so the registered markers are every marker a
test can carry. A test is selected by a command when the command's -m
expression (addopts' when it gives none) is true of the test's markers;
each subset of the registered markers must be selected by some command.
A command that names paths, -k or --deselect narrows what it runs, so the
check refuses those rather than reason about them."""

from __future__ import annotations

import itertools
import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
NARROWING = ("-k", "--deselect", "--ignore", "--ignore-glob", "--lf", "--last-failed", "--sw", "-x")


def ci_pytest_commands() -> list[list[str]]:
    """The argument lists of every `pytest` line of .ci/run (comments and
    the rest of the script left out)."""
    out = []
    for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines():
        if not re.match(r"\s*(python -m )?pytest\b", line):
            continue
        words = shlex.split(line, comments=True)
        if words:
            out.append(words[words.index("pytest") + 1:])
    return out


def mark_expression(args: list[str]) -> str:
    """The -m expression pytest applies: the command's last, else addopts'."""
    found = None
    for words in (shlex.split(PYTEST.get("addopts", "")), args):
        for i, w in enumerate(words):
            if w == "-m":
                found = words[i + 1]
            elif w.startswith("-m") and len(w) > 2:
                found = w[2:]
    return found or ""


def selects(expression: str, marks: set[str]) -> bool:
    """pytest's -m grammar (names, and, or, not, parentheses) evaluated on marks."""
    if not expression.strip():
        return True
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)
    words = {"and", "or", "not", "(", ")"}
    python = " ".join(t if t in words else str(t in marks) for t in tokens)
    return bool(eval(python, {"__builtins__": {}}))            # only True/False/and/or/not left


def registered_markers() -> list[str]:
    return [m.split(":")[0].strip() for m in PYTEST["markers"]]


def test_markers_must_be_registered():
    assert "--strict-markers" in shlex.split(PYTEST["addopts"])


def test_ci_has_pytest_commands_that_run_every_file():
    commands = ci_pytest_commands()
    assert commands, "no pytest command in .ci/run"
    for args in commands:
        bad = [a for a in args if a in NARROWING or a.startswith(("tests/", "-k")) or a.endswith(".py")]
        assert not bad, f"a CI pytest command narrows its run ({bad}): the check below cannot see past that"


def test_every_combination_of_markers_is_run_by_a_ci_command():
    expressions = [mark_expression(a) for a in ci_pytest_commands()]
    names = registered_markers()
    assert "slow" in names
    left = [set(c) for r in range(len(names) + 1) for c in itertools.combinations(names, r)
            if not any(selects(e, set(c)) for e in expressions)]
    assert not left, f"tests marked {left} run in no CI command ({expressions})"


def test_the_selection_rule_agrees_with_pytest():
    """The evaluation above on pytest's own cases: the default run leaves
    slow out, -m slow takes it."""
    assert not selects("not slow", {"slow"}) and selects("not slow", {"mmasim"})
    assert selects("slow", {"slow", "mmasim"}) and not selects("slow", set())
    assert selects("(slow or mmasim) and not gpu", {"mmasim"})
