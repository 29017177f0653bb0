"""Pages of the documentation generated at build time from the code, the
shipped models and the committed results (docs/hooks/generate.py adds
them to the site; none is committed, so none can go stale)."""

from __future__ import annotations


def generated_pages() -> dict[str, str]:
    """{path under docs/: Markdown} of every generated page."""
    from sitegen import api, cli, reference, units
    pages = {"reference/cli.md": cli.page(), "reference/api.md": api.page()}
    pages.update(reference.pages())
    pages.update(units.pages())
    return pages


def listed_pages(nav) -> set[str]:
    """Every page path a MkDocs nav names."""
    out: set[str] = set()
    for item in nav or []:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out |= listed_pages(value)
        elif isinstance(value, str) and value.endswith(".md"):
            out.add(value)
    return out
