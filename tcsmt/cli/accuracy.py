"""``tcsmt error``: the error of C + A @ B under models against the exact result."""

from __future__ import annotations

import click

from tcsmt.cli import options
from tcsmt.errors import BadOption, UserError


def _ints(text: str, name: str) -> list[int]:
    try:
        out = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise UserError(f"{name} {text!r}: expected whole numbers separated by commas") from None
    if not out:
        raise UserError(f"{name} is empty")
    lo, hi = options.SIZE.min or 1, options.SIZE.max or 1 << 40
    bad = [x for x in out if not lo <= x <= hi]
    if bad:
        raise BadOption(f"{name} {bad[0]}: every value must lie between {lo} and {hi}")
    return out


@click.command("error")
@click.argument("models", nargs=-1, required=True, metavar="MODEL...")
@click.option("--m", "m", type=options.SIZE, default=64, show_default=True, help="Rows of A and D.")
@click.option("--n", "n", type=options.SIZE, default=64, show_default=True,
              help="Columns of B and D.")
@click.option("--k", "k_text", default="16,64,256,1024", show_default=True, metavar="K1,K2,...",
              help="The lengths of the dot products (columns of A).")
@click.option("--dist", "dists", multiple=True, metavar="NAME",
              help="Inputs: normal, uniform, positive or cancelling (repeatable; default all).")
@click.option("--seed", type=options.SEED, default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--formats", metavar="IN:OUT", help="Every model's format pair, e.g. bf16:fp32.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a parameter of every model (repeatable).")
@click.option("--a", "a_path", metavar="A.npy", help="Given inputs in place of random ones: A (M x K)...")
@click.option("--b", "b_path", metavar="B.npy", help="...B (K x N)...")
@click.option("--c", "c_path", metavar="C.npy", help="...and C (M x N; zeros without it).")
@click.option("--backend", type=click.Choice(["numpy", "cpu", "cuda"]), default=None,
              help="How D is computed (default: tcsmt.matmul's choice).")
@click.option("--plot", "plot", type=click.Path(dir_okay=False), default=None, metavar="FILE.png",
              callback=options.checked_output,
              help="Write a PNG of the error against K, a panel per distribution (matplotlib).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              callback=options.checked_output, help="Also write the document as JSON to FILE.")
@options.json_file_alias
@options.output_format(json_flag=False)
def error_cmd(models, m, n, k_text, dists, seed, formats, overrides, a_path, b_path, c_path,
              backend, plot, output, out_format, wide):
    """The error of D = C + A @ B under each MODEL against the exact result,
    on random inputs of several distributions (C = 0) or on given ones.

    \b
    For each model, distribution and K: the largest and mean |d - exact|
    in ulps (units in the last place of the output format at the exact
    value), the relative error, the mean signed error (the bias), the share
    of results that are inexact and, of those, rounded towards zero. The
    exact value is an integer sum of the products' significands, one per
    power of two: no floating-point sum. The inputs are drawn in float64
    and rounded to nearest into each model's formats; every model gets the
    same draw. MODEL is an architecture, model name, model file or a
    reference model (fma-chain, fma-pairwise: in the first model's formats).
    Example: tcsmt error volta ampere hopper --m 16 --n 16 --k 16,256,4096
    --plot error.png"""
    from tcsmt import api
    from tcsmt.cli.progress import progress_bar
    from tcsmt.report.accuracy import NOTE, error_csv, error_table
    from tcsmt.report.terminal import console, terminal_width, wrap

    inputs = None
    if a_path or b_path or c_path:
        if not (a_path and b_path):
            raise UserError("given inputs need --a and --b (and --c for a non-zero C)")
        inputs = [p for p in (a_path, b_path, c_path) if p]
    dist = [d for text in dists for d in text.split(",") if d]
    with progress_bar("error", show=out_format == "table") as progress:
        doc = api.error(list(models), m, n, _ints(k_text, "--k"), distributions=dist or None, seed=seed,
                        formats=formats, overrides=list(overrides), inputs=inputs, backend=backend,
                        plot=plot, json=output, progress=progress)
    if out_format == "json":
        options.echo_json(doc)
    elif out_format == "csv":
        click.echo(error_csv(doc), nl=False)
    if out_format != "table":
        for note in doc.get("notes", []):
            click.echo(f"note: {note}", err=True)
    else:
        width = terminal_width(wide)
        console(width).print(error_table(doc, width))
        click.echo(NOTE)
        for note in doc.get("notes", []):
            for line in wrap(f"note: {note}", width, "", "  "):
                click.echo(line)
        tail = f"exact reference: {doc['reference']}; {doc['seconds']:.1f} s" + \
            (f"; plot written to {plot}" if plot else "")
        for line in wrap(tail, width, "", "  "):
            click.echo(line)
