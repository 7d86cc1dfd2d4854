"""`r42 events tail`: the live event stream, one line per event (or JSON lines)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TextIO

import nats
import typer
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
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
from shared.bus import NatsAuth, subscriptions_settled
from shared.bus.streams import STREAMS
from shared.config import build_settings, describe_settings_error, nats_servers
from shared.errors import BadInputError, BusError, ConfigError, R42Error
from shared.runtime import check_nats, display_url, pid_alive, read_state
from shared.runtime.nats_auth import TAIL_USER, inbox_prefix
from shared.runtime.session import client_auth


@dataclass(frozen=True)
class Target:
    """Where to tail: a URL and identity, and the data dir to re-read when `r42 up` restarts."""

    url: str
    auth: NatsAuth | None = None
    data_dir: Path | None = None


def resolve_target(*, data_dir: Path | None) -> Target:
    """NATS_URL if set, else the `r42 up` running on the data dir (as its reader user)."""
    try:
        settings = build_settings(**({"data_dir": data_dir} if data_dir else {}))
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {describe_settings_error(exc)}") from None
    if settings.nats_url:
        return Target(settings.nats_url, client_auth(settings))
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
    auth = None
    if state.nats_auth and state.users_dir:
        auth = NatsAuth(Path(state.users_dir) / f"{TAIL_USER}.nk", inbox_prefix(TAIL_USER))
    return Target(state.nats_url, auth, settings.data_dir)


def resolve_url(*, data_dir: Path | None) -> str:
    """NATS_URL if set, else the URL of the `r42 up` running on the data dir."""
    return resolve_target(data_dir=data_dir).url


def _moved(target: Target) -> Target | None:
    """The new target when `r42 up` restarted on another URL (or identity), else None."""
    if target.data_dir is None:
        return None
    state = read_state(target.data_dir)
    if state is None or not pid_alive(state.pid) or state.nats_url == target.url:
        return None
    return resolve_target(data_dir=target.data_dir)


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


def _subjects_for(subject_filter: str, auth: NatsAuth | None) -> list[str]:
    # A reader may watch every event subject but not `>` (that would include rpc replies):
    # the whole stream is the union of the streams' subjects.
    if subject_filter == ">" and auth is not None:
        return [subject for spec in STREAMS for subject in spec.subjects]
    return [subject_filter]


async def tail(
    *,
    url: str | None = None,
    target: Target | None = None,
    subject_filter: str,
    as_json: bool,
    count: int | None,
    timeout: float | None,  # noqa: ASYNC109 - the --timeout option: how long to tail
    out: TextIO,
    err: Console,
) -> int:
    """Subscribe (core NATS, no queue group: consumers are unaffected) and print until done.

    Following a data dir, a restarted `r42 up` is found again: same port, or the new URL in
    its state file.
    """
    target = target or Target(url or "")
    await check_nats(target.url, auth=target.auth)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    console = Console(file=out, highlight=False)
    seen = 0
    deadline = None if timeout is None else loop.time() + timeout
    gave_up = False
    try:
        first = True
        while True:
            status = _ConnectionStatus(err)
            following = target.data_dir is not None
            nc = await nats.connect(
                nats_servers(target.url), name="r42-events-tail", connect_timeout=3,
                reconnect_time_wait=0.5,
                max_reconnect_attempts=-1 if following else 30, error_cb=status.error,
                disconnected_cb=status.disconnected, reconnected_cb=status.reconnected,
                closed_cb=status.on_closed, **(target.auth.options() if target.auth else {}),
            )  # fmt: skip
            try:
                subs = [await nc.subscribe(s) for s in _subjects_for(subject_filter, target.auth)]
                await subscriptions_settled(nc, flush_timeout=5)
                if first:
                    err.print(
                        f"listening on {display_url(target.url)} for {subject_filter!r} "
                        "(Ctrl-C to stop)"
                    )
                else:
                    err.print(f"following r42 up at {display_url(target.url)}", style="green")
                first = False
                queue: asyncio.Queue[Msg] = asyncio.Queue()

                async def pump_sub(sub: Subscription, queue: asyncio.Queue[Msg] = queue) -> None:
                    async for msg in sub.messages:
                        await queue.put(msg)

                async def pump(queue: asyncio.Queue[Msg] = queue) -> None:
                    nonlocal seen
                    while True:
                        msg = await queue.get()
                        if is_internal(msg.subject) or is_consumer_delivery(msg.reply):
                            continue
                        view = parse_message(
                            msg.subject, msg.data, headers=msg.headers,
                            received_at=datetime.now(UTC),
                        )  # fmt: skip
                        if as_json:
                            out.write(render_json(view) + "\n")
                            out.flush()
                        else:
                            console.print(render_line(view), soft_wrap=True)
                        seen += 1
                        if count and seen >= count:
                            return

                async def watch_move(
                    status: _ConnectionStatus = status, target: Target = target
                ) -> Target:
                    # While disconnected, look for `r42 up` come back elsewhere.
                    while True:
                        await asyncio.sleep(1.0)
                        if status.down:
                            moved = await asyncio.to_thread(_moved, target)
                            if moved is not None:
                                return moved

                feeders = [asyncio.create_task(pump_sub(sub)) for sub in subs]
                waiters: set[asyncio.Task[object]] = {
                    asyncio.create_task(pump()),
                    asyncio.create_task(stop.wait()),
                    asyncio.create_task(status.closed.wait()),
                }
                mover = asyncio.create_task(watch_move()) if following else None
                if mover is not None:
                    waiters.add(mover)
                left = None if deadline is None else max(0.0, deadline - loop.time())
                await asyncio.wait(waiters, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                gave_up = status.closed.is_set()  # before our own close() sets it
                status.quiet = True
                for task in (*waiters, *feeders):
                    task.cancel()
                await asyncio.gather(*waiters, *feeders, return_exceptions=True)
                if mover is not None and mover.done() and not mover.cancelled():
                    with contextlib.suppress(Exception):
                        target = mover.result()
                        continue
            finally:
                status.quiet = True
                if not nc.is_closed:
                    await nc.close()
            break
        if gave_up and not stop.is_set() and not (count and seen >= count):
            err.print("gave up reconnecting to NATS (is `r42 up` still running?)", style="bold red")
            return 1
        return 0
    except BusError:
        raise
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


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
            target = resolve_target(data_dir=data_dir)
            code = asyncio.run(
                tail(
                    target=target, subject_filter=subject_filter, as_json=as_json, count=count,
                    timeout=timeout, out=sys.stdout, err=err,
                )
            )  # fmt: skip
        except R42Error as exc:
            err.print(Text(f"r42 events tail: {exc}", style="bold red"), soft_wrap=True)
            raise typer.Exit(2 if isinstance(exc, BadInputError) else 1) from None
        raise typer.Exit(code)
