"""A fake GitHub REST API for the handbook sync: contents listing and git blobs, recorded.

A real ThreadingHTTPServer on 127.0.0.1 serving one repository at one branch:
`GET /repos/{owner}/{repo}/contents/{path}?ref=BRANCH` lists a folder (or describes a
file) and `GET /repos/{owner}/{repo}/git/blobs/{sha}` returns base64 content, like GitHub.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def blob_sha(content: bytes) -> str:
    """Git's blob id: sha1 over "blob <size>\\0" + content."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass(frozen=True)
class Seen:
    """One request the fake received."""

    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


class FakeGitHub:
    """Serve `files` (path → bytes) of owner/repo at `branch`; edit `files` between syncs."""

    def __init__(self, owner: str = "respellion", repo: str = "handbook", branch: str = "main"):
        self.owner, self.repo, self.branch = owner, repo, branch
        self.files: dict[str, bytes] = {}
        self.token: str | None = None  # when set, requests must carry it
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    def __enter__(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, *args: Any) -> None:
                del args

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def blob_requests(self) -> list[str]:
        """Shas of the blobs fetched so far."""
        return [r.path.rsplit("/", 1)[1] for r in self.requests if "/git/blobs/" in r.path]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        path = unquote(parts.path)
        with self._lock:
            self.requests.append(Seen(path, parse_qs(parts.query), dict(handler.headers.items())))
            files = dict(self.files)
        if self.token and handler.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(handler, 401, {"message": "Bad credentials"})
        prefix = f"/repos/{self.owner}/{self.repo}"
        if not path.startswith(prefix):
            return self._send(handler, 404, {"message": "Not Found"})
        rest = path[len(prefix) :]
        if rest.startswith("/git/blobs/"):
            sha = rest.rsplit("/", 1)[1]
            content = next((c for c in files.values() if blob_sha(c) == sha), None)
            if content is None:
                return self._send(handler, 404, {"message": "Not Found"})
            encoded = base64.encodebytes(content).decode()
            body = {"sha": sha, "size": len(content), "content": encoded, "encoding": "base64"}
            return self._send(handler, 200, body)
        if rest == "/contents" or rest.startswith("/contents/"):
            if parse_qs(parts.query).get("ref") != [self.branch]:
                return self._send(handler, 404, {"message": "No commit found for the ref"})
            return self._contents(handler, rest[len("/contents") :].strip("/"), files)
        return self._send(handler, 404, {"message": "Not Found"})

    def _contents(self, handler: BaseHTTPRequestHandler, folder: str, files: dict) -> None:
        if folder in files:
            return self._send(handler, 200, self._entry(folder, files[folder]))
        prefix = f"{folder}/" if folder else ""
        entries: dict[str, dict[str, Any]] = {}
        for path, content in files.items():
            if not path.startswith(prefix):
                continue
            head, _, tail = path[len(prefix) :].partition("/")
            if tail:
                entries[head] = {"type": "dir", "name": head, "path": prefix + head, "sha": "d"}
            else:
                entries[head] = self._entry(path, content)
        if not entries:
            return self._send(handler, 404, {"message": "Not Found"})
        return self._send(handler, 200, [entries[k] for k in sorted(entries)])

    @staticmethod
    def _entry(path: str, content: bytes) -> dict[str, Any]:
        name = path.rsplit("/", 1)[-1]
        return {
            "type": "file",
            "name": name,
            "path": path,
            "sha": blob_sha(content),
            "size": len(content),
        }

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
