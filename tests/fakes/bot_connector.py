"""A fake Bot Connector (the service at an activity's serviceUrl): a real HTTP server on 127.0.0.1.

It follows the Bot Connector REST routes and argument rules the bot uses:

- `POST /v3/conversations` creates a conversation (proactive 1:1): needs `bot` and exactly
  one member in `members`; answers `{"id", "activityId", "serviceUrl"}`.
- `POST /v3/conversations/{id}/activities` sends, `POST .../activities/{replyToId}` replies
  (the reply is recorded with its `replyToId`), `PUT .../activities/{activityId}` updates an
  activity the bot sent before in that conversation.
- Unknown conversations answer 404 `ConversationNotFound`, unknown activities 404
  `ActivityNotFound`, malformed bodies 400 `BadArgument`, oversized messages 413
  `MessageSizeTooBig` — each with the connector's `{"error": {"code", "message"}}` body.
- With `require_token` set, a request without `Authorization: Bearer …` gets 401.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MAX_MESSAGE_BYTES = 28 * 1024
"""Teams refuses messages above about 28 KB (text plus cards; inline images count apart)."""
MAX_INLINE_IMAGE_CHARS = 1400 * 1024
"""An inline image (data URI) may be up to 1 MB of PNG."""


@dataclass
class Recorded:
    """One call the bot made."""

    method: str
    conversation_id: str
    activity: dict[str, Any]
    activity_id: str | None = None
    reply_to_id: str | None = None
    authorization: str | None = None

    @property
    def cards(self) -> list[dict[str, Any]]:
        """The Adaptive Cards attached to this activity."""
        return [
            a.get("content") or {}
            for a in self.activity.get("attachments") or []
            if a.get("contentType") == "application/vnd.microsoft.card.adaptive"
        ]

    @property
    def card_text(self) -> str:
        """Every string inside the cards (and the activity text), for assertions."""
        parts: list[str] = [str(self.activity.get("text") or "")]

        def walk(node: Any) -> None:
            if isinstance(node, str):
                parts.append(node)
            elif isinstance(node, dict):
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(self.cards)
        return "\n".join(parts)


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


@dataclass
class FakeBotConnector:
    """Records every activity; conversations must be known (seen inbound or created)."""

    require_token: bool = False
    calls: list[Recorded] = field(default_factory=list)
    conversations: dict[str, list[str]] = field(default_factory=dict)
    created: list[dict[str, Any]] = field(default_factory=list)
    fail_next: list[tuple[int, str]] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _runner: web.AppRunner | None = None
    port: int = 0
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The serviceUrl to put on inbound activities."""
        return f"http://127.0.0.1:{self.port}/"

    def host_file(self, name: str, data: bytes) -> str:
        """Serve a file as Teams' pre-authenticated downloadUrl would; its URL."""
        self.files[name] = data
        return f"{self.url}files/{name}"

    async def _file(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["name"])
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    def add_conversation(self, conversation_id: str) -> None:
        """A conversation Teams knows (every inbound activity's conversation is one)."""
        self.conversations.setdefault(conversation_id, [])

    async def start(self) -> FakeBotConnector:
        """Serve on a free loopback port."""
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app.router.add_post("/v3/conversations", self._create)
        app.router.add_post("/v3/conversations/{cid}/activities", self._send)
        app.router.add_post("/v3/conversations/{cid}/activities/{aid}", self._send)
        app.router.add_put("/v3/conversations/{cid}/activities/{aid}", self._update)
        app.router.add_get("/files/{name}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()

    # -- queries ---------------------------------------------------------------------------

    def of(self, conversation_id: str | None = None, *, kind: str | None = None) -> list[Recorded]:
        """Recorded calls, optionally of one conversation and one activity type."""
        return [
            c
            for c in self.calls
            if (conversation_id is None or c.conversation_id == conversation_id)
            and (kind is None or c.activity.get("type") == kind)
        ]

    async def wait_for(
        self,
        predicate: Any,
        *,
        timeout: float = 15.0,  # noqa: ASYNC109 - a polling deadline
        what: str = "a matching call",
    ) -> Recorded:
        """The first recorded call matching `predicate` (waiting for it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for call in self.calls:
                if predicate(call):
                    return call
            remaining = deadline - loop.time()
            if remaining <= 0:
                seen = [(c.method, c.activity.get("type"), c.card_text[:80]) for c in self.calls]
                raise AssertionError(f"{what} not seen; calls: {seen}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

    # -- routes ----------------------------------------------------------------------------

    def _check_auth(self, request: web.Request) -> web.Response | None:
        auth = request.headers.get("Authorization")
        if self.require_token and not (auth and auth.startswith("Bearer ") and len(auth) > 8):
            return _error(401, "Unauthorized", "Authorization has been denied for this request.")
        return None

    async def _body(self, request: web.Request) -> dict[str, Any] | web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "BadSyntax", "Invalid JSON")
        if not isinstance(body, dict):
            return _error(400, "BadArgument", "The body must be an object")
        return body

    def _check_activity(self, body: dict[str, Any], raw_size: int) -> web.Response | None:
        kind = body.get("type")
        if kind not in ("message", "typing"):
            return _error(400, "BadArgument", f"Unknown activity type {kind!r}")
        if kind == "message" and not (body.get("text") or body.get("attachments")):
            return _error(400, "BadArgument", "Message must have text or attachments")
        for att in body.get("attachments") or []:
            if not isinstance(att, dict) or not att.get("contentType"):
                return _error(400, "BadArgument", "Attachment without contentType")
            if att["contentType"] == "application/vnd.microsoft.card.adaptive":
                content = att.get("content")
                if not isinstance(content, dict) or content.get("type") != "AdaptiveCard":
                    return _error(400, "BadArgument", "Adaptive Card attachment without a card")
            elif att["contentType"].startswith("image/"):
                url = att.get("contentUrl")
                if not isinstance(url, str) or len(url) > MAX_INLINE_IMAGE_CHARS:
                    return _error(413, "MessageSizeTooBig", "Inline image too big")
        images = sum(
            len(str(a.get("contentUrl") or ""))
            for a in body.get("attachments") or []
            if isinstance(a, dict) and str(a.get("contentType", "")).startswith("image/")
        )
        if raw_size - images > MAX_MESSAGE_BYTES:
            return _error(413, "MessageSizeTooBig", "Message size too big")
        return None

    def _record(self, request: web.Request, **kwargs: Any) -> None:
        self.calls.append(Recorded(authorization=request.headers.get("Authorization"), **kwargs))
        self._changed.set()

    async def _create(self, request: web.Request) -> web.Response:
        if (denied := self._check_auth(request)) is not None:
            return denied
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        members = body.get("members")
        if not isinstance(body.get("bot"), dict) or not body["bot"].get("id"):
            return _error(400, "BadArgument", "Bot is required")
        if not isinstance(members, list) or len(members) != 1 or not members[0].get("id"):
            return _error(400, "BadArgument", "A 1:1 conversation needs exactly one member")
        member = members[0]["id"]
        if not str(member).startswith("29:") and not member.count("-") == 4:
            return _error(400, "BadArgument", "Member id must be a Teams (29:) or AAD id")
        cid = f"a:fake-{member}"
        self.add_conversation(cid)
        self.created.append(body)
        self._changed.set()
        return web.json_response(
            {"id": cid, "activityId": f"1:{next(self._ids)}", "serviceUrl": self.url}
        )

    async def _send(self, request: web.Request) -> web.Response:
        if (denied := self._check_auth(request)) is not None:
            return denied
        cid = request.match_info["cid"]
        if self.fail_next:
            status, code = self.fail_next.pop(0)
            return _error(status, code, "injected failure")
        if cid not in self.conversations:
            return _error(404, "ConversationNotFound", "Conversation not found.")
        raw = await request.read()
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        if (bad := self._check_activity(body, len(raw))) is not None:
            return bad
        reply_to = request.match_info.get("aid")
        activity_id = f"1:{next(self._ids)}"
        if body.get("type") == "message":
            self.conversations[cid].append(activity_id)
        self._record(
            request,
            method="POST",
            conversation_id=cid,
            activity=body,
            activity_id=activity_id,
            reply_to_id=reply_to,
        )
        return web.json_response({"id": activity_id}, status=201 if reply_to is None else 200)

    async def _update(self, request: web.Request) -> web.Response:
        if (denied := self._check_auth(request)) is not None:
            return denied
        cid, aid = request.match_info["cid"], request.match_info["aid"]
        if cid not in self.conversations:
            return _error(404, "ConversationNotFound", "Conversation not found.")
        if aid not in self.conversations[cid]:
            return _error(404, "ActivityNotFound", "Activity not found.")
        raw = await request.read()
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        if body.get("type") != "message":
            return _error(400, "BadArgument", "Only messages can be updated")
        if (bad := self._check_activity(body, len(raw))) is not None:
            return bad
        self._record(request, method="PUT", conversation_id=cid, activity=body, activity_id=aid)
        return web.json_response({"id": aid})
