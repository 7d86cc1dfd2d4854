"""`r42 events tail`: the live event stream, one line per event (or JSON lines)."""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TextIO

import nats
import typer
from nats.errors import SlowConsumerError, StaleConnectionError, UnexpectedEOF
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from services.cli.event_format import (
    check_filter,
    is_consumer_delivery,
    is_internal,
    parse_message,
    render_json,
    render_line,
)
from shared.config import build_settings
from shared.errors import BadInputError, ConfigError, R42Error
from shared.runtime import check_nats, display_url, pid_alive, read_state


def resolve_url(*, data_dir: Path | None) -> str:
    """NATS_URL if set, else the URL of the `r42 up` running on the data dir."""
    try:
        settings = build_settings(**({"data_dir": data_dir} if data_dir else {}))
    except ValidationError as exc:
        # Locations and messages only: the rejected input may be a secret.
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid settings: {problems}") from None
    if settings.nats_url:
        return settings.nats_url
    where = settings.data_dir.resolve()
    state = read_state(settings.data_dir)
    if state is None:
        raise ConfigError(
            f"nothing to watch: NATS_URL is not set and no `r42 up` runs on {where}; "
            "start one with `r42 up` (or pass --data-dir / set NATS_URL)"
        )
    if not pid_alive(state.pid):
        raise ConfigError(
            f"`r42 up` is not running on {where} (its pid {state.pid} is gone; the state file "
            "is stale); start it again with `r42 up`"
        )
    return state.nats_url


_CONNECTION_ERRORS = (
    OSError,
    TimeoutError,
    UnexpectedEOF,
    StaleConnectionError,
)


class _ConnectionStatus:
    """nats-py callbacks that tell the person once per incident, not on every retry."""

    def __init__(self, err: Console) -> None:
        self.err = err
        self.closed = asyncio.Event()
        self.quiet = False
        self.down = False
        self.warned: set[str] = set()

    async def error(self, exc: Exception) -> None:
        """Report a slow-consumer drop or a server error once per kind."""
        if isinstance(exc, _CONNECTION_ERRORS):
            return  # reported by disconnected() / the closed exit
        kind = type(exc).__name__
        if kind in self.warned:
            return
        self.warned.add(kind)
        if isinstance(exc, SlowConsumerError):
            text = "falling behind: NATS dropped events for this tail (services are unaffected)"
        else:
            text = f"nats: {kind} {display_url(str(exc))}"
        self.err.print(text, style="yellow", soft_wrap=True)

    async def disconnected(self) -> None:
        """Say once that the connection dropped."""
        if not (self.quiet or self.down):
            self.down = True
            self.err.print("lost the connection to NATS; reconnecting…", style="yellow")

    async def reconnected(self) -> None:
        """Say that events flow again."""
        self.down = False
        self.err.print("reconnected", style="green")

    async def on_closed(self) -> None:
        """The client gave up for good."""
        self.closed.set()


async def tail(
    *,
    url: str,
    subject_filter: str,
    as_json: bool,
    count: int | None,
    timeout: float | None,  # noqa: ASYNC109 - the --timeout option: how long to tail
    out: TextIO,
    err: Console,
) -> int:
    """Subscribe (core NATS, no queue group: consumers are unaffected) and print until done."""
    await check_nats(url)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    status = _ConnectionStatus(err)
    nc = await nats.connect(
        url, name="r42-events-tail", connect_timeout=3, reconnect_time_wait=1,
        max_reconnect_attempts=30, error_cb=status.error, disconnected_cb=status.disconnected,
        reconnected_cb=status.reconnected, closed_cb=status.on_closed,
    )  # fmt: skip
    console = Console(file=out, highlight=False)
    seen = 0
    try:
        sub = await nc.subscribe(subject_filter)
        await nc.flush(timeout=5)
        err.print(f"listening on {display_url(url)} for {subject_filter!r} (Ctrl-C to stop)")

        async def pump() -> None:
            nonlocal seen
            async for msg in sub.messages:
                if is_internal(msg.subject) or is_consumer_delivery(msg.reply):
                    continue
                view = parse_message(
                    msg.subject, msg.data, headers=msg.headers, received_at=datetime.now(UTC)
                )
                if as_json:
                    out.write(render_json(view) + "\n")
                    out.flush()
                else:
                    console.print(render_line(view), soft_wrap=True)
                seen += 1
                if count and seen >= count:
                    return

        waiters = {
            asyncio.create_task(pump()),
            asyncio.create_task(stop.wait()),
            asyncio.create_task(status.closed.wait()),
        }
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        status.quiet = True
        for task in waiters:
            task.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        if status.closed.is_set() and not stop.is_set() and not (count and seen >= count):
            err.print("gave up reconnecting to NATS (is `r42 up` still running?)", style="bold red")
            return 1
        return 0
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        status.quiet = True
        if not nc.is_closed:
            await nc.close()


def register(app: typer.Typer) -> None:
    """Register `r42 events …` on the root app."""
    events = typer.Typer(help="Watch the event bus.", no_args_is_help=True)
    app.add_typer(events, name="events")

    @events.command("tail")
    def tail_cmd(
        subject_filter: Annotated[
            str, typer.Argument(metavar="[SUBJECT_FILTER]", help="e.g. 'source.>' or 'llm.*.*'")
        ] = ">",
        as_json: Annotated[bool, typer.Option("--json", help="JSON lines (full payload).")] = False,
        data_dir: Annotated[
            Path | None, typer.Option("--data-dir", help="Find `r42 up` here [R42_DATA_DIR].")
        ] = None,
        count: Annotated[
            int | None, typer.Option("--count", min=1, help="Exit after N events.")
        ] = None,
        timeout: Annotated[
            float | None, typer.Option("--timeout", min=0.1, help="Exit after S seconds.")
        ] = None,
    ) -> None:
        """Print events as they happen (Ctrl-C to stop)."""
        err = Console(stderr=True, highlight=False)
        try:
            check_filter(subject_filter)
            url = resolve_url(data_dir=data_dir)
            code = asyncio.run(
                tail(
                    url=url, subject_filter=subject_filter, as_json=as_json, count=count,
                    timeout=timeout, out=sys.stdout, err=err,
                )
            )  # fmt: skip
        except R42Error as exc:
            err.print(Text(f"r42 events tail: {exc}", style="bold red"), soft_wrap=True)
            raise typer.Exit(2 if isinstance(exc, BadInputError) else 1) from None
        raise typer.Exit(code)
