"""A fake Slack Web API: a real HTTP server on 127.0.0.1 that records every call.

Besides `/api/<method>` it serves what a Bolt app talks to: `response_url`s
(`/respond/<id>`, recorded as method "respond"), private file downloads (`/files/<id>`,
recorded as "files.download" with the request headers),
upload URLs, and a Socket Mode websocket (`apps.connections.open` → `/socket`) to which a
test pushes envelopes with `socket_send` and whose acks land in `socket_acks`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from tests.fakes.slack_methods import (
    argument_error,
    block_errors,
    payload_error,
    stream_error,
    streamed_text,
)


@dataclass
class StreamedMessage:
    """A message made with chat.startStream: its text so far, and what chat.stopStream added."""

    channel: str
    thread_ts: str
    text: str = ""
    stopped: bool = False
    blocks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SlackCall:
    """One recorded Web API call."""

    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)
    response: dict[str, Any] = field(default_factory=dict)


class FakeSlack:
    """Serves `/api/<method>` like Slack's Web API and records each call; start/stop or `with`."""

    def __init__(self) -> None:
        self.calls: list[SlackCall] = []
        self.files: dict[str, dict[str, Any]] = {}
        self.file_contents: dict[str, bytes] = {}
        self.overrides: dict[str, dict[str, Any]] = {}
        self.streams: dict[str, StreamedMessage] = {}
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = {}
        """Seeded channel threads, (channel, parent ts) → messages oldest first."""
        self._lock = threading.Lock()
        self._ts = 1_700_000_000
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._sockets: list[web.WebSocketResponse] = []
        self.socket_acks: list[dict[str, Any]] = []
        self.port = 0

    @property
    def base_url(self) -> str:
        """The Web API base URL to give `AsyncWebClient(base_url=...)`."""
        return f"http://127.0.0.1:{self.port}/api/"

    def add_file(self, file_id: str, *, name: str, content: bytes, mimetype: str) -> None:
        """Register a file that `files.info` describes and `/files/<id>` serves."""
        self.files[file_id] = {
            "id": file_id,
            "name": name,
            "size": len(content),
            "mimetype": mimetype,
            "filetype": name.rsplit(".", 1)[-1] if "." in name else "text",
            "url_private_download": f"http://127.0.0.1:{self.port}/files/{file_id}",
        }
        self.file_contents[file_id] = content

    def response_url(self, key: str = "r1") -> str:
        """A response_url whose posts are recorded as method "respond" (args carry `_key`)."""
        return f"http://127.0.0.1:{self.port}/respond/{key}"

    async def wait_for(
        self,
        method: str,
        count: int = 1,
        *,
        timeout: float = 15.0,  # noqa: ASYNC109 - a polling deadline, not a cancel scope
        where: Any = None,
    ) -> list[SlackCall]:
        """Poll until `count` calls to `method` (matching `where(call)`) were recorded."""
        deadline = time.monotonic() + timeout
        while True:
            found = [c for c in self.calls_to(method) if where is None or where(c)]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                seen = [c.method for c in self.calls]
                raise AssertionError(f"{count} x {method} not seen within {timeout} s; saw {seen}")
            await asyncio.sleep(0.02)

    def socket_send(self, envelope: dict[str, Any]) -> None:
        """Push a Socket Mode envelope to every connected client."""
        if self._loop is None or not self._sockets:
            raise RuntimeError("no Socket Mode client is connected")
        for ws in list(self._sockets):
            asyncio.run_coroutine_threadsafe(ws.send_json(envelope), self._loop).result(5)

    @property
    def socket_connected(self) -> bool:
        """Whether a Socket Mode client is connected."""
        return bool(self._sockets)

    async def wait_for_socket(self, *, timeout: float = 15.0) -> None:  # noqa: ASYNC109
        """Poll until a Socket Mode client is connected (the server side registers it last)."""
        deadline = time.monotonic() + timeout
        while not self._sockets:
            if time.monotonic() > deadline:
                raise AssertionError(f"no Socket Mode client connected within {timeout} s")
            await asyncio.sleep(0.02)

    def calls_to(self, method: str) -> list[SlackCall]:
        """The recorded calls to one method, in order."""
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def _next_ts(self) -> str:
        with self._lock:
            self._ts += 1
            return f"{self._ts}.000100"

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        raw = await request.read()
        ctype = request.headers.get("Content-Type", "")
        args: dict[str, Any] = {}
        if raw and "application/json" in ctype:
            args = json.loads(raw)
        elif raw and "multipart" not in ctype:
            args = dict(parse_qsl(raw.decode()))
        args.update(dict(request.query))
        for key in ("blocks", "view", "attachments"):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        answer = self._refusal(method, args, request) or self._answer(method, args)
        with self._lock:
            self.calls.append(SlackCall(method, args, dict(request.headers), response=answer))
        return web.json_response(answer)

    def _refusal(
        self, method: str, args: dict[str, Any], request: web.Request
    ) -> dict[str, Any] | None:
        """Slack's error for a call without a token, breaking argument rules or Block Kit."""
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else args.get("token")
        wanted = "xapp-" if method == "apps.connections.open" else "xoxb-"
        if not token:
            return {"ok": False, "error": "not_authed"}
        if not str(token).startswith(wanted):
            return {"ok": False, "error": "invalid_auth"}
        return (
            argument_error(method, args)
            or payload_error(method, args)
            or stream_error(method, args)
            or self._stream_state_error(method, args)
        )

    def _stream_state_error(self, method: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """Slack's rules on a stream's life: recipients in channels, no append after stop."""
        if method == "chat.startStream":
            in_dm = str(args.get("channel", "")).startswith("D")
            if not in_dm and not args.get("recipient_user_id"):
                return {"ok": False, "error": "missing_recipient_user_id"}
            if not in_dm and not args.get("recipient_team_id"):
                return {"ok": False, "error": "missing_recipient_team_id"}
        elif method in ("chat.appendStream", "chat.stopStream"):
            with self._lock:
                stream = self.streams.get(str(args.get("ts")))
            if stream is None or stream.channel != args.get("channel"):
                return {"ok": False, "error": "message_not_found"}
            if stream.stopped:
                return {"ok": False, "error": "message_not_in_streaming_state"}
        return None

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method in self.overrides:
            return self.overrides[method]
        channel = args.get("channel", "C0FAKE")
        if method == "chat.delete":
            return {"ok": True, "channel": channel, "ts": args.get("ts")}
        if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            ts = args.get("ts") if method == "chat.update" else self._next_ts()
            return {"ok": True, "channel": channel, "ts": ts, "message_ts": ts}
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"}
        if method == "auth.test":
            return {"ok": True, "user_id": "UBOT", "bot_id": "BBOT", "team_id": "T0FAKE"}
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": "D" + str(args.get("users", "U0"))[1:]}}
        if method == "files.info":
            info = self.files.get(str(args.get("file")))
            return {"ok": True, "file": info} if info else {"ok": False, "error": "file_not_found"}
        if method == "users.info":
            uid = str(args.get("user"))
            return {"ok": True, "user": {"id": uid, "real_name": f"User {uid}", "name": uid}}
        if method == "files.getUploadURLExternal":
            fid = f"F{len(self.calls):06d}"
            url = f"http://127.0.0.1:{self.port}/upload/{fid}"
            return {"ok": True, "upload_url": url, "file_id": fid}
        if method == "files.completeUploadExternal":
            return {"ok": True, "files": args.get("files", [])}
        if method == "chat.startStream":
            ts = self._next_ts()
            with self._lock:
                self.streams[ts] = StreamedMessage(
                    channel, str(args["thread_ts"]), text=streamed_text(args)
                )
            return {"ok": True, "channel": channel, "ts": ts}
        if method in ("chat.appendStream", "chat.stopStream"):
            with self._lock:
                stream = self.streams[str(args["ts"])]
                stream.text += streamed_text(args)
                if method == "chat.stopStream":
                    stream.stopped = True
                    stream.blocks = list(args.get("blocks") or [])
            return {"ok": True, "channel": channel, "ts": args.get("ts")}
        if method == "conversations.replies":
            return self._replies(channel, args)
        return {"ok": True}

    def _replies(self, channel: str, args: dict[str, Any]) -> dict[str, Any]:
        """conversations.replies as Slack pages it: oldest first, `latest` bound, `limit`."""
        with self._lock:
            thread = self.threads.get((channel, str(args.get("ts"))))
        if thread is None:
            return {"ok": False, "error": "thread_not_found"}
        latest, inclusive = args.get("latest"), str(args.get("inclusive")) in ("1", "true", "True")
        picked = [
            m for m in thread
            if latest is None or float(m["ts"]) < float(latest)
            or (inclusive and float(m["ts"]) == float(latest))
        ]  # fmt: skip
        limit = int(args.get("limit") or 1000)
        return {"ok": True, "messages": picked[:limit], "has_more": len(picked) > limit}

    async def _handle_respond(self, request: web.Request) -> web.Response:
        raw = await request.read()
        args: dict[str, Any] = json.loads(raw) if raw else {}
        args["_key"] = request.match_info["key"]
        errors = block_errors(args["blocks"], max_blocks=50) if "blocks" in args else []
        answer = {"ok": False, "error": "invalid_blocks", "errors": errors} if errors else {}
        with self._lock:
            self.calls.append(SlackCall("respond", args, dict(request.headers), response=answer))
        if errors:
            return web.json_response(answer, status=400)
        return web.Response(text="ok")

    async def _handle_socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1})
        try:
            async for msg in ws:
                if msg.type == web.WSMsgType.TEXT:
                    with self._lock:
                        self.socket_acks.append(json.loads(msg.data))
        finally:
            self._sockets.remove(ws)
        return ws

    async def _handle_file(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        with self._lock:
            self.calls.append(SlackCall("files.download", {"file": file_id}, dict(request.headers)))
        content = self.file_contents.get(file_id)
        if content is None:
            return web.Response(status=404)
        return web.Response(body=content)

    async def _handle_upload(self, request: web.Request) -> web.Response:
        self.file_contents[request.match_info["file_id"]] = await request.read()
        return web.Response(text="OK")

    def start(self) -> FakeSlack:
        """Start serving on a free loopback port in a background thread."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_post("/api/{method}", self._handle_api)
            app.router.add_get("/api/{method}", self._handle_api)
            app.router.add_get("/files/{file_id}", self._handle_file)
            app.router.add_post("/upload/{file_id}", self._handle_upload)
            app.router.add_post("/respond/{key}", self._handle_respond)
            app.router.add_get("/socket", self._handle_socket)
            self._runner = web.AppRunner(app, access_log=None)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-slack", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake Slack server did not start")
        return self

    def stop(self) -> None:
        """Stop the server and its thread."""
        if self._loop is not None:
            for ws in list(self._sockets):
                asyncio.run_coroutine_threadsafe(ws.close(), self._loop).result(5)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
