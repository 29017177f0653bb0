"""The README shows real output and says true things.

Its short tour runs as written: every ```console block is run by
tests/docblocks.py as the documentation's pages are (the lines the README
shows must be what the command prints; times compared as "T s", the
solvers of a race as "SOLVERS"). The longer tour it once held lives in the
documentation under docs/, where tests/test_docs.py runs it. The two
commands of a fresh machine are held to what .ci/run does, and every link
into docs/ names a page that exists and is in the site."""

from __future__ import annotations

import json
import re

import yaml
from checkout import ROOT
from docblocks import blocks, commands, reasons_missing, run_page, unaccounted

README = ROOT / "README.md"
INSTALL = ("python3 -m venv .venv && . .venv/bin/activate && pip install . "
           "&& tcsmt find rounding --arch ampere")
TESTS = ('pip install torch==2.13.0 && pip install ".[dev]" && ruff check . && mypy '
         '&& pytest -q -n 2 --dist loadfile && pytest -q -m slow -n 2 --dist loadfile')


def _commands() -> list[str]:
    return [cmd for b in blocks(README) if b.lang == "console" for cmd, _ in commands(b.body)]


def test_the_tour_runs_as_written(tmp_path):
    run_page(README, tmp_path)


def test_the_tour_runs_commands_and_shows_their_output():
    """The mechanism is not idle: the tour runs several commands, each
    with the output it shows."""
    ran = [b for b in blocks(README) if b.lang == "console" and "skip" not in b.marks]
    shown = [cmd for b in ran for cmd, out in commands(b.body) if out.strip()]
    assert len(shown) >= 4, shown
    assert not unaccounted(README) + reasons_missing(README)


def test_the_two_commands_of_a_fresh_machine():
    """The install-and-first-question command and the test command are in
    the README as written, and the test command is what .ci/run runs."""
    cmds = _commands()
    assert INSTALL in cmds and TESTS in cmds, cmds
    ci = {re.sub(r"^pip install -q ", "pip install ", line.strip())
          for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()}
    for step in TESTS.split(" && "):
        assert step in ci, f".ci/run does not run `{step}`"


# commands the README's longer tour showed and its test ran, each with its
# output; they live on the documentation's pages now and must still run there
MOVED = [
    "tcsmt models", "tcsmt simulate --arch ampere", "tcsmt conformance data/hwdata/A100",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch hopper",
    "tcsmt check results/hardware/H100/mma-e4m3-f32.json",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch all",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch exact",
    "tcsmt params", "tcsmt model save hopper-a1",
    "tcsmt check results/hardware/H100/mma-f16-f32.json --arch hopper-a1.toml",
    "tcsmt diff volta turing ampere hopper", "tcsmt diff hopper blackwell",
    "tcsmt identify --device sim:ampere",
]


def test_the_tour_it_held_still_runs_in_the_docs():
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    ran = [cmd for page in pages for b in blocks(page)
           if b.lang == "console" and not {"skip", "slow", "output varies"} & set(b.marks)
           for cmd, out in commands(b.body) if out.strip()]
    for prefix in MOVED:
        assert any(c.startswith(prefix) for c in ran), f"no page runs `{prefix}` and compares its output"


def test_it_stays_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_links_into_the_docs_exist_and_are_in_the_site():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)", text)
    assert len(links) >= 10, links
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = json.dumps(config["nav"])
    for link in links:
        assert (ROOT / link).is_file(), f"README links to {link}, which does not exist"
        assert f'"{link[len("docs/"):]}"' in nav, f"README links to {link}, which is not in mkdocs.yml's nav"


def test_agreement_totals_are_the_committed_table():
    """The MMA-Sim totals the documentation states are the committed
    agreement table's."""
    page = ROOT / "docs" / "validation.md"
    m = re.search(r"Totals: (\d+) configurations, (\d+) vectors, (\d+) differences, (\d+) unexplained",
                  page.read_text(encoding="utf-8"))
    assert m, f"{page} states no agreement totals"
    table = json.loads((ROOT / "results" / "mmasim-agreement.json").read_text())
    unexplained = sum(r["reasons"].get("unexplained", 0) for r in table["rows"])
    assert tuple(int(x) for x in m.groups()) == (table["configurations"], table["vectors"],
                                                  table["differences"], unexplained)
    assert len(table["rows"]) == table["configurations"]
    assert sum(r["vectors"] for r in table["rows"]) == table["vectors"]
    assert sum(r["differences"] for r in table["rows"]) == table["differences"]
