"""The `r42` console script: `r42 up` starts its fork server before typer and rich load.

The fork server imports what every service needs while this process goes on importing
its own; the ~0.1 s the command line library takes to load is then not spent before it.
"""

from __future__ import annotations

import os
import sys

from services.cli.commands import wants_fork_server


def main() -> None:
    """Start `r42 up`'s fork server if that is the command, then run the CLI."""
    if wants_fork_server([arg for arg in sys.argv[1:] if arg != "--debug"]):
        from shared.runtime.forking import start_early

        start_early(os.environ, python=sys.executable)
    from services.cli.main import main as run

    run()
