"""`r42 up`: NATS, every service under a supervisor, and the console chat, in one command."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from services.cli.up_banner import banner, banner_title, next_line
from shared.config import Settings, build_settings, describe_settings_error
from shared.errors import R42Error
from shared.runtime.launch import defer_imports
from shared.runtime.nodes import check_cluster_size
from shared.runtime.supervisor import RestartPolicy, ServiceSpec, SupervisorEvent, replicate

if TYPE_CHECKING:
    from services.registry import ConsoleRun
    from shared.runtime import EmbeddedRuntime, RuntimeState

EXIT_USAGE = 2
EXIT_FAILED = 1
READY_TIMEOUT_S = 90.0
LATER = frozenset({"content", "telemetry"})
"""Services started once the chat path (r42, extractor, quiz, the gateways) answers: their
work arrives on durable JetStream consumers, so starting a moment later loses nothing, and
on two cores the first answer no longer waits for their imports."""


def console_choice(settings: Settings, *, wanted: bool) -> tuple[ConsoleRun | None, str]:
    """The console entry to run (or None) and a line saying why."""
    if not wanted:
        return None, "off (--no-console)"
    if not sys.stdin.isatty():
        return None, "off (stdin is not a terminal)"
    if settings.slack_bot_token and settings.slack_app_token:
        return None, "off: Slack tokens are set, R42 answers in Slack"
    from services.registry import resolve_console

    try:
        run = resolve_console()
    except R42Error as exc:
        return None, f"unavailable: {exc}"
    if run is None:
        return None, "not available yet (the gateway's console is not installed)"
    return run, "below: type a question, /help for commands"


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


async def _later_stage(runtime: EmbeddedRuntime, *, err: Console, quiet: bool) -> None:
    """Start the services a first answer does not need, once the chat path answers."""
    if not runtime.later:
        return
    await runtime.start_later()
    await runtime.wait_ready(timeout=READY_TIMEOUT_S, names=runtime.later)
    if not quiet:  # above the console a line would land inside the prompt
        err.print(f"every service answers now ({', '.join(runtime.later)} too)", style="dim")


async def _until_done(ends: set[asyncio.Task[Any]], later: asyncio.Task[None]) -> None:
    """Wait for the first of `ends`; a failing later stage ends the wait by raising."""
    pending: set[asyncio.Task[Any]] = {*ends, later}
    while True:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if later in done:
            later.result()  # raises ServicesNotReadyError; a clean end just leaves `ends`
        if done & ends:
            return


async def _until_stopped(
    *, settings: Settings, runtime: EmbeddedRuntime, state: RuntimeState, console: bool,
    stop: asyncio.Event, out: Console, err: Console,
) -> int:  # fmt: skip
    """Say where things are, open the console if there is one, wait for the end."""
    for note in runtime.notes:
        err.print(Text(note, style="yellow"), soft_wrap=True)
    run, console_note = console_choice(settings, wanted=console)
    # Above the console its language already (the banner follows in Dutch).
    waiting = (
        "wachten tot de chat antwoordt…" if run else "waiting for the chat path to answer…"
    ) if runtime.later else (
        "wachten tot elke dienst antwoordt…" if run else "waiting for every service to answer…"
    )  # fmt: skip
    err.print(waiting, style="dim")
    # "Up" means the chat path answers: a question typed at the prompt finds its services.
    # The later stage (durable consumers only) starts then and loses nothing by it.
    ready = asyncio.create_task(runtime.wait_ready(timeout=READY_TIMEOUT_S, names=runtime.first))
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({ready, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if not ready.done():  # Ctrl-C while starting
        ready.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ready
        return 0
    ready.result()  # raises ServicesNotReadyError
    later = asyncio.create_task(_later_stage(runtime, err=err, quiet=run is not None))
    try:
        return await _after_ready(
            settings=settings, runtime=runtime, state=state, run=run, console_note=console_note,
            stop=stop, out=out, err=err, later=later,
        )  # fmt: skip
    finally:
        if not later.done():  # stopping: the later stage starts nothing more
            later.cancel()
            with contextlib.suppress(asyncio.CancelledError, R42Error):
                await later


async def _after_ready(
    *, settings: Settings, runtime: EmbeddedRuntime, state: RuntimeState, run: ConsoleRun | None,
    console_note: str, stop: asyncio.Event, out: Console, err: Console,
    later: asyncio.Task[None],
) -> int:  # fmt: skip
    """The banner, then the console (or nothing) until the end."""
    dutch = run is not None  # above the (Dutch) console, the banner is part of that surface
    out.print(Text(banner_title(dutch=dutch), style="bold green"))
    rows = banner(
        settings=settings, state=state, runtime=runtime, console_note=console_note, dutch=dutch
    )
    for key, value in rows:
        out.print(Text.assemble((f"  {key:<9} ", "bold"), value), soft_wrap=True)
    out.print(next_line(console=run is not None, dutch=dutch), soft_wrap=True)
    stop_task = asyncio.create_task(stop.wait())
    if run is None:
        try:
            await _until_done({stop_task}, later)
        finally:
            stop_task.cancel()
        return 0
    update: dict[str, object] = {"nats_url": state.nats_url, "nats_replicas": state.stream_replicas}
    cli = runtime.users.get("cli")
    if state.nats_auth and cli is not None:
        update.update(nats_nkey_seed=cli.seed_file, nats_inbox_prefix=cli.inbox_prefix)
    live = settings.model_copy(update=update)
    console_task = asyncio.create_task(run(settings=live))
    try:
        await _until_done({console_task, stop_task}, later)
    finally:
        stop_task.cancel()
        if not console_task.done():
            console_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await console_task
    if not console_task.cancelled() and console_task.exception() is not None:
        exc = console_task.exception()
        why = str(exc) if isinstance(exc, R42Error) else f"{type(exc).__name__}: {exc}"
        err.print(Text(f"console failed: {why}", style="bold red"), soft_wrap=True)
        return EXIT_FAILED
    return 0


async def serve(
    *, settings: Settings, services: tuple[ServiceSpec, ...], console: bool, out: Console,
    err: Console, cluster: int = 1, replicas: int = 1, later: frozenset[str] = LATER,
    policy: RestartPolicy | None = None,
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
        replicas=replicas, later=later, policy=policy,
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
        # A signal during start-up is honoured right after it: cancelling mid-way could
        # leave a nats-server starting in a worker thread with nobody to stop it.
        try:
            state = await runtime.start()
        except R42Error as exc:
            err.print(Text(f"r42 up: {exc}", style="bold red"), soft_wrap=True)
            return EXIT_FAILED
        try:
            rc = await _until_stopped(
                settings=settings, runtime=runtime, state=state, console=console, stop=stop,
                out=out, err=err,
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
