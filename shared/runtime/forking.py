"""The supervisor's side of the fork server (shared/runtime/zygote.py) and the forked child."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from shared.errors import R42Error
from shared.runtime.launch import SUPERVISOR_PID_ENV
from shared.runtime.zygote import ForkRequest, set_child_subreaper

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 30.0
"""The preload takes ~1 s alone and several on a loaded machine; past this, spawn plainly."""
REPLY_TIMEOUT_S = 10.0
ZYGOTE_MODULE = "shared.runtime.zygote"


class ForkServerError(R42Error):
    """The fork server cannot fork this service (the supervisor spawns it plainly)."""


class ForkedProcess:
    """A service the fork server forked and this process adopted: waited for like a child."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        # A zombie keeps its pid until reaped, so this works even if it already exited.
        self._pidfd: int | None = os.pidfd_open(pid)

    async def wait(self) -> int:
        """Wait for the exit (readable pidfd), reap it, and return the code like Popen's."""
        if self.returncode is not None:
            return self.returncode
        assert self._pidfd is not None
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[None] = loop.create_future()

        def on_exit() -> None:
            if not ended.done():
                ended.set_result(None)

        loop.add_reader(self._pidfd, on_exit)
        try:
            await ended
        finally:
            loop.remove_reader(self._pidfd)
        self.returncode = self._reap()
        os.close(self._pidfd)
        self._pidfd = None
        return self.returncode

    def _reap(self) -> int:
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # not adopted after all: its status is not ours to read
            return 255
        return os.waitstatus_to_exitcode(status)

    def send_signal(self, sig: int) -> None:
        """Signal the process itself (the supervisor signals its group first)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)


class ForkServer:
    """A running fork server and the socket the supervisor asks it through."""

    def __init__(self, proc: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.proc = proc
        self._sock: socket.socket | None = sock
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()
        self._ready = False

    @classmethod
    def start(
        cls, *, python: str, env: Mapping[str, str], log_path: Path | None
    ) -> ForkServer | None:
        """Start the server (it preloads at once); None where the platform cannot adopt.

        Its own output goes to `log_path` (None: nowhere; its errors come over the socket).
        """
        if not set_child_subreaper():
            return None
        ours, theirs = socket.socketpair()
        server_env = {**env, SUPERVISOR_PID_ENV: str(os.getpid()), "PYTHONUNBUFFERED": "1"}
        try:
            with contextlib.ExitStack() as files:
                out: int | IO[bytes] = subprocess.DEVNULL
                if log_path is not None:
                    log_path.parent.mkdir(parents=True, exist_ok=True)
                    out = files.enter_context(log_path.open("ab"))
                proc = subprocess.Popen(
                    [python, "-m", ZYGOTE_MODULE, str(theirs.fileno())],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, env=server_env, start_new_session=True,
                )  # fmt: skip
        except OSError as exc:
            ours.close()
            log.warning("fork server not started (%s); services start one by one", exc)
            return None
        finally:
            theirs.close()
        return cls(proc, ours)

    async def _line(self, timeout: float) -> dict[str, object]:  # noqa: ASYNC109
        assert self._reader is not None
        try:
            raw = await asyncio.wait_for(self._reader.readline(), timeout)
        except TimeoutError:
            raise ForkServerError(f"no answer within {timeout:g} s") from None
        if not raw:
            raise ForkServerError(f"it exited (code {self.proc.poll()})")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ForkServerError("malformed answer")
        if "error" in body:
            raise ForkServerError(str(body["error"]))
        return body

    async def spawn(
        self, *, module: str, args: tuple[str, ...], env: Mapping[str, str], log_path: Path
    ) -> ForkedProcess:
        """Fork `module args`; ForkServerError when the server cannot (spawn it plainly)."""
        async with self._lock:
            if self._sock is None and self._writer is None:
                raise ForkServerError("it is closed")
            if self._writer is None:
                assert self._sock is not None
                self._reader, self._writer = await asyncio.open_unix_connection(sock=self._sock)
                self._sock = None
            if not self._ready:
                ready = await self._line(READY_TIMEOUT_S)
                log.info("fork server ready: %s modules in %s s", ready.get("ready"),
                         ready.get("seconds"))  # fmt: skip
                self._ready = True
            request = ForkRequest(module, args, dict(env), str(log_path), os.getpid())
            assert self._writer is not None
            self._writer.write(request.line())
            await self._writer.drain()
            reply = await self._line(REPLY_TIMEOUT_S)
        pid = reply.get("pid")
        if not isinstance(pid, int):
            raise ForkServerError("malformed answer")
        try:
            return ForkedProcess(pid)
        except OSError as exc:  # exited and reaped already: nothing to supervise
            raise ForkServerError(f"forked process {pid} is gone: {exc}") from None

    async def close(self) -> None:
        """End the server (EOF on its socket) and reap it; forked services keep running."""
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await self._writer.wait_closed()
            self._writer = self._reader = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        try:
            await asyncio.to_thread(self.proc.wait, 5.0)
        except subprocess.TimeoutExpired:
            self.kill()
            await asyncio.to_thread(self.proc.wait)

    def kill(self) -> None:
        """SIGKILL the server now (forked services are not in its group)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)


_OFF = frozenset({"0", "off", "f", "false", "n", "no"})
_early: list[ForkServer] = []
"""A fork server started before the command's own imports, for the runtime to adopt."""


def start_early(env: Mapping[str, str], *, python: str) -> None:
    """Start the fork server now (`r42 up`, before its imports) unless R42_FORK_SERVER is off.

    The settings decide later (`adopt_early`); this only reads the variable so an opt-out
    costs nothing, and a server nobody adopts ends when this process does (its socket closes).
    """
    if env.get("R42_FORK_SERVER", "").strip().lower() in _OFF or _early:
        return
    server = ForkServer.start(python=python, env=env, log_path=None)
    if server is not None:
        _early.append(server)


def adopt_early() -> ForkServer | None:
    """The fork server `start_early` started (once), or None."""
    return _early.pop() if _early else None


def discard_early() -> None:
    """Stop an early fork server nobody will adopt (the settings turned it off)."""
    while _early:
        _early.pop().kill()
