"""`r42 up`: NATS, every service under a supervisor, and the console chat, in one command."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from services.cli.up_session import EXIT_FAILED, choose_console, until_stopped
from shared.config import Settings, build_settings, describe_settings_error
from shared.errors import R42Error
from shared.runtime.launch import defer_imports
from shared.runtime.nodes import check_cluster_size
from shared.runtime.supervisor import RestartPolicy, ServiceSpec, SupervisorEvent, replicate

EXIT_USAGE = 2
LATER = frozenset({"content", "telemetry"})
"""Services started once the chat path (r42, extractor, quiz, the gateways) answers: their
work arrives on durable JetStream consumers, so starting a moment later loses nothing, and
on two cores the first answer no longer waits for their imports."""


class _Reporter:
    """Prints supervisor events that matter to a person watching the terminal."""

    def __init__(self, err: Console) -> None:
        self.err = err
        self.seen: set[str] = set()

    def __call__(self, event: SupervisorEvent) -> None:
        name = event.service
        if event.kind == "started":
            # A NATS node's first start is not an event: any "started" of one is a restart.
            if name in self.seen or name.startswith("nats"):
                self._say(f"[{name}] restarted (pid {event.pid})", "green")
            self.seen.add(name)
        elif event.kind == "exited":
            self._say(f"[{name}] {event.message}", "yellow")
        elif event.kind == "restarting":
            self._say(f"[{name}] restarting in {event.delay_s:g} s", "yellow")
        elif event.kind == "gave_up":
            self._say(f"[{name}] {event.message}", "bold red")
        elif event.kind == "killed":
            self._say(f"[{name}] did not stop in time; killed", "red")

    def _say(self, text: str, style: str) -> None:
        self.err.print(Text(text, style=style), soft_wrap=True)


async def serve(
    *, settings: Settings, services: tuple[ServiceSpec, ...], console: bool, out: Console,
    err: Console, cluster: int = 1, replicas: int = 1, later: frozenset[str] = LATER,
    policy: RestartPolicy | None = None, fork_server: bool = False,
) -> int:  # fmt: skip
    """Start everything, wait for Ctrl-C / SIGTERM (or the console to end), stop everything.

    The services named in `later` start once the others answer (a staged start).
    """
    from shared.runtime import EmbeddedRuntime

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    runtime = EmbeddedRuntime(
        data_dir=settings.data_dir, services=services, nats_url=settings.nats_url,
        on_event=_Reporter(err), store_url=settings.store_url, cluster=cluster,
        replicas=replicas, later=later, policy=policy, fork_server=fork_server,
    )  # fmt: skip
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            stop.set()
        else:
            err.print("second interrupt: killing services now", style="red")
            runtime.kill()

    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    for sig in handled:
        loop.add_signal_handler(sig, on_signal)
    try:
        # The console's imports (the gateway client) run while NATS and the services start.
        chosen = choose_console(settings, wanted=console)
        # A signal during start-up is honoured right after it: cancelling mid-way could
        # leave a nats-server starting in a worker thread with nobody to stop it.
        try:
            state = await runtime.start()
        except R42Error as exc:
            err.print(Text(f"r42 up: {exc}", style="bold red"), soft_wrap=True)
            with contextlib.suppress(Exception):
                await chosen
            return EXIT_FAILED
        try:
            rc = await until_stopped(
                settings=settings, runtime=runtime, state=state, console=console, stop=stop,
                out=out, err=err, chosen=chosen,
            )  # fmt: skip
        except R42Error as exc:
            err.print(Text(f"r42 up: {exc}", style="bold red"), soft_wrap=True)
            rc = EXIT_FAILED
        finally:
            err.print("stopping services and NATS…", style="dim")
            await runtime.stop()
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
    err.print("stopped; nothing left running", style="dim")
    return rc


def with_teams(services: tuple[ServiceSpec, ...], settings: Settings) -> tuple[ServiceSpec, ...]:
    """Add the Teams gateway (beside Slack's) when TEAMS_APP_ID is set and a gateway runs."""
    if not settings.teams_app_id or not any(s.module == "services.gateway" for s in services):
        return services
    if any(s.name == "gateway-teams" for s in services):
        return services
    return (*services, ServiceSpec("gateway-teams", "services.gateway", ("--teams",)))


def without_idle_gateway(
    services: tuple[ServiceSpec, ...], settings: Settings
) -> tuple[tuple[ServiceSpec, ...], str | None]:
    """Drop the Slack gateway when it would only idle, and say why (None: nothing dropped).

    Without both Slack tokens the gateway serves nothing (services/gateway/app.py: Slack
    "off" has no consumers and no connection): its process would hold ~65 MB for no work.
    """
    if settings.slack_bot_token and settings.slack_app_token:
        return services, None
    kept = tuple(s for s in services if not (s.module == "services.gateway" and not s.args))
    if len(kept) == len(services):
        return services, None
    return kept, (
        "gateway not started: Slack is off (SLACK_BOT_TOKEN and SLACK_APP_TOKEN are not both "
        "set); the console is the interface (`-s gateway` starts it anyway)"
    )


def run_up(
    *, data_dir: Path | None, console: bool, service_names: list[str], cluster: int = 1,
    replicas: int = 1,
) -> int:  # fmt: skip
    """Validate the options, then serve until stopped; returns the exit code."""
    # Before nats-py is imported: this process talks to NATS over TCP only (see launch.py).
    defer_imports()
    err = Console(stderr=True, highlight=False)
    try:
        check_cluster_size(cluster)
        replicate((), replicas)
    except R42Error as exc:
        err.print(Text(f"r42 up: {exc}", style="bold red"), soft_wrap=True)
        return EXIT_USAGE
    try:
        settings = build_settings(**({"data_dir": data_dir} if data_dir else {}))
    except ValidationError as exc:
        # Locations and messages only: the rejected input may be a secret.
        problems = describe_settings_error(exc)
        err.print(Text(f"r42 up: invalid settings: {problems}", style="bold red"), soft_wrap=True)
        return EXIT_USAGE
    if not settings.fork_server:
        from shared.runtime.forking import discard_early

        discard_early()
    from services.registry import available_services, select_services

    try:
        services = select_services(service_names) if service_names else available_services()
    except R42Error as exc:
        err.print(Text(f"r42 up: {exc}", style="bold red"), soft_wrap=True)
        return EXIT_USAGE
    services = with_teams(services, settings)
    if not service_names:
        services, dropped = without_idle_gateway(services, settings)
        if dropped:
            err.print(Text(dropped, style="dim"), soft_wrap=True)
    if cluster > 1 and settings.nats_url:
        err.print(
            Text("r42 up: --cluster starts its own NATS nodes; unset NATS_URL", style="bold red"),
            soft_wrap=True,
        )
        return EXIT_USAGE
    out = Console(highlight=False)
    return asyncio.run(
        serve(
            settings=settings,
            services=services,
            console=console,
            out=out,
            err=err,
            cluster=cluster,
            replicas=replicas,
            fork_server=settings.fork_server,
        )
    )


def register(app: typer.Typer) -> None:
    """Register `r42 up` on the root app."""

    @app.command()
    def up(
        data_dir: Annotated[
            Path | None,
            typer.Option("--data-dir", help="Where NATS, the store and logs live [R42_DATA_DIR]."),
        ] = None,
        no_console: Annotated[
            bool, typer.Option("--no-console", help="Run headless until Ctrl-C / SIGTERM.")
        ] = False,
        service: Annotated[
            list[str] | None,
            typer.Option(
                "--service",
                "-s",
                help="Run only this service (repeatable): a known name, or name=python.module.",
            ),
        ] = None,
        cluster: Annotated[
            int,
            typer.Option(
                "--cluster",
                help="NATS nodes: 1, or 3 / 5 for a loopback JetStream cluster (streams at R3).",
            ),
        ] = 1,
        replicas: Annotated[
            int,
            typer.Option(
                "--replicas",
                help="Copies of each service sharing its consumers (the gateway runs once).",
            ),
        ] = 1,
    ) -> None:
        """Start R42 here: NATS, every service, and the console chat."""
        code = run_up(
            data_dir=data_dir,
            console=not no_console,
            service_names=service or [],
            cluster=cluster,
            replicas=replicas,
        )
        raise typer.Exit(code)
