"""`r42 gateway [--http | --teams] [--port N] [--host H]`: run a gateway surface service."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the `gateway` command."""

    @app.command("gateway")
    def gateway(
        http: Annotated[
            bool, typer.Option("--http", help="Serve /slack/events over HTTP.")
        ] = False,
        teams: Annotated[
            bool, typer.Option("--teams", help="Serve Microsoft Teams' /api/messages.")
        ] = False,
        port: Annotated[
            int | None, typer.Option("--port", help="HTTP port (Slack 3000, Teams 3978).")
        ] = None,
        host: Annotated[str | None, typer.Option("--host", help="HTTP bind address.")] = None,
    ) -> None:
        """Run the Slack gateway (Socket Mode, or HTTP with --http) or Teams with --teams."""
        from services.gateway.__main__ import main

        if http and teams:
            raise typer.BadParameter("choose one of --http and --teams")
        argv = ["--http"] if http else ["--teams"] if teams else []
        if port is not None:
            argv += ["--port", str(port)]
        if host is not None:
            argv += ["--host", host]
        main(argv)
