"""A fake GitHub REST API for the handbook sync: git trees, blobs and contents, recorded.

A real ThreadingHTTPServer on 127.0.0.1 serving one repository at one branch, with GitHub's
shapes and rules: `GET /repos/{o}/{r}/git/trees/{branch|sha}[?recursive=1]` (real git tree
and blob shas; `truncated` past `max_tree_entries`, as GitHub does past its limit),
`/git/blobs/{sha}` (base64), `/contents/{path}?ref=` (listing capped at 1,000 entries like
GitHub's), a strong ETag on every 200 and 304 for a matching If-None-Match (not counted
against the quota), `x-ratelimit-*` headers, and GitHub's own error bodies.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

DOCS = "https://docs.github.com/rest"
RATE_LIMITED = (
    "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated "
    "requests get a higher rate limit. Check out the documentation for more details.)"
)


def blob_sha(content: bytes) -> str:
    """Git's blob id: sha1 over "blob <size>\\0" + content."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass(frozen=True)
class Seen:
    """One request the fake received."""

    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    status: int = 0


@dataclass
class _Tree:
    sha: str
    entries: list[dict[str, Any]]  # path (name), mode, type, sha, size


def _build_trees(files: dict[str, bytes]) -> tuple[str, dict[str, _Tree]]:
    """Git trees for `files` with their real shas; returns (root sha, trees by sha)."""
    trees: dict[str, _Tree] = {}

    def build(members: dict[str, bytes]) -> str:
        names: dict[str, dict[str, Any]] = {}
        children: dict[str, dict[str, bytes]] = {}
        for path, content in members.items():
            head, _, tail = path.partition("/")
            if tail:
                children.setdefault(head, {})[tail] = content
                names.setdefault(head, {"path": head, "mode": "040000", "type": "tree"})
            else:
                names[head] = {"path": head, "mode": "100644", "type": "blob",
                               "sha": blob_sha(content), "size": len(content)}  # fmt: skip
        for name, sub in children.items():
            names[name]["sha"] = build(sub)
        # Git orders entries by name, a tree's name compared as if it ended in "/".
        ordered = sorted(names.values(), key=lambda e: e["path"] + ("/" if e["type"] == "tree"
                                                                     else ""))  # fmt: skip
        raw = b"".join(
            f"{e['mode'].lstrip('0')} {e['path']}".encode() + b"\0" + bytes.fromhex(e["sha"])
            for e in ordered
        )
        sha = hashlib.sha1(b"tree %d\0" % len(raw) + raw).hexdigest()
        trees[sha] = _Tree(sha, ordered)
        return sha

    return build(files), trees


