"""The `r42` command line (the console script enters through services.cli.entry)."""

from __future__ import annotations

import importlib
import logging
import os
import sys
from importlib.metadata import version as dist_version
from typing import Annotated

import typer

from services.cli.commands import COMMAND_MODULES as COMMAND_MODULES
from services.cli.commands import modules_for, start_fork_server_early


def build_app(argv: list[str] | None = None) -> typer.Typer:
    """Build the typer application with the command groups this command line needs."""
    app = typer.Typer(
        name="r42",
        help="R42: the learning platform that answers from the company knowledge graph.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def root(
        _version: Annotated[
            bool,
            typer.Option(
                "--version",
                help="Print the R42 version and exit.",
                is_eager=True,
                callback=_print_version,
            ),
        ] = False,
        _debug: Annotated[
            bool,
            typer.Option(
                "--debug", help="Show library logs and tracebacks (anywhere on the command line)."
            ),
        ] = False,
    ) -> None:
        """R42 command line."""
        # Checked once for every command: a bad setting is one line and exit 2, never a
        # traceback from deep inside a command.
        from pydantic import ValidationError

        from shared.config import build_settings, describe_settings_error

        try:
            build_settings()
        except ValidationError as exc:
            typer.echo(f"r42: invalid settings: {describe_settings_error(exc)}", err=True)
            raise typer.Exit(2) from None

    @app.command()
    def version() -> None:
        """Print the R42 version."""
        _print_version(True)

    for name in modules_for(argv or []):
        importlib.import_module(name).register(app)
    return app


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"r42 {dist_version('r42')}")
        raise typer.Exit()


# A reader that went away (`r42 … | head`) ends the command like any Unix filter:
# quietly, with the shell's code for a SIGPIPE death (128 + 13).
BROKEN_PIPE_EXIT = 141


def _is_devnull(fd: int) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(os.devnull))
    except OSError:
        return False


class OneLineFormatter(logging.Formatter):
    """`r42: <message>`: the reason in one line, never a traceback or an exception repr."""

    def format(self, record: logging.LogRecord) -> str:
        """The record's message only (its exception is what the command reports itself)."""
        return f"r42: {record.getMessage().splitlines()[0] if record.getMessage() else ''}"


def quiet_logging(argv: list[str]) -> list[str]:
    """Library logs in a command: errors only, one line each; `--debug` shows everything.

    Replaces logging's last-resort handler (used only while nothing configured logging), so
    a command that runs a service (`r42 gateway`) still sets up its own log format.
    """
    debug = "--debug" in argv
    handler = logging.StreamHandler(sys.stderr)
    if debug:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logging.getLogger().setLevel(logging.DEBUG)
    else:
        handler.setLevel(logging.ERROR)
        handler.setFormatter(OneLineFormatter())
    logging.lastResort = handler
    return [arg for arg in argv if arg != "--debug"]


def main() -> None:
    """Run the CLI."""
    argv = quiet_logging(sys.argv[1:])
    # Its services' common imports run in the fork server while this process imports (a
    # no-op when the `r42` script came in through services.cli.entry, which started it).
    start_fork_server_early(argv)
    stdout, fd = sys.stdout, sys.stdout.fileno()
    was_devnull = _is_devnull(fd)
    try:
        try:
            build_app(argv)(args=argv, prog_name="r42")
        except SystemExit:
            # On EPIPE click exits 1 after swapping stdout for a flush-pacifying wrapper, and
            # rich exits 1 after pointing the descriptor at /dev/null: both are this case.
            if sys.stdout is not stdout or (not was_devnull and _is_devnull(fd)):
                raise BrokenPipeError from None
            raise
        finally:
            sys.stdout.flush()
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        sys.exit(BROKEN_PIPE_EXIT)
