"""The ``tcsmt`` command line.

Every command ends bad input with ``error: <one line>`` and exit code 2;
set TCSMT_DEBUG=1 to see a traceback of an internal error.
"""

from __future__ import annotations

import os
import sys

import click

from tcsmt import invocation
from tcsmt.errors import AnswersLost, BudgetExceeded, InternalError, UserError

OPTS = dict(help_option_names=["-h", "--help"], max_content_width=100)


class _Group(click.Group):
    """The tcsmt group; remembers its arguments for the files it writes."""

    def main(self, args=None, *rest, **kw):
        invocation.ARGS = list(args) if args is not None else sys.argv[1:]
        return super().main(args, *rest, **kw)

    def invoke(self, ctx):
        """Ctrl-C and a stray EOFError leave the command as themselves
        (click would print an empty line and call both "Abort")."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted() from None
        except EOFError as e:
            raise InternalError(f"EOFError: {e}") from None


class _Interrupted(Exception):
    """Ctrl-C during a command."""


@click.group(cls=_Group, context_settings=OPTS)
@click.version_option(package_name="tcsmt", message="tcsmt %(version)s")
def cli():
    """Bit-accurate models of GPU matrix units (tensor cores), as a simulator
    and as SMT formulas that find the inputs telling hypotheses apart.

    \b
    Start with:
      tcsmt models                          the shipped architecture models
      tcsmt simulate --arch ampere --a 0x3c00 --b 0x3c00 --c 0x0 --explain
      tcsmt conformance data/hwdata         replay recorded GPU outputs
      tcsmt check obs.json --arch hopper    your GPU's outputs against a model
      tcsmt params                          every parameter a model has
      tcsmt error volta hopper --plot e.png the error of C + A @ B against exact sums
    """


# ---------------------------------------------------------------------------
# The commands, and how errors end them
# ---------------------------------------------------------------------------

def _register() -> None:
    from tcsmt.cli import (
        accuracy,
        agreement,
        cases,
        check,
        find,
        gemm,
        harness,
        identify,
        models,
        params,
        smt,
    )
    for command in (models.models_cmd, models.simulate_cmd, models.conformance_cmd, check.check,
                    params.params, params.model_group,
                    find.find_cmd, find.prove_cmd, find.properties_cmd, find.regen_cmd,
                    smt.diff, smt.equiv, smt.replay, gemm.gemm, accuracy.error_cmd,
                    agreement.agreement_cmd,
                    harness.harness,
                    identify.plan, identify.identify,
                    cases.compare_algorithms, cases.coverage):
        cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Run the command line; every error ends in one line on stderr: bad
    input ``error: ...`` (exit 2), a bug ``internal error: ...`` (exit 3;
    TCSMT_DEBUG=1 shows the traceback). SIGTERM ends a command as Ctrl-C
    does; the TCSMT_* variables are checked before any command runs; an
    allocation that fails is the one line of a BudgetExceeded; no file the
    command reads is written over (api.begin_command)."""
    from tcsmt import api
    try:
        api.begin_command()
        cli.main(args=argv, prog_name="tcsmt", standalone_mode=False)
    except MemoryError:
        click.echo(f"error: {api.out_of_memory()}", err=True)
        sys.exit(BudgetExceeded.exit_code)
    except UserError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except AnswersLost as e:
        click.echo(str(e), err=True)
        sys.exit(e.exit_code)
    except InternalError as e:
        _internal(e)
    except (click.exceptions.Abort, KeyboardInterrupt, _Interrupted):
        click.echo("error: interrupted", err=True)
        sys.exit(130)
    except click.exceptions.UsageError as e:
        if type(e).__name__.startswith("NoArgsIsHelp"):   # click >= 8.2: bare group prints help
            click.echo(e.ctx.get_help() if e.ctx else str(e))
            sys.exit(0)
        if e.ctx and " " in e.ctx.command_path:
            hint = f" (see 'tcsmt {e.ctx.command_path.split(' ', 1)[1]} --help')"
        else:
            hint = " (see 'tcsmt --help')"
        click.echo(f"error: {e.format_message()}{hint}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:
        click.echo(f"error: {e.format_message()}", err=True)
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # an internal error, not bad input
        _internal(e)


def _internal(e: Exception) -> None:
    if os.environ.get("TCSMT_DEBUG"):
        raise e
    click.echo(f"internal error: {type(e).__name__}: {e} (nothing written; set TCSMT_DEBUG=1 for "
               "a traceback)", err=True)
    sys.exit(3)


if __name__ == "__main__":
    main()
