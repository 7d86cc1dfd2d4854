"""A small GitHub REST client (httpx2) for the handbook: list markdown files, fetch blobs."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx2

from shared.errors import BadInputError, ConfigError, NotFoundError, TransientError

MARKDOWN_SUFFIXES = (".md", ".markdown")
_MAX_DIRS = 500


@dataclass(frozen=True)
class RepoFile:
    """A file in the repository at the synced branch."""

    path: str
    sha: str
    size: int


class GitHubClient:
    """Read-only access to one repository's contents at one branch."""

    def __init__(
        self,
        *,
        api_url: str,
        owner: str,
        repo: str,
        branch: str,
        token: str | None = None,
        timeout: float = 20.0,
    ) -> None:
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                   "User-Agent": "r42-extractor"}  # fmt: skip
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._base = f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}"
        self._where = f"{owner}/{repo}@{branch}"
        self._branch = branch
        self._client = httpx2.AsyncClient(base_url=api_url.rstrip("/"), headers=headers,
                                          timeout=timeout)  # fmt: skip

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def _get(self, url: str, what: str, **params: str) -> Any:
        try:
            response = await self._client.get(url, params=params or None)
        except httpx2.TimeoutException as exc:
            raise TransientError(f"GitHub timed out reading {what}") from exc
        except httpx2.TransportError as exc:
            raise TransientError(f"cannot reach GitHub ({type(exc).__name__})") from exc
        _raise_for_status(response, what=f"{what} in {self._where}")
        try:
            return response.json()
        except ValueError as exc:
            raise TransientError(f"GitHub sent invalid JSON for {what}") from exc

    async def list_markdown(self, path: str) -> list[RepoFile]:
        """Markdown files under `path` (recursively), sorted by path."""
        files: list[RepoFile] = []
        pending, seen = [path.strip("/")], 0
        while pending:
            folder = pending.pop()
            seen += 1
            if seen > _MAX_DIRS:
                raise BadInputError(f"the handbook folder has more than {_MAX_DIRS} directories")
            url = f"{self._base}/contents/{quote(folder)}" if folder else f"{self._base}/contents"
            listing = await self._get(url, f"folder '{folder or '/'}'", ref=self._branch)
            entries = listing if isinstance(listing, list) else [listing]
            for entry in entries:
                if not isinstance(entry, dict):
                    continue
                kind, entry_path = entry.get("type"), str(entry.get("path", ""))
                if kind == "dir":
                    pending.append(entry_path)
                elif kind == "file" and entry_path.lower().endswith(MARKDOWN_SUFFIXES):
                    files.append(RepoFile(path=entry_path, sha=str(entry.get("sha", "")),
                                          size=int(entry.get("size") or 0)))  # fmt: skip
        return sorted(files, key=lambda f: f.path)

    async def blob(self, sha: str) -> bytes:
        """The bytes of a blob by its sha (the git blobs API, base64 in JSON)."""
        body = await self._get(f"{self._base}/git/blobs/{quote(sha, safe='')}", f"blob {sha}")
        if not isinstance(body, dict) or body.get("encoding") != "base64":
            raise TransientError(f"GitHub sent blob {sha} in an unexpected encoding")
        try:
            return base64.b64decode(str(body.get("content", "")), validate=False)
        except (binascii.Error, ValueError) as exc:
            raise TransientError(f"GitHub sent an undecodable blob {sha}") from exc


def _raise_for_status(response: httpx2.Response, *, what: str) -> None:
    status = response.status_code
    if status < 400:
        return
    if status == 404:
        raise NotFoundError(
            f"GitHub: {what} not found (check R42_HANDBOOK_OWNER/REPO/PATH/BRANCH; a private "
            "repository needs GITHUB_TOKEN)"
        )
    if status == 401:
        raise ConfigError("GitHub rejected the token (401): check GITHUB_TOKEN")
    remaining = response.headers.get("x-ratelimit-remaining")
    if status == 429 or (status == 403 and remaining == "0"):
        reset = response.headers.get("x-ratelimit-reset", "")
        when = ""
        if reset.isdigit():
            when = f"; it resets at {datetime.fromtimestamp(int(reset), UTC):%H:%M:%S} UTC"
        raise TransientError(f"GitHub rate limit reached reading {what}{when}")
    if status == 403:
        raise ConfigError(f"GitHub refused access to {what} (403): check GITHUB_TOKEN")
    if status >= 500:
        raise TransientError(f"GitHub answered {status} for {what}")
    raise BadInputError(f"GitHub answered {status} for {what}")
