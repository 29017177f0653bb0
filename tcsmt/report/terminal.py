"""Output that fits the terminal: its width, tables that drop or fold
columns to fit it, lines wrapped with an indent, and rows as CSV.

The width is ``COLUMNS`` when set, else the terminal's, else 100 (output
to a pipe or a file); ``wide`` lifts the limit (``--wide``). A table is
given as columns, each with the order in which it is dropped when the
table is too wide (0: never); what is left is wrapped at spaces, never
inside a word; a table that cannot fit that way is printed as records
(a few lines per row).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import textwrap
from dataclasses import dataclass

from rich.console import Console, Group, JustifyMethod
from rich.table import Table
from rich.text import Text

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


@dataclass(frozen=True)
class Column:
    header: str
    drop: int = 0            # 1 is dropped first, then 2...; 0 never
    justify: JustifyMethod = "left"
    wrap: bool = False       # may wrap onto several lines (at spaces, never inside a word)
    min: int = 0             # the fewest characters a wrapped column gets


def _longest_word(column: Column, cells: list[str]) -> int:
    words = [w for text in [column.header, *cells] for w in str(text).split()]
    return max([column.min, *map(len, words)])


def _natural(column: Column, cells: list[str]) -> int:
    return max(len(line) for text in [column.header, *cells] for line in str(text).split("\n"))


def _build(columns: list[Column], rows: list[list[str]], width: int | None = None, probe: bool = False,
           **table_kw) -> Table:
    """The table; each wrapped column at least as wide as its longest word,
    so that it wraps at spaces and never cuts a word; with ``width``, the
    room left is shared among the wrapped columns up to their natural
    widths, and each column gets a fixed width. ``probe``: every wrapped
    cell replaced by its least width (the table as narrow as it may be)."""
    kw = {"box": None, "header_style": "bold", "pad_edge": False} | table_kw
    cells = [[str(r[i]) for r in rows] for i in range(len(columns))]
    least = [_longest_word(c, cs) if c.wrap else _natural(c, cs) for c, cs in zip(columns, cells)]
    sized = probe or width is not None
    sizes = list(least)
    if width is not None and not probe:
        room = width - natural_width(_build(columns, rows, probe=True, **table_kw))
        want = [_natural(c, cs) - m if c.wrap else 0 for c, cs, m in zip(columns, cells, least)]
        while room > 0 and any(want):
            for i in [i for i, w in enumerate(want) if w]:
                if room:
                    sizes[i], want[i], room = sizes[i] + 1, want[i] - 1, room - 1
    t = Table(**kw)
    for c, m in zip(columns, sizes):
        t.add_column("x" * m if probe and c.wrap else c.header, justify=c.justify, no_wrap=not c.wrap,
                     overflow="fold", width=m if c.wrap and sized and m else None)
    for r in rows:
        t.add_row(*("x" * m if probe and c.wrap else str(x) for x, c, m in zip(r, columns, sizes)))
    return t


def least_width(columns: list[Column], rows: list[list[str]], **table_kw) -> int:
    """The narrowest the table can be printed without cutting a word."""
    return natural_width(_build(columns, rows, probe=True, **table_kw))


def fit_table(columns: list[Column], rows: list[list[str]], width: int, **table_kw):
    """The table within ``width``, never cutting a word: columns are dropped
    (``drop`` 1 first, then 2...) while that lets the rest print without
    wrapping; when wrapping is needed anyway, as few are dropped as let the
    wrapped columns wrap at spaces. When even the undroppable columns do
    not fit, each row as lines instead (``records``)."""
    levels = sorted({c.drop for c in columns if c.drop})
    subsets = [[i for i, c in enumerate(columns) if not c.drop or c.drop > level] for level in [0, *levels]]
    for measure in (_natural_width, least_width):
        for kept in subsets:
            cols, rs = [columns[i] for i in kept], [[r[i] for i in kept] for r in rows]
            if measure(cols, rs, **table_kw) <= width:
                return _build(cols, rs, width if width < UNLIMITED else None, **table_kw)
    return records(columns, rows, width)


def _natural_width(columns: list[Column], rows: list[list[str]], **table_kw) -> int:
    return natural_width(_build(columns, rows, **table_kw))


def records(columns: list[Column], rows: list[list[str]], width: int) -> Group:
    """Rows as lines: the first cell, then each other column as "header:
    value", wrapped at spaces within ``width``; a blank line between rows."""
    lines: list[str] = []
    label = max(len(c.header) for c in columns[1:]) if len(columns) > 1 else 0
    for n, r in enumerate(rows):
        if n:
            lines.append("")
        lines += wrap(" ".join(str(r[0]).split("\n")), width)
        for c, cell in zip(columns[1:], r[1:]):
            for k, part in enumerate(str(cell).split("\n")):
                head = f"  {c.header:<{label}}  " if k == 0 else " " * (label + 4)
                lines += wrap(part, width, head, "  ")
    return Group(*(Text(x, no_wrap=True) for x in lines))


def wrap(text: str, width: int, indent: str = "", more: str = "    ") -> list[str]:
    """``text`` as lines of at most ``width`` characters: the first starts
    with ``indent``, the others with ``indent + more``; a word longer than
    a line is kept whole on a line of its own, never cut."""
    if width >= UNLIMITED or len(indent) + len(text) <= width:
        return [indent + text]
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=False, break_on_hyphens=False) or [indent]


def csv_text(header: list[str], rows: list[list]) -> str:
    """Rows as CSV (RFC 4180, a header line first)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()
