"""The error document of tcsmt.accuracy.error as a table, as CSV, and as a
PNG plot of the error against K (matplotlib, the ``plot`` extra)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from tcsmt.errors import UserError
from tcsmt.report.terminal import Column, csv_text, fit_table

KEYS = ["model", "distribution", "k", "max_ulps", "mean_ulps", "mean_signed_ulps", "max_relative",
        "mean_relative", "inexact", "towards_zero", "nonfinite"]
COLUMNS = [Column("model"), Column("inputs"), Column("K", justify="right"),
           Column("max ulps", justify="right"), Column("mean ulps", justify="right"),
           Column("mean signed", 2, justify="right"), Column("max rel", justify="right"),
           Column("mean rel", 1, justify="right"), Column("inexact", 3, justify="right"),
           Column("to zero", justify="right"), Column("non-finite", 4, justify="right")]
NOTE = ("ulps: |d - exact| in units in the last place of the output format at the exact value;\n"
        "rel: |d - exact| / |exact|; mean signed: the mean of d - exact in ulps (its sign is\n"
        "the bias); inexact: the share of elements not exact; to zero: the share of inexact\n"
        "ones rounded towards zero (0.5: no bias; 1: every error truncates).")


def _num(x, kind: str) -> str:
    if x is None:
        return "-"
    if kind == "share":
        return f"{x:.2f}"
    if kind == "rel":
        return f"{x:.2e}"
    return f"{x:.3g}" if abs(x) < 1e5 else f"{x:.2e}"


def _rows(doc: dict) -> list[list[str]]:
    return [[r["model"], r["distribution"], str(r["k"]), _num(r["max_ulps"], "ulps"),
             _num(r["mean_ulps"], "ulps"), _num(r["mean_signed_ulps"], "ulps"),
             _num(r["max_relative"], "rel"), _num(r["mean_relative"], "rel"),
             _num(r["inexact"], "share"), _num(r["towards_zero"], "share"), str(r["nonfinite"])]
            for r in doc["rows"]]


def error_table(doc: dict, width: int) -> Table:
    """A row per model, distribution and K."""
    return fit_table(COLUMNS, _rows(doc), width)


def error_csv(doc: dict) -> str:
    return csv_text(KEYS, [[r[k] for k in KEYS] for r in doc["rows"]])


def pyplot():
    """matplotlib.pyplot drawing to files (no window); a UserError naming
    the extra to install when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        raise UserError("the plot needs matplotlib: pip install 'tcsmt[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def error_plot(doc: dict, path: str | Path) -> None:
    """A PNG: one panel per distribution, the mean |error| in ulps against
    K (solid) and the largest (dashed), one colour per model; K on a log
    axis, the error on a symmetric log axis whose bottom line is 0, so an
    exact result is drawn (at 0) rather than dropped. A model with no
    error at all is named in the legend; a K where some exact sums cancelled
    below an ulp of their terms (their ulps are huge) is marked with x."""
    from tcsmt.fileio import write_atomic
    plt = pyplot()

    kinds = list(doc["distributions"])
    cols = min(2, len(kinds))
    rows = -(-len(kinds) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.4 * rows), squeeze=False)
    names = [m["name"] for m in doc["models"]]
    twins = {m["name"]: m.get("same_circuit_as") for m in doc["models"]}
    colours = {n: plt.get_cmap("tab10")(i % 10) for i, n in enumerate(names)}
    for ax, kind in zip(axes.flat, kinds):
        _panel(ax, doc, kind, names, colours, twins)
    for ax in list(axes.flat)[len(kinds):]:
        ax.set_visible(False)
    fig.suptitle(f"Error of D = C + A @ B against the exact result{chr(10) if cols == 1 else ' '}"
                 f"(M = {doc['m']}, N = {doc['n']}, C = {doc['c']}; solid: mean, dashed: max)", fontsize=11)
    fig.tight_layout()
    write_atomic(Path(path), lambda f: fig.savefig(f, format="png", dpi=110), binary=True)
    plt.close(fig)


def _panel(ax, doc: dict, kind: str, names: list[str], colours: dict, twins: dict) -> None:
    """One distribution; a model with the same circuit as an earlier one is
    drawn under its colour and named beside it in the legend. The error axis
    is linear below 1 ulp and logarithmic above, so an exact result is drawn
    at 0, not dropped."""
    marked = False
    for name in names:
        if twins.get(name):
            continue
        same = [n for n in names if twins.get(n) == name]
        rows = sorted((r for r in doc["rows"] if r["model"] == name and r["distribution"] == kind),
                      key=lambda r: r["k"])
        ks = [r["k"] for r in rows]
        mean = [r["mean_ulps"] if r["mean_ulps"] is not None else float("nan") for r in rows]
        top = [r["max_ulps"] if r["max_ulps"] is not None else float("nan") for r in rows]
        exact = all(not r["mean_ulps"] for r in rows)
        ax.plot(ks, mean, "-o", color=colours[name], markersize=3,
                label=" = ".join([name, *same]) + (" (exact: no error)" if exact else ""))
        ax.plot(ks, top, "--", color=colours[name], linewidth=0.8)
        hit = [(k, t) for k, t, r in zip(ks, top, rows) if r.get("cancelled")]
        if hit:
            ax.plot(*zip(*hit), "x", color="black", markersize=7,
                    label=None if marked else "x: some exact sums cancel below an ulp of their terms")
            marked = True
    ax.set_xscale("log", base=2)
    ax.set_yscale("symlog", linthresh=1, linscale=0.4)
    ax.set_ylim(bottom=0)
    ax.axhline(0, color="grey", linewidth=0.6)
    ax.set_xlabel("K (products per element of D)")
    ax.set_ylabel("|d - exact| in ulps of the output format (0: exact)")
    ax.set_title(f"{kind}: {doc['distributions'][kind]}", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7)
