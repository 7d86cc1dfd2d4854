"""The `r42` console script: `r42 up` starts its fork server before typer and rich load.

The fork server imports what every service needs while this process goes on importing
its own; the ~0.1 s the command line library takes to load is then not spent before it.
"""

from __future__ import annotations

import sys

from services.cli.commands import start_fork_server_early


def main() -> None:
    """Start `r42 up`'s fork server if that is the command, then run the CLI."""
    start_fork_server_early(sys.argv[1:])
    from services.cli.main import main as run

    run()
