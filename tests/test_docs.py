"""The documentation runs as written: every page under docs/ has its code
blocks run in order (tests/docblocks.py says how, and what the markers
mean); every block is either run or marked with why not; every page is in
the site's navigation; the generated pages build."""

from __future__ import annotations

import sys

import pytest
import yaml
from checkout import ROOT
from docblocks import blocks, reasons_missing, run_page, unaccounted

DOCS = ROOT / "docs"
GENERATOR_DIRS = ("hooks", "sitegen")
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] not in GENERATOR_DIRS)


def _id(page):
    return page.relative_to(DOCS).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_page_runs_as_written(page, tmp_path):
    run_page(page, tmp_path)


SLOW = [p for p in PAGES if any("slow" in b.marks for b in blocks(p))]


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW or [None], ids=lambda p: _id(p) if p else "none")
def test_page_runs_with_its_slow_blocks(page, tmp_path):
    if page is not None:
        run_page(page, tmp_path, slow=True)


def test_every_block_runs_or_says_why_not():
    problems = []
    for page in PAGES:
        problems += unaccounted(page) + reasons_missing(page)
    assert not problems, "\n".join(problems)


def test_the_pages_have_blocks_that_run():
    """The mechanism is not idle: most pages run code."""
    ran = [p for p in PAGES if any(b.lang in ("console", "python", "pycon") and "skip" not in b.marks
                                   for b in blocks(p))]
    assert len(ran) >= len(PAGES) // 2, [_id(p) for p in PAGES if p not in ran]


def _nav_pages(nav) -> set[str]:
    sys.path.insert(0, str(DOCS))
    try:
        from sitegen import listed_pages
    finally:
        sys.path.remove(str(DOCS))
    return listed_pages(nav)


def test_every_page_is_in_the_navigation():
    """A page added under docs/ is listed in mkdocs.yml's nav (the build
    adds a forgotten one under 'More', which is not where it belongs)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = _nav_pages(config["nav"])
    missing = [_id(p) for p in PAGES if _id(p) not in listed]
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"


def test_generated_pages():
    """The pages generated at build time: one per architecture, each
    listed on the index, the command-line reference naming every command."""
    sys.path.insert(0, str(DOCS))
    try:
        from sitegen import generated_pages
        pages = generated_pages()
    finally:
        sys.path.remove(str(DOCS))
    from tcsmt.cli.main import cli
    from tcsmt.model.catalogue import architectures
    for arch in architectures():
        assert f"units/{arch}.md" in pages
        assert f"[{arch}]({arch}.md)" in pages["units/index.md"]
    for name in cli.commands:
        assert f"## tcsmt {name}" in pages["reference/cli.md"]
    assert "| rounding | **truncate**, rz, rne, ru, rd |" in pages["units/ampere.md"]   # its own marked