class FakeGitHub:
    """Serve `files` (path → bytes) of owner/repo at `branch`; edit `files` between syncs."""

    def __init__(self, owner: str = "respellion", repo: str = "handbook", branch: str = "main"):
        self.owner, self.repo, self.branch = owner, repo, branch
        self.files: dict[str, bytes] = {}
        self.token: str | None = None  # when set, requests must carry it
        self.max_tree_entries = 100_000  # GitHub truncates a recursive tree past its limit
        self.rate_limit = 60  # requests per window, like unauthenticated GitHub
        self.used = 0
        self.reset_at = int(time.time()) + 3600
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._cache: tuple[int, tuple[str, dict[str, _Tree]]] | None = None
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
        """Shas of the blobs fetched so far (answered 200)."""
        return [r.path.rsplit("/", 1)[1] for r in self.requests
                if "/git/blobs/" in r.path and r.status == 200]  # fmt: skip

    def counted(self) -> int:
        """Requests that counted against the quota (GitHub does not count a 304)."""
        return sum(1 for r in self.requests if r.status != 304)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        path, query = unquote(parts.path), parse_qs(parts.query)
        with self._lock:
            files = dict(self.files)
        status, body = self._answer(handler, path, query, files)
        etag = None
        if status == 200:
            etag = '"' + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest() + '"'
            if handler.headers.get("If-None-Match") == etag:
                status, body = 304, None
        with self._lock:
            if status not in (304, 401) and self.used < self.rate_limit:
                self.used += 1
            elif status not in (304, 401):
                status, body = 403, {"message": RATE_LIMITED, "documentation_url":
                                     f"{DOCS}/overview/rate-limits-for-the-rest-api"}  # fmt: skip
            remaining = max(self.rate_limit - self.used, 0)
            self.requests.append(Seen(path, query, dict(handler.headers.items()), status))
        headers = {
            "x-ratelimit-limit": str(self.rate_limit),
            "x-ratelimit-remaining": str(remaining),
            "x-ratelimit-used": str(self.used),
            "x-ratelimit-reset": str(self.reset_at),
            "x-ratelimit-resource": "core",
        }
        if etag and status in (200, 304):
            headers["ETag"] = etag
        self._send(handler, status, body, headers)

    def _answer(
        self, handler: BaseHTTPRequestHandler, path: str, query: dict, files: dict[str, bytes]
    ) -> tuple[int, Any]:
        not_found = (404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"})
        if self.token and handler.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}
        prefix = f"/repos/{self.owner}/{self.repo}"
        if not path.startswith(prefix):
            return not_found
        rest = path[len(prefix) :]
        if rest.startswith("/git/trees/"):
            if not files:
                return 409, {"message": "Git Repository is empty.", "documentation_url": DOCS,
                             "status": "409"}  # fmt: skip
            root, trees = self._trees(files)
            ref = rest[len("/git/trees/") :]
            tree = trees.get(root if ref == self.branch else ref)
            if tree is None:
                return not_found
            return 200, self._tree_body(tree, trees, recursive="recursive" in query)
        if rest.startswith("/git/blobs/"):
            sha = rest.rsplit("/", 1)[1]
            content = next((c for c in files.values() if blob_sha(c) == sha), None)
            if content is None:
                return not_found
            encoded = base64.encodebytes(content).decode()
            return 200, {"sha": sha, "node_id": "B_" + sha[:12], "size": len(content),
                         "url": f"{self.url}{path}", "content": encoded,
                         "encoding": "base64"}  # fmt: skip
        if rest == "/contents" or rest.startswith("/contents/"):
            if query.get("ref", [self.branch]) != [self.branch]:
                return 404, {"message": f"No commit found for the ref {query['ref'][0]}",
                             "documentation_url": DOCS, "status": "404"}  # fmt: skip
            return self._contents(rest[len("/contents") :].strip("/"), files) or not_found
        return not_found

    def _trees(self, files: dict[str, bytes]) -> tuple[str, dict[str, _Tree]]:
        key = hash(frozenset(files.items()))
        with self._lock:
            if self._cache and self._cache[0] == key:
                return self._cache[1]
        built = _build_trees(files)
        with self._lock:
            self._cache = (key, built)
        return built

    def _tree_body(self, tree: _Tree, trees: dict[str, _Tree], *, recursive: bool) -> Any:
        entries: list[dict[str, Any]] = []

        def add(t: _Tree, prefix: str) -> None:
            for entry in t.entries:
                url = f"{self.url}/git/{entry['type']}s/{entry['sha']}"
                entries.append({**entry, "path": prefix + entry["path"], "url": url})
                if recursive and entry["type"] == "tree":
                    add(trees[entry["sha"]], f"{prefix}{entry['path']}/")

        add(tree, "")
        # GitHub's limit (100,000 entries / 7 MB) bites recursive listings in practice; a
        # folder's own entries are far below it.
        truncated = recursive and len(entries) > self.max_tree_entries
        return {"sha": tree.sha, "url": f"{self.url}/git/trees/{tree.sha}",
                "tree": entries[: self.max_tree_entries] if truncated else entries,
                "truncated": truncated}  # fmt: skip

    def _contents(self, folder: str, files: dict[str, bytes]) -> tuple[int, Any] | None:
        if folder in files:
            return 200, self._entry(folder, files[folder])
        prefix = f"{folder}/" if folder else ""
        entries: dict[str, dict[str, Any]] = {}
        for path, content in files.items():
            if not path.startswith(prefix):
                continue
            head, _, tail = path[len(prefix) :].partition("/")
            if tail:
                entries[head] = {"type": "dir", "name": head, "path": prefix + head}
            else:
                entries[head] = self._entry(path, content)
        if not entries:
            return None
        return 200, [entries[k] for k in sorted(entries)][:1000]  # GitHub's listing cap

    @staticmethod
    def _entry(path: str, content: bytes) -> dict[str, Any]:
        return {"type": "file", "name": path.rsplit("/", 1)[-1], "path": path,
                "sha": blob_sha(content), "size": len(content)}  # fmt: skip

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str]
    ) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        if body is not None:
            handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
