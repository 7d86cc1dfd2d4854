"""`r42 gateway [--http] [--port N] [--host H]`: run the Slack gateway service."""

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
        port: Annotated[
            int | None, typer.Option("--port", help="HTTP port (default 3000).")
        ] = None,
        host: Annotated[str | None, typer.Option("--host", help="HTTP bind address.")] = None,
    ) -> None:
        """Run the Slack gateway: Socket Mode with SLACK_APP_TOKEN, or HTTP with --http."""
        from services.gateway.__main__ import main

        argv = ["--http"] if http else []
        if port is not None:
            argv += ["--port", str(port)]
        if host is not None:
            argv += ["--host", host]
        main(argv)
