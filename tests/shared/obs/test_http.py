"""The endpoint server: routes GET/HEAD, refuses other methods, bad requests and unknown paths."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest

from shared.obs.http import Answer, serve_http


async def _ok() -> Answer:
    return 200, "text/plain", b"fine\n"


async def _broken() -> Answer:
    raise RuntimeError("boom")


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    server = await serve_http("127.0.0.1", 0, {"/ok": _ok, "/broken": _broken})
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def _raw(base_url: str, request: bytes) -> bytes:
    host, port = base_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    writer.write_eof()  # then the server sees the end of the request stream
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)  # the server closes after one answer
    writer.close()
    return answer


async def test_routes_answer_and_the_rest_is_refused(base_url: str) -> None:
    async with httpx2.AsyncClient(base_url=base_url) as client:
        ok = await client.get("/ok?probe=1")
        assert (ok.status_code, ok.text) == (200, "fine\n")
        assert ok.headers["content-type"] == "text/plain"
        assert ok.headers["connection"] == "close"
        head = await client.head("/ok")
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == "5"
        assert (await client.get("/nope")).status_code == 404
        assert (await client.post("/ok", content=b"x")).status_code == 405
        broken = await client.get("/broken")
        assert broken.status_code == 500 and "boom" not in broken.text
        # Still serving after all of that.
        assert (await client.get("/ok")).status_code == 200


async def test_a_malformed_request_gets_400_and_the_server_goes_on(base_url: str) -> None:
    answer = await _raw(base_url, b"GET /ok HTTP/1.1\r\nno colon here\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")
    # A client that connects and hangs up without a word does no harm either.
    assert await _raw(base_url, b"") == b""
    answer = await _raw(base_url, b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"fine\n")
