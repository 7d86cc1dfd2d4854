"""The console's base: non-blocking input and what every command group shares."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from rich.console import Console

from services.gateway.core import GatewayClient
from services.gateway.core.waiter import EventWaiter

InputFn = Callable[[str], str]
VIA = "console"


async def ask(prompt: str, input_fn: InputFn) -> str | None:
    """One line of input without blocking the loop; None at end of input (EOF / Ctrl-D)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            line: str | None = input_fn(prompt)
        except (EOFError, KeyboardInterrupt):
            line = None
        except Exception as exc:  # surface the reader's failure in the loop
            loop.call_soon_threadsafe(_settle, future, exc)
            return
        loop.call_soon_threadsafe(_settle, future, line)

    # A daemon thread, not the default executor: a pending input() must not block exit.
    threading.Thread(target=read, name="console-input", daemon=True).start()
    return await future


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if future.done():
        return
    if isinstance(value, BaseException):
        future.set_exception(value)
    else:
        future.set_result(value)


class ConsoleBase:
    """One console user: the client, the event waiter, the output and the input function."""

    def __init__(
        self,
        client: GatewayClient,
        waiter: EventWaiter,
        *,
        out: Console,
        input_fn: InputFn,
        user_id: str,
    ) -> None:
        self.client, self.waiter, self.out = client, waiter, out
        self.input_fn, self.user = input_fn, user_id

    async def prompt(self, text: str) -> str | None:
        """Ask the user for a line."""
        return await ask(text, self.input_fn)
