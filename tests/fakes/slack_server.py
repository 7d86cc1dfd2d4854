"""A fake Slack Web API: a real HTTP server on 127.0.0.1 that records every call."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web


@dataclass
class SlackCall:
    """One recorded Web API call."""

    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)


class FakeSlack:
    """Serves `/api/<method>` like Slack's Web API and records each call; start/stop or `with`."""

    def __init__(self) -> None:
        self.calls: list[SlackCall] = []
        self.files: dict[str, dict[str, Any]] = {}
        self.file_contents: dict[str, bytes] = {}
        self.overrides: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._ts = 1_700_000_000
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
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
        with self._lock:
            self.calls.append(SlackCall(method, args, dict(request.headers)))
        return web.json_response(self._answer(method, args))

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method in self.overrides:
            return self.overrides[method]
        channel = args.get("channel", "C0FAKE")
        if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            ts = args.get("ts") if method == "chat.update" else self._next_ts()
            return {"ok": True, "channel": channel, "ts": ts, "message_ts": ts}
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
        return {"ok": True}

    async def _handle_file(self, request: web.Request) -> web.Response:
        content = self.file_contents.get(request.match_info["file_id"])
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
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
