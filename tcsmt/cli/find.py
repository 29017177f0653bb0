"""Commands: find, prove, properties, regen."""

from __future__ import annotations

import sys

import click

from tcsmt import api
from tcsmt.cli import options
from tcsmt.environment import MAX_WORKERS
from tcsmt.errors import AnswersLost, UserError
from tcsmt.report.sentences import answer_lines
from tcsmt.report.terminal import terminal_width, wrap
from tcsmt.report.where import said


@click.command("find")
@click.argument("prop", metavar="PROPERTY")
@options.model
@options.solver()
@click.option("--raw", is_flag=True, help="Accept the first witness: no restrictions to few "
              "non-zero terms and few significant bits.")
@click.option("--no-pool", is_flag=True, help="Ask only the solvers (no candidate pool).")
@options.emit_smt2
@options.output("ARCH-PROPERTY.json")
@options.replace_answers
@options.output_format()
def find_cmd(prop, arch, formats, overrides, solver, timeout, cross_check, raw, no_pool, output, force,
             replace_answers, out_format, wide):
    """Find the fewest inputs that tell PROPERTY's hypotheses apart on ARCH,
    print them with each hypothesis's output, and write them to JSON. The
    vectors of an earlier result in the file are tried first.

    A hypothesis is one value of the parameter PROPERTY asks about; a pair
    of hypotheses is separated by a vector on which their outputs differ.
    A pair no vector separates is proved inseparable (no input of the
    domain gives different bits) or left unknown. Run `tcsmt properties`
    for the list. The answer ends in sentences: which hypothesis the
    model takes, what the vectors separate, what is proved."""
    from tcsmt.cli.progress import progress_bar
    where = api.find_path(prop, arch, formats, overrides, output=output, force=force)
    with progress_bar("parts") as progress:       # drawn only for a proof in parts
        doc = api.find(prop, arch, formats=formats, overrides=overrides, solver=solver, timeout=timeout,
                       readable=not raw, pool=not no_pool, cross_check=cross_check, prior=where.prior,
                       progress=progress)
    summary = (f"{len(doc['vectors'])} vector(s), verdict {doc['verdict']}, "
               f"{doc['run']['seconds']:.2f} s")
    people = show_result(doc, out_format, wide)
    if people:
        echo_wrapped(answer_lines(doc), wide)
    write_and_say(where.path, doc, summary, err=not people, replace_answers=replace_answers)


def echo_wrapped(lines: list[str], wide: bool = False) -> None:
    """Sentences, each wrapped at spaces within the terminal's width."""
    width = terminal_width(wide)
    for line in lines:
        for part in wrap(line, width, "", "  "):
            click.echo(part)


def write_and_say(path, doc: dict, summary: str, err: bool = False, replace_answers: bool = False) -> None:
    """Write a result file after its answer was printed, and end the answer
    with ``summary`` and what became of the file (on stderr when ``err``);
    a file that cannot be written still leaves the answer on the screen
    (then the UserError); a file whose answers the new document would leave
    unknown is kept (then AnswersLost: "lost", exit 1)."""
    try:
        status = api.write(path, doc, replace_answers)
    except UserError:
        click.echo(f"{summary}; not written", err=err)
        raise
    except AnswersLost:
        click.echo(f"{summary}; {path} kept", err=err)
        raise
    click.echo(f"{summary}; {said(path, status)}", err=err)


def show_result(doc: dict, out_format: str, wide: bool) -> bool:
    """Print a result document as a table (True: more lines for people
    may follow on stdout), JSON or CSV (False: stdout holds the data alone)."""
    from tcsmt.report.tables import result_csv, result_table
    from tcsmt.report.terminal import terminal_width

    if out_format == "json":
        options.echo_json(doc)
        return False
    if out_format == "csv":
        click.echo(result_csv(doc), nl=False)
        return False
    result_table(doc, terminal_width(wide))
    return True


@click.command("prove")
@click.argument("what", type=click.Choice(["carry-bits"]), metavar="carry-bits")
@options.model
@options.solver(cross_check="--no-cross-check")
@options.emit_smt2
@options.output("ARCH-carry-bits-proof.json")
@options.replace_answers
@options.output_format()
def prove_cmd(what, arch, formats, overrides, solver, timeout, no_cross_check, output, force,
              replace_answers, out_format, wide):
    """Prove the fewest carry bits with which ARCH's block accumulator gives
    the same bits as an unbounded one for every finite input, with a
    replayed witness that one bit fewer is not enough."""
    where = api.proof_path(arch, formats, overrides, output=output, force=force)
    doc = api.prove_carry_bits(arch, formats=formats, overrides=overrides, solver=solver,
                               timeout=timeout, cross_check=not no_cross_check, prior=where.prior)
    q, run = doc["query"], doc["run"]
    people = show_result(doc, out_format, wide) if doc["vectors"] or out_format != "table" else True
    lines = [f"{q['model']}: {q['fewest']} carry bits suffice: no finite input overflows a "
             f"{q['fewest']}-carry-bit register (proved by {', '.join(run['proved_by'])})"]
    if doc["vectors"]:
        how = run["witness"]["solver"] or run["witness"]["formula"]
        lines.append(f"{q['fewest'] - 1} are not enough: the vector above gives other bits "
                     f"(found by {how}, replayed)")
    for line in lines:
        click.echo(line, err=not people)
    write_and_say(where.path, doc, f"{run['seconds']:.2f} s", err=not people,
                  replace_answers=replace_answers)


