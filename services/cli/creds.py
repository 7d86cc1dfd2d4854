"""`r42 creds NAME --role uploader|reader`: an nkey user for an external client."""

from __future__ import annotations

import os
import signal
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from shared.config import build_settings
from shared.errors import R42Error
from shared.runtime import find_running
from shared.runtime.nats_auth import add_client, all_users, authorization_block
from shared.runtime.nats_server import EmbeddedNatsServer


class Role(StrEnum):
    """What the client may do on the bus."""

    uploader = "uploader"
    reader = "reader"


def reload_running(data_dir: Path) -> str:
    """Rewrite the running server's users and make it re-read them (SIGHUP); say what happened."""
    state = find_running(data_dir)
    if state is None or not state.nats_pid or not state.nats_store or not state.users_dir:
        return "no embedded r42 is running here; the user is active from the next `r42 up`"
    users = all_users(Path(state.users_dir), list(state.services))
    server = EmbeddedNatsServer(Path(state.nats_store), authorization=authorization_block(users))
    server.write_config()
    # Only a process whose command line proves it is our server gets the signal.
    try:
        cmd = Path(f"/proc/{state.nats_pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        cmd = []
    if not cmd or Path(cmd[0].decode(errors="replace")).name != "nats-server":
        return "the recorded nats-server is gone; the user is active from its next start"
    os.kill(state.nats_pid, signal.SIGHUP)
    return f"reloaded the running nats-server (pid {state.nats_pid})"


def register(app: typer.Typer) -> None:
    """Register `r42 creds`."""

    @app.command()
    def creds(
        name: Annotated[str, typer.Argument(help="Client name (lowercase, digits, - or _).")],
        role: Annotated[Role, typer.Option("--role", help="uploader or reader.")],
        data_dir: Annotated[Path | None, typer.Option("--data-dir", help="[R42_DATA_DIR]")] = None,
    ) -> None:
        """Create a NATS user for an external client; prints its seed file's path last."""
        settings = build_settings(**({"data_dir": data_dir} if data_dir else {}))
        users_dir = settings.data_dir.expanduser().resolve() / "nats" / "users"
        try:
            user = add_client(users_dir, name, role.value)
            note = reload_running(settings.data_dir)
        except R42Error as exc:
            typer.echo(f"r42 creds: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(f"{role.value} {name}: nkey {user.public_key}; inbox prefix {user.inbox_prefix}")
        typer.echo(note)
        typer.echo(str(user.seed_file))
