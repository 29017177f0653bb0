"""The README's tour shows real output: each command below is run as the
README writes it, and the lines the README shows must be what it prints.

A README block is split at its "..." lines; each part must appear as
consecutive lines of the command's output, the parts in order. Times
("1.43 s") are compared as "T s", the solvers a race named ("(bitwuzla, z3)")
as "(SOLVERS)". Commands that ask a solver (their
vectors and times depend on which solver answers first), build plans or
run for minutes are not run here; their figures are checked by the tests
of their own commands."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT

README = ROOT / "README.md"

# the tour's commands whose output does not depend on a solver's timing
CHECKED = [
    "tcsmt models",
    "tcsmt simulate --arch ampere",
    "tcsmt conformance data/hwdata/A100",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch hopper",
    "tcsmt check results/hardware/H100/mma-e4m3-f32.json",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch all",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch exact",
    "tcsmt params",
    "tcsmt model save hopper-a1",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch hopper-a1.toml",
    "tcsmt diff volta turing ampere hopper",
    "tcsmt diff hopper blackwell",
    "tcsmt identify --device sim:ampere",
]

_TIME = re.compile(r"\b\d+(\.\d+)? s\b")
# which solvers answered first (a race) varies from run to run
_SOLVERS = re.compile(r"\((bitwuzla|boolector|cvc5|z3)(, (bitwuzla|boolector|cvc5|z3))*\)")


def _same_run(line: str) -> str:
    """A line as any run prints it: times and the solvers of a race left out."""
    return _SOLVERS.sub("(SOLVERS)", _TIME.sub("T s", line.rstrip()))


def tour() -> list[tuple[str, list[str]]]:
    """(command, the output lines the README shows) for every `$ tcsmt`
    line of the README's indented blocks."""
    out: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line in README.read_text(encoding="utf-8").splitlines():
        if not line.startswith("    "):
            current = None
            continue
        text = line[4:]
        if text.startswith("$ "):
            current = []
            out.append((text[2:], current))
        elif current is not None:
            current.append(text.rstrip())
    return out


def _parts(lines: list[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for line in lines:
        if line.strip() == "...":
            parts.append([])
        else:
            parts[-1].append(_same_run(line))
    return [p for p in parts if p]


def _shown_in(parts: list[list[str]], got: list[str]) -> str | None:
    """None when every part appears in got as consecutive lines, in order;
    else the first part that does not."""
    pos = 0
    for part in parts:
        for start in range(pos, len(got) - len(part) + 1):
            if got[start:start + len(part)] == part:
                pos = start + len(part)
                break
        else:
            return "\n".join(part)
    return None


def _command(line: str) -> tuple[list[str], dict[str, str]]:
    """The argv of a README command line and its environment: a trailing
    comment is dropped, except COLUMNS=N in it, which the README states the
    output was taken with."""
    env = {"COLUMNS": "100"}
    if "#" in line:
        line, comment = line.split("#", 1)
        m = re.search(r"COLUMNS=(\d+)", comment)
        if m:
            env["COLUMNS"] = m.group(1)
    argv = shlex.split(line)
    exe = shutil.which("tcsmt", path=str(Path(sys.executable).parent)) or shutil.which("tcsmt")
    assert exe, "the tcsmt command is not installed"
    return [exe, *argv[1:]], env


def _selected() -> list[tuple[str, list[str]]]:
    rows = tour()
    picked = [(cmd, lines) for cmd, lines in rows if any(cmd.startswith(p) for p in CHECKED)]
    return picked


def test_the_tour_lists_every_checked_command():
    """A command dropped from the README or renamed there fails here, so the
    list above cannot silently check nothing."""
    commands = [cmd for cmd, _ in tour()]
    for prefix in CHECKED:
        assert any(c.startswith(prefix) for c in commands), f"README has no `$ {prefix}`"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder where the README's relative paths resolve (data/, results/
    of the checkout) and its output files (hopper-a1.toml, diff.json) land
    outside the checkout."""
    d = tmp_path_factory.mktemp("tour")
    for name in ("data", "results"):
        (d / name).symlink_to(ROOT / name)
    return d


@pytest.mark.parametrize("cmd,lines", _selected(), ids=[c[:60] for c, _ in _selected()])
def test_tour_output(cmd, lines, workdir):
    argv, env = _command(cmd)
    run = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, timeout=600,
                         env={**os.environ, **env})
    got = [_same_run(x) for x in run.stdout.splitlines()]
    missing = _shown_in(_parts(lines), got)
    assert missing is None, (f"`{cmd}` (exit {run.returncode}) does not print what the README shows:\n"
                             f"{missing}\n--- it printed:\n{run.stdout}\n{run.stderr[-2000:]}")


def test_agreement_totals_are_the_committed_table():
    """The README's MMA-Sim totals are the committed agreement table's."""
    import json
    m = re.search(r"Totals: (\d+) configurations, (\d+) vectors, (\d+) differences, (\d+) unexplained",
                  README.read_text(encoding="utf-8"))
    assert m, "README states no agreement totals"
    table = json.loads((ROOT / "results" / "mmasim-agreement.json").read_text())
    unexplained = sum(r["reasons"].get("unexplained", 0) for r in table["rows"])
    assert tuple(int(x) for x in m.groups()) == (table["configurations"], table["vectors"],
                                                  table["differences"], unexplained)
    assert len(table["rows"]) == table["configurations"]
    assert sum(r["vectors"] for r in table["rows"]) == table["vectors"]
    assert sum(r["differences"] for r in table["rows"]) == table["differences"]
