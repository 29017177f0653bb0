"""MkDocs hook: the pages generated from the code, the models and the
results (docs/sitegen/) are added to the site at build time, never
committed; the architectures' pages are put in the navigation, and a page
under docs/ that the navigation forgets is added at its end."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from mkdocs.structure.files import File

DOCS = Path(__file__).resolve().parents[1]
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from sitegen import generated_pages, listed_pages  # noqa: E402

log = logging.getLogger("mkdocs.hooks.generate")
_PAGES: dict[str, str] = {}


def on_config(config):
    _PAGES.clear()
    _PAGES.update(generated_pages())
    units = sorted(p for p in _PAGES if p.startswith("units/") and p != "units/index.md")
    _expand(config["nav"], "units/index.md", ["units/index.md", *units])
    listed = listed_pages(config["nav"])
    forgotten = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                       if p.relative_to(DOCS).as_posix() not in listed
                       and p.relative_to(DOCS).parts[0] not in ("hooks", "sitegen"))
    if forgotten:
        log.info("pages not in mkdocs.yml's nav, added under 'More': %s", ", ".join(forgotten))
        config["nav"].append({"More": forgotten})
    return config


def _expand(nav, page: str, pages: list[str]) -> bool:
    """Replace the nav entry whose page is ``page`` by a section of ``pages``."""
    for i, item in enumerate(nav):
        if isinstance(item, dict):
            (title, value), = item.items()
            if value == page:
                nav[i] = {title: pages}
                return True
            if isinstance(value, list) and _expand(value, page, pages):
                return True
    return False


def on_files(files, config):
    for path, text in _PAGES.items():
        files.append(File.generated(config, path, content=text))
    return files
