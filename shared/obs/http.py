"""A small HTTP/1.1 GET server on asyncio for /metrics, /healthz and /readyz (h11 parses).

Services serve three GET endpoints to scrapers and probes; aiohttp's web stack for that
cost each process ~9 MB and ~0.25 s at start. h11 does the protocol (parsing, framing,
validation); this module only routes. One request per connection (`Connection: close`),
which Prometheus and Kubernetes probes handle as a matter of course.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

import h11

log = logging.getLogger(__name__)

Answer = tuple[int, str, bytes]
"""(status, content type, body)."""
Route = Callable[[], Awaitable[Answer]]
READ_TIMEOUT_S = 10.0
MAX_REQUEST_BYTES = 16 * 1024


async def serve_http(host: str, port: int, routes: Mapping[str, Route]) -> asyncio.Server:
    """Listen on host:port (0: a free port); GET or HEAD of a route's path calls it."""

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _one_request(reader, writer, routes)
        except (OSError, TimeoutError, h11.ProtocolError):
            pass  # the client went away or spoke nonsense after our answer
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    return await asyncio.start_server(on_connection, host, port)


async def _one_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, routes: Mapping[str, Route]
) -> None:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_BYTES)
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            await _send(writer, conn, exc.error_status_hint, "text/plain", b"bad request\n")
            return
        if event is h11.NEED_DATA:
            data = await asyncio.wait_for(reader.read(MAX_REQUEST_BYTES), READ_TIMEOUT_S)
            conn.receive_data(data)  # b"" is the end of the stream
            continue
        if isinstance(event, h11.Request):
            break
        return  # closed before a request arrived
    method = event.method.decode("ascii", "replace").upper()
    path = event.target.decode("ascii", "replace").partition("?")[0]
    route = routes.get(path)
    if route is None:
        status, ctype, body = 404, "text/plain", b"not found\n"
    elif method not in ("GET", "HEAD"):
        status, ctype, body = 405, "text/plain", b"method not allowed\n"
    else:
        try:
            status, ctype, body = await route()
        except Exception:  # one broken answer must not end the server
            log.exception("%s failed", path)
            status, ctype, body = 500, "text/plain", b"internal error\n"
    await _send(writer, conn, status, ctype, b"" if method == "HEAD" else body, length=len(body))


async def _send(
    writer: asyncio.StreamWriter, conn: h11.Connection, status: int, ctype: str, body: bytes,
    *, length: int | None = None,
) -> None:  # fmt: skip
    headers = [
        ("Content-Type", ctype),
        ("Content-Length", str(len(body) if length is None else length)),
        ("Connection", "close"),
    ]
    writer.write(conn.send(h11.Response(status_code=status, headers=headers)) or b"")
    if body:
        writer.write(conn.send(h11.Data(data=body)) or b"")
    writer.write(conn.send(h11.EndOfMessage()) or b"")
    await writer.drain()
