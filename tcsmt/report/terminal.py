"""Output that fits the terminal: its width, tables that drop or fold
columns to fit it, lines wrapped with an indent, and rows as CSV.

The width is ``COLUMNS`` when set, else the terminal's, else 100 (output
to a pipe or a file); ``wide`` lifts the limit (``--wide``). A table is
given as columns, each with the order in which it is dropped when the
table is too wide (0: never); what is left and still too wide is wrapped
by rich within the width.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import textwrap
from dataclasses import dataclass

from rich.console import Console, JustifyMethod
from rich.table import Table

DEFAULT_WIDTH = 100
UNLIMITED = 10_000


def terminal_width(wide: bool = False) -> int:
    """Characters per line: unlimited with ``wide``, else COLUMNS, the
    terminal's width, or DEFAULT_WIDTH when there is no terminal."""
    if wide:
        return UNLIMITED
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def console(width: int, err: bool = False) -> Console:
    """A console that prints plain text (no markup, no highlighting) within ``width``."""
    return Console(width=width, highlight=False, markup=False, stderr=err, soft_wrap=False)


def natural_width(renderable) -> int:
    """The width of the longest line of ``renderable`` printed without a limit."""
    buf = io.StringIO()
    Console(file=buf, width=UNLIMITED, highlight=False, markup=False).print(renderable)
    return max((len(line.rstrip()) for line in buf.getvalue().splitlines()), default=0)


def first_fitting(candidates: list, width: int):
    """The first renderable whose natural width fits ``width``, else the last."""
    for c in candidates[:-1]:
        if natural_width(c) <= width:
            return c
    return candidates[-1]


def print_fitting(candidates: list, width: int) -> None:
    console(width).print(first_fitting(candidates, width))


@dataclass(frozen=True)
class Column:
    header: str
    drop: int = 0            # 1 is dropped first, then 2...; 0 never
    justify: JustifyMethod = "left"
    wrap: bool = False       # may wrap onto several lines when narrow


def fit_table(columns: list[Column], rows: list[list[str]], width: int, **table_kw) -> Table:
    """The table with the columns that fit ``width``: those with ``drop``
    1 go first, then 2..., until the table fits or only undroppable
    columns are left."""
    kept = list(range(len(columns)))
    for level in sorted({c.drop for c in columns if c.drop}) + [None]:
        t = _table([columns[i] for i in kept], [[r[i] for i in kept] for r in rows], **table_kw)
        if level is None or natural_width(t) <= width:
            return t
        kept = [i for i in kept if columns[i].drop != level]
    raise AssertionError("unreachable")


def _table(columns: list[Column], rows: list[list[str]], **table_kw) -> Table:
    kw = {"box": None, "header_style": "bold", "pad_edge": False} | table_kw
    t = Table(**kw)
    for c in columns:
        t.add_column(c.header, justify=c.justify, no_wrap=not c.wrap,
                     overflow="fold" if c.wrap else "ellipsis",
                     min_width=max(len(w) for w in c.header.split()) if c.wrap else None)
    for r in rows:
        t.add_row(*r)
    return t


def wrap(text: str, width: int, indent: str = "", more: str = "    ") -> list[str]:
    """``text`` as lines of at most ``width`` characters: the first starts
    with ``indent``, the others with ``indent + more``."""
    if width >= UNLIMITED or len(indent) + len(text) <= width:
        return [indent + text]
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=True, break_on_hyphens=False) or [indent]


def csv_text(header: list[str], rows: list[list]) -> str:
    """Rows as CSV (RFC 4180, a header line first)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()