@click.command("properties")
@click.option("--arch", default="ampere", show_default=True, metavar="ARCH",
              help="The architecture whose hypotheses are listed.")
@options.output_format()
def properties_cmd(arch, out_format, wide):
    """List every property with its hypotheses on ARCH and a one-line
    description. A hypothesis is one value of the parameter the property
    asks about (its id is the value, e.g. rz); `tcsmt find PROPERTY`
    looks for inputs on which the hypotheses give different bits."""
    from tcsmt.report.tables import properties_csv, properties_table
    from tcsmt.report.terminal import console, terminal_width

    rows = api.properties(arch)
    if out_format == "json":
        options.echo_json(rows)
    elif out_format == "csv":
        click.echo(properties_csv(rows, arch), nl=False)
    else:
        width = terminal_width(wide)
        console(width).print(properties_table(rows, arch, width))


@click.command("regen")
@click.argument("archs", nargs=-1, metavar="[ARCH|MODEL]...")
@click.option("--property", "props", multiple=True, metavar="NAME", help="Only these properties.")
@click.option("--jobs", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help="Queries run at once in local worker processes (without a scheduler).")
@options.scheduler
@options.solver(cross_check=None, timeout_help="Seconds per solver question (part of each "
                "query's cache key).")
@click.option("--force", is_flag=True, help="Run every query, even those whose inputs have not changed.")
@options.replace_answers
@click.option("--root", type=click.Path(), default="results", show_default=True,
              callback=options.checked_folder, help="The folder of the result files.")
@click.option("--check", is_flag=True, help="Solve nothing: name every file the current code would "
              "write differently (or that is missing, or that no query writes any more); exit 1 "
              "when there is one.")
@options.emit_smt2
@click.option("--stale", is_flag=True, help="Run only the queries whose files --check names "
              "(missing or stale), whatever the cache says.")
@options.output_format()
def regen_cmd(archs, props, jobs, solver, timeout, force, replace_answers, root, check, stale, out_format,
              wide):
    """Regenerate every property for every shipped architecture and the
    models of tcsmt.regen.jobs.MODELS (or those named), skipping queries
    whose inputs have not changed. A file whose stable content (question,
    vectors, verdicts, proofs) comes out the same is left as it was. A bar
    on stderr shows the queries done and an estimate of the time left.

    \b
    Each query ends as one of:
      new        a file that did not exist
      changed    its vectors, verdicts or proofs differ from the file's
      unchanged  ran again; the file's stable content came out the same
      cached     not run: its question and code match the file's cache key
      skipped    the property does not apply to the architecture
      lost       an answer (a proof, a separating vector, a verdict) came
                 back unknown; the file is left as it was (--replace-answers
                 writes it)
      failed     an error (the note says which)

    With --check nothing is solved or written: each file's answers go
    through the code that writes it (witnesses replayed), and every file
    whose stable content would differ is named with the keys that differ."""
    from tcsmt.cli.progress import progress_bar
    from tcsmt.report.terminal import csv_text, terminal_width, wrap

    if check:
        sys.exit(_regen_check(archs, props, root, out_format))

    with progress_bar("regen") as progress:
        doc = api.regen(list(archs), list(props), jobs=jobs, solver=solver, timeout=timeout,
                        force=force, root=root, stale=stale, progress=progress,
                        replace_answers=replace_answers)
    rows = doc["outcomes"]
    if out_format == "json":
        options.echo_json(doc)
    elif out_format == "csv":
        keys = ["name", "status", "verdict", "seconds", "note"]
        click.echo(csv_text(keys, [[r[k] for k in keys] for r in rows]), nl=False)
    else:
        width = terminal_width(wide)
        for o in rows:
            if o["status"] in ("new", "changed", "failed", "lost"):
                extra = f" ({o['verdict']})" if o["verdict"] else ""
                for part in wrap(f"{o['status']:9} {o['name']}{extra} {o['seconds']:.1f} s {o['note']}",
                                 width, "  ", "            "):
                    click.echo(part.rstrip())
        click.echo("  " + ", ".join(f"{n} {s}" for s, n in sorted(doc["counts"].items())))
    if doc["counts"].get("failed") or doc["counts"].get("lost"):
        sys.exit(1)


def _regen_check(archs, props, root, out_format) -> int:
    """regen --check: print the stale files; the exit status."""
    doc = api.regen_check(list(archs), list(props), root=root)
    if out_format == "json":
        options.echo_json(doc)
    elif out_format == "csv":
        from tcsmt.report.terminal import csv_text
        click.echo(csv_text(["path", "why"], [[s["path"], s["why"]] for s in doc["stale"]]), nl=False)
    else:
        for s in doc["stale"]:
            click.echo(f"stale  {s['path']}: {s['why']}")
        click.echo(f"{len(doc['stale'])} stale of {doc['checked']} queries' files")
    return 1 if doc["stale"] else 0
