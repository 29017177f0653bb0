"""Printing documents on the terminal (the tables themselves are built in
tcsmt.report.tables)."""

from __future__ import annotations

from rich.console import Console

from tcsmt.report.tables import separation_summary, vector_table


def console() -> Console:
    return Console(highlight=False, markup=False)


def print_separation(doc: dict, path) -> None:
    con = console()
    for line in separation_summary(doc):
        con.print(line)
    if doc["vectors"]:
        con.print(vector_table(doc))
    for note in doc["run"]["solver"].get("notes", []):
        con.print(f"note: {note}")
    con.print(f"result written to {path}")
