"""Which modules a command line needs (standard library only: read before typer loads)."""

from __future__ import annotations

# Each module exposes register(app); imported lazily so nothing happens at import time, and
# only the module of the command being run is imported: the groups pull in the bus, the
# knowledge base and the image and eval libraries, which every command would otherwise pay
# for at start (seconds on a busy machine).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "up": ("services.cli.up",),
    "status": ("services.cli.status",),
    "creds": ("services.cli.creds",),
    "events": ("services.cli.events",),
    "kb": ("services.cli.kb", "services.cli.chat"),
    "ask": ("services.cli.kb", "services.cli.chat"),
    "ingest": ("services.cli.ingest",),
    "sources": ("services.cli.ingest",),
    "sync-handbook": ("services.cli.ingest",),
    "graph": ("services.cli.graph",),
    "ops": ("services.cli.ops",),
    "learn": ("services.cli.learn",),
    "content": ("services.cli.learn",),
    "quiz": ("services.cli.quiz",),
    "leaderboard": ("services.cli.quiz",),
    "gateway": ("services.cli.gateway",),
    "eval": ("services.cli.eval",),
}


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs: its command's, or all of them for help."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command == "version" or (command is None and "--version" in argv):
        return ()
    if command in COMMAND_MODULES:
        return COMMAND_MODULES[command]
    # `r42`, `r42 --help` or an unknown command: typer lists every command.
    return tuple(dict.fromkeys(m for mods in COMMAND_MODULES.values() for m in mods))


def start_fork_server_early(argv: list[str]) -> None:
    """For `r42 up` (not its help): start its fork server before anything else loads."""
    if modules_for(argv) == COMMAND_MODULES["up"] and not {"--help", "-h"} & set(argv):
        import os
        import sys

        from shared.runtime.forking import start_early

        start_early(os.environ, python=sys.executable)
