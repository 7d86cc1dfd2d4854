"""The run of `r42 up` once its runtime started: the staged wait, the banner, the console."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from services.cli.up_banner import banner, banner_title, next_line
from shared.config import Settings
from shared.errors import R42Error

if TYPE_CHECKING:
    from services.registry import ConsoleRun
    from shared.runtime import EmbeddedRuntime, RuntimeState

EXIT_FAILED = 1
READY_TIMEOUT_S = 90.0


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


ConsoleChoice = tuple["ConsoleRun | None", str]


def choose_console(settings: Settings, *, wanted: bool) -> asyncio.Task[ConsoleChoice]:
    """`console_choice` in a worker thread: the console's imports run while services start."""
    return asyncio.create_task(asyncio.to_thread(console_choice, settings, wanted=wanted))


async def until_stopped(
    *, settings: Settings, runtime: EmbeddedRuntime, state: RuntimeState, console: bool,
    stop: asyncio.Event, out: Console, err: Console,
    chosen: asyncio.Task[ConsoleChoice] | None = None,
) -> int:  # fmt: skip
    """Say where things are, open the console if there is one, wait for the end."""
    for note in runtime.notes:
        err.print(Text(note, style="yellow"), soft_wrap=True)
    chosen = chosen or choose_console(settings, wanted=console)
    run, console_note = await chosen
    # The console connects while the services start; it opens below the banner.
    opened = asyncio.Event()
    console_task = (
        asyncio.create_task(run(settings=_live(settings, runtime, state), opened=opened))
        if run is not None else None
    )  # fmt: skip
    try:
        return await _until_ready_then_run(
            settings=settings, runtime=runtime, state=state, run=run, console_note=console_note,
            stop=stop, out=out, err=err, console_task=console_task, opened=opened,
        )  # fmt: skip
    finally:
        if console_task is not None:  # ended, failed or never opened: nothing of it left
            console_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await console_task


def _live(settings: Settings, runtime: EmbeddedRuntime, state: RuntimeState) -> Settings:
    """The settings the console runs with: this run's bus, as the CLI's own NATS user."""
    update: dict[str, object] = {"nats_url": state.nats_url, "nats_replicas": state.stream_replicas}
    cli = runtime.users.get("cli")
    if state.nats_auth and cli is not None:
        update.update(nats_nkey_seed=cli.seed_file, nats_inbox_prefix=cli.inbox_prefix)
    return settings.model_copy(update=update)


async def _until_ready_then_run(
    *, settings: Settings, runtime: EmbeddedRuntime, state: RuntimeState, run: ConsoleRun | None,
    console_note: str, stop: asyncio.Event, out: Console, err: Console,
    console_task: asyncio.Task[None] | None, opened: asyncio.Event,
) -> int:  # fmt: skip
    """Wait for the chat path, then the banner and the console (or nothing) until the end."""
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
            stop=stop, out=out, err=err, later=later, console_task=console_task, opened=opened,
        )  # fmt: skip
    finally:
        if not later.done():  # stopping: the later stage starts nothing more
            later.cancel()
            with contextlib.suppress(asyncio.CancelledError, R42Error):
                await later


async def _after_ready(
    *, settings: Settings, runtime: EmbeddedRuntime, state: RuntimeState, run: ConsoleRun | None,
    console_note: str, stop: asyncio.Event, out: Console, err: Console,
    later: asyncio.Task[None], console_task: asyncio.Task[None] | None, opened: asyncio.Event,
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
    if console_task is None:
        try:
            await _until_done({stop_task}, later)
        finally:
            stop_task.cancel()
        return 0
    opened.set()
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
