"""Options several commands share, declared once: the model, the solver
and its time, the input domain of a question, and the output file."""

from __future__ import annotations

import functools
import math

import click

from tcsmt.search.domain import C_KINDS, SIGNS, Domain, make_domain
from tcsmt.smt.service import DEFAULT_TIMEOUT, SOLVERS

SOLVER_CHOICE = click.Choice(["portfolio", *SOLVERS])


class Finite(click.ParamType):
    """A finite number in [lo, hi]: nan, inf and values out of range are
    refused with one line naming the option."""

    name = "number"

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            x = float(value)
        else:
            try:
                x = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if not self.lo <= x <= self.hi:
            self.fail(f"{value!r} is not between {self.lo:g} and {self.hi:g}", param, ctx)
        return x


MAX_SECONDS = 1e6
"""The longest time an option takes (11.6 days): more is a typing error."""
SECONDS = Finite(0.1, MAX_SECONDS)
"""Seconds for a solver question, a proof or a query."""
SEED = click.IntRange(0, 2**64 - 1)
"""A seed of random inputs (NumPy takes a whole number from 0 to 2^64 - 1)."""
SIZE = click.IntRange(1, 1 << 40)
"""A count of rows, columns, vectors or products (memory bounds it further:
tcsmt.budget)."""


def _apply(f, opts):
    for opt in reversed(opts):
        f = opt(f)
    return f


def model(f=None, required: bool = True):
    """--arch, --formats, --set (the model a command runs)."""
    def deco(f):
        return _apply(f, [
            click.option("--arch", required=required, metavar="ARCH",
                         help="Architecture (volta, ampere, hopper...), model name or model file."),
            click.option("--formats", metavar="IN:OUT",
                         help="Another of the architecture's format pairs, e.g. bf16:fp32."),
            click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                         help="Override a model parameter (repeatable), e.g. --set carry_bits=3."),
        ])
    return deco(f) if f is not None else deco


def solver(timeout: float = DEFAULT_TIMEOUT, cross_check: str | None = "--cross-check",
           timeout_help: str = "Seconds per solver question."):
    """--solver, --timeout and (unless None) a cross-check flag."""
    opts = [click.option("--solver", type=SOLVER_CHOICE, default="portfolio", show_default=True,
                         help="One solver, or every installed one at once (the first definitive "
                              "answer wins)."),
            click.option("--timeout", type=SECONDS, default=timeout,
                         show_default=True, metavar="SECONDS", help=timeout_help)]
    if cross_check == "--cross-check":
        opts.append(click.option("--cross-check", is_flag=True,
                                 help="Re-prove every UNSAT answer with a second solver."))
    elif cross_check == "--no-cross-check":
        opts.append(click.option("--no-cross-check", is_flag=True,
                                 help="Accept a proof by one solver."))
    return lambda f: _apply(f, opts)


def domain(f):
    """The inputs a question may choose (tcsmt.search.domain.Domain)."""
    return _apply(f, [
        click.option("--allow-specials", is_flag=True,
                     help="Allow infinities and NaNs as inputs (default: finite only)."),
        click.option("--no-subnormals", is_flag=True, help="No subnormal a, b or c."),
        click.option("--signs", type=click.Choice(SIGNS), default="any", show_default=True,
                     help="positive: every a_i, b_i and c has sign bit 0."),
        click.option("--c-sign", type=click.Choice(C_KINDS), default="any", show_default=True,
                     help="c is zero, positive or negative."),
        click.option("--exp-range", metavar="LO:HI", help="Unbiased exponents of the non-zero a_i, b_i."),
        click.option("--c-exp-range", metavar="LO:HI", help="Unbiased exponent of a non-zero c."),
        click.option("--nonzero", metavar="N|LO:HI", help="How many products have both factors non-zero."),
    ])


def domain_of(o: dict) -> Domain:
    """The Domain the options of ``domain`` describe (popped from ``o``)."""
    return make_domain(o.pop("allow_specials"), o.pop("no_subnormals"), o.pop("signs"),
                       o.pop("exp_range"), o.pop("c_exp_range"), o.pop("c_sign"), o.pop("nonzero"))


def checked_output(ctx, param, value):
    """An output path checked before any work (tcsmt.api.check_output):
    a folder, socket or block device there is refused at once, not after
    the work it was to hold."""
    if value:
        from tcsmt.api import check_output
        check_output(value)
    return value


def checked_folder(ctx, param, value):
    """A folder files are written under: a folder, or nothing yet."""
    import os
    if value and os.path.lexists(value) and not os.path.isdir(value):
        from tcsmt.errors import OutputRefused
        raise OutputRefused(f"{param.opts[-1]} {value}: not a folder (tcsmt writes files under it)")
    return value


def output(default: str, force: bool = True):
    """-o/--output FILE, and --force (replace a FILE that holds something
    else): where a result goes (tcsmt.report.where)."""
    opts = [click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
                         callback=checked_output,
                         help=f"Result file (default {default} in the current directory; an earlier "
                              "answer to the same question there is rewritten, any other file is "
                              "left alone).")]
    if force:
        opts.append(click.option("--force", is_flag=True,
                                 help="Replace an existing -o FILE that holds no earlier answer to "
                                      "this question."))
    return lambda f: _apply(f, opts)


