"""The command-line reference: every command of ``tcsmt``, read from the
click objects themselves (usage, help, every option with its type,
choices and default)."""

from __future__ import annotations

import inspect

import click

from tcsmt.cli.main import cli


def _help(text: str) -> list[str]:
    """Click help text as Markdown: paragraphs stay paragraphs; a paragraph
    that starts with click's no-rewrap mark (\\b) is kept as it is."""
    out: list[str] = []
    for para in inspect.cleandoc(text or "").split("\n\n"):
        if para.startswith("\b"):
            out += ["```text", *para[1:].strip("\n").splitlines(), "```", ""]
        else:
            out += [" ".join(line.strip() for line in para.splitlines()), ""]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _kind(p: click.Parameter) -> str:
    if isinstance(p, click.Option) and p.is_flag:
        return "flag"
    if isinstance(p.type, click.Choice):
        return " \\| ".join(f"`{c}`" for c in p.type.choices)
    metavar = p.metavar or p.type.name.upper()
    return f"`{metavar}`"


def _default(p: click.Parameter) -> str:
    if not isinstance(p, click.Option) or p.is_flag or p.multiple:
        return ""
    d = p.default
    if d is None or callable(d) or type(d).__name__ == "Sentinel":
        return ""
    return f"`{d}`"


def _options(cmd: click.Command, ctx: click.Context) -> list[str]:
    rows = ["| option | takes | default | meaning |", "|---|---|---|---|"]
    for p in cmd.get_params(ctx):
        if not isinstance(p, click.Option) or p.hidden:
            continue
        names = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
        more = " (repeatable)" if p.multiple else ""
        rows.append(f"| {names} | {_kind(p)} | {_default(p)} | {_cell(p.help or '')}{more} |")
    return rows if len(rows) > 2 else []


def _command(cmd: click.Command, path: list[str], parent: click.Context) -> list[str]:
    ctx = click.Context(cmd, info_name=path[-1], parent=parent)
    name = " ".join(path)
    lines = [f"## {name}" if len(path) == 2 else f"### {name}", "",
             "```text", " ".join(cmd.collect_usage_pieces(ctx)).join([f"Usage: {name} ", ""]), "```", "",
             *_help(cmd.help), *_options(cmd, ctx), ""]
    if isinstance(cmd, click.Group):
        for sub in sorted(cmd.list_commands(ctx)):
            lines += _command(cmd.get_command(ctx, sub), [*path, sub], ctx)
    return lines


def page() -> str:
    """The Markdown of the command-line reference."""
    root = click.Context(cli, info_name="tcsmt")
    lines = ["# Command line", "",
             "Generated from the commands themselves when the documentation is built: what "
             "`tcsmt COMMAND --help` prints, with every option. Every command ends bad input "
             "with one line on stderr and exit status 2 (an internal error: 3).", "",
             *_help(cli.help), "| command | what it does |", "|---|---|"]
    names = sorted(cli.list_commands(root))
    for n in names:
        short = cli.get_command(root, n).get_short_help_str(limit=120)
        lines.append(f"| [`tcsmt {n}`](#tcsmt-{n}) | {_cell(short)} |")
    lines.append("")
    for n in names:
        lines += _command(cli.get_command(root, n), ["tcsmt", n], root)
    return "\n".join(lines) + "\n"
