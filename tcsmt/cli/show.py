"""Printing diff and equiv documents on the terminal (the tables
themselves are built in tcsmt.report.tables)."""

from __future__ import annotations

from tcsmt.cli import options
from tcsmt.report.tables import result_csv, result_table, separation_summary, vector_table
from tcsmt.report.terminal import console, terminal_width, wrap


def print_separation(doc: dict, path, out_format: str = "table", wide: bool = False) -> None:
    """The summary, the vectors with every model's output, notes, and where
    the file went (stderr when stdout holds JSON or CSV)."""
    import click
    if out_format != "table":
        options.echo_json(doc) if out_format == "json" else click.echo(result_csv(doc), nl=False)
        click.echo(written(path), err=True)
        return
    width = terminal_width(wide)
    con = console(width)
    for line in separation_summary(doc):
        for part in wrap(line, width):
            con.print(part, soft_wrap=True)
    if doc["vectors"]:
        if "pairs" in doc:
            result_table(doc, width, pairs=False)
        else:
            con.print(vector_table(doc, width=width))
    notes = doc["run"].get("notes", []) + doc["run"].get("solver", {}).get("notes", [])
    for note in notes:
        for part in wrap(f"note: {note}", width):
            con.print(part, soft_wrap=True)
    for part in wrap(written(path), width):
        con.print(part, soft_wrap=True)


def written(path) -> str:
    """Where the result file went (None: it could not be written)."""
    return f"result written to {path}" if path is not None else "result not written"