def _choose_scheduler(ctx, param, value):
    """The command's scheduler, for the command only: when its context
    closes the runner goes back to the environment's (a command called in
    the same process after it, as tests and notebooks do, does not inherit it)."""
    from tcsmt import runner
    runner.use_scheduler(value)
    if value:
        ctx.call_on_close(lambda: runner.use_scheduler(None))
    return value


def scheduler(f):
    """--scheduler ADDRESS: where the command's independent jobs run
    (tcsmt.runner); the command reads it from the runner, not as an argument."""
    return click.option(
        "--scheduler", metavar="ADDRESS", default=None, expose_value=False, callback=_choose_scheduler,
        help="Run the jobs on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:PORT; "
             "default: TCSMT_SCHEDULER, else local worker processes; 'local' for those).")(f)


def replace_answers(f):
    """--replace-answers: write a result even where an answer of the file
    it replaces (a proof, a separating vector, a verdict) came back unknown."""
    return click.option("--replace-answers", is_flag=True,
                        help="Write the result even where an answer of the file it replaces (a "
                             "proof, a separating vector, a verdict) came back unknown (default: "
                             "keep that file and exit 1, 'lost').")(f)


def output_format(csv: bool = True, wide: bool = True, json_flag: bool = True):
    """--format table|json[|csv]: what goes to stdout, on every command the
    same: a table (or text) for people, JSON (the document the Python call
    returns) or CSV of the table's rows, for scripts; and --wide. Files are
    written with -o/--output. The old spelling --json (a flag) still works
    as --format json, with a note."""
    choices = ["table", "json", "csv"] if csv else ["table", "json"]
    what = "JSON (the document the Python call returns)" + (", or CSV of the table's rows" if csv else "")
    opts = [click.option("--format", "out_format", type=click.Choice(choices), default="table",
                         show_default=True, help=f"What to print on stdout: a table for people, or {what}.")]
    if wide:
        opts.append(click.option("--wide", is_flag=True,
                                 help="Print every column at full width (default: fit COLUMNS, or the "
                                      "terminal)."))
    return lambda f: _json_flag(_apply(f, opts)) if json_flag else _apply(f, opts)


def json_format(json_flag: bool = True):
    """--format table|json for a command that prints text, not tables
    (``json_flag``: with the old --json flag; a command whose --json named
    a file takes json_file_alias instead)."""
    return output_format(csv=False, wide=False, json_flag=json_flag)


def _json_flag(f):
    """The deprecated --json flag: --format json, said once on stderr."""
    @functools.wraps(f)
    def run(*args, json_flag: bool = False, **kw):
        if json_flag:
            click.echo("note: --json is deprecated: use --format json", err=True)
            kw["out_format"] = "json"
        return f(*args, **kw)
    return click.option("--json", "json_flag", is_flag=True, hidden=True,
                        help="Deprecated: --format json.")(run)


def json_file_alias(f):
    """The deprecated --json FILE (write the report as JSON): -o FILE now."""
    @functools.wraps(f)
    def run(*args, json_file=None, **kw):
        if json_file is not None:
            click.echo("note: --json FILE is deprecated: use -o FILE", err=True)
            if kw.get("output") not in (None, json_file):
                raise click.UsageError("--json FILE and -o FILE name different files: give -o alone")
            kw["output"] = json_file
        return f(*args, **kw)
    return click.option("--json", "json_file", type=click.Path(dir_okay=False), hidden=True,
                        metavar="FILE", help="Deprecated: -o FILE.")(run)


def echo_json(doc) -> None:
    """A document as JSON on stdout."""
    from tcsmt.fileio import json_dumps
    click.echo(json_dumps(doc))


def _emit_to(ctx, param, value):
    """--emit-smt2: from here on, every query solved is written (tcsmt.smt.emit);
    when the command ends, a line on stderr says where."""
    if not value:
        return value
    from tcsmt import api
    block = api.emitting(value)
    block.__enter__()

    def done():
        block.__exit__(None, None, None)
        n, index = api.emitted(value)
        click.echo(f"{n} SMT-LIB quer{'y' if n == 1 else 'ies'} written to {value}"
                   + (f" (index: {index})" if n else " (no solver was asked)"), err=True)
    ctx.call_on_close(done)
    return value


def emit_smt2(f):
    """--emit-smt2 DIR|FILE: the exact SMT-LIB text of every query the command solves."""
    return click.option(
        "--emit-smt2", metavar="DIR|FILE", default=None, expose_value=False, callback=_emit_to,
        help="Write every SMT-LIB query the command solves, as the solvers read it, one file per "
             "query: DIR/query-0001.smt2... (a folder), or FILE, FILE-2.smt2... (a path ending in "
             ".smt2); an index.jsonl beside them says what each solver answered.")(f)
