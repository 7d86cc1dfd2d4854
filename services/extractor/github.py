"""A small GitHub REST client (httpx2) for the handbook: one git tree per sync, blobs by sha.

A sync asks for the branch's recursive tree once, conditionally (If-None-Match), so an
unchanged repository costs one request that GitHub does not count against the quota; when
GitHub truncates a large tree the sub-trees are walked instead. Blobs are fetched by their
git sha, only for files whose sha changed. A rate-limit answer raises RateLimitedError at
once, carrying the time the quota resets.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx2

from shared.errors import BadInputError, ConfigError, NotFoundError, TransientError


@dataclass(frozen=True)
class RepoFile:
    """A file in the repository at the synced branch (path from the repository root)."""

    path: str
    sha: str
    size: int


@dataclass(frozen=True)
class TreeListing:
    """The files under a folder, or not_modified when the tree's ETag still matched."""

    files: list[RepoFile] = field(default_factory=list)
    etag: str | None = None
    not_modified: bool = False


class RateLimitedError(TransientError):
    """GitHub refused for quota: stop asking until reset_at."""

    def __init__(self, message: str, *, reset_at: datetime | None) -> None:
        super().__init__(message)
        self.reset_at = reset_at


class GitHubClient:
    """Read-only access to one repository's tree and blobs at one branch."""

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
        self.requests = 0
        self._client = httpx2.AsyncClient(base_url=api_url.rstrip("/"), headers=headers,
                                          timeout=timeout)  # fmt: skip

    @property
    def where(self) -> str:
        """owner/repo@branch, for messages and the tree cache."""
        return self._where

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def _request(
        self, url: str, what: str, *, etag: str | None = None, **params: str
    ) -> httpx2.Response:
        headers = {"If-None-Match": etag} if etag else None
        self.requests += 1
        try:
            response = await self._client.get(url, params=params or None, headers=headers)
        except httpx2.TimeoutException as exc:
            raise TransientError(f"GitHub timed out reading {what}") from exc
        except httpx2.TransportError as exc:
            raise TransientError(f"cannot reach GitHub ({type(exc).__name__})") from exc
        if response.status_code != 304:
            _raise_for_status(response, what=f"{what} in {self._where}")
        return response

    async def _json(self, url: str, what: str, **params: str) -> Any:
        return _decode(await self._request(url, what, **params), what)

    async def list_files(self, path: str, *, etag: str | None = None) -> TreeListing:
        """Every file (blob) under `path`, sorted by path; not_modified when `etag` matched."""
        folder = path.strip("/")
        what = f"the tree of {self._branch}"
        url = f"{self._base}/git/trees/{quote(self._branch, safe='')}"
        response = await self._request(url, what, etag=etag, recursive="1")
        if response.status_code == 304:
            return TreeListing(etag=etag, not_modified=True)
        body = _decode(response, what)
        new_etag = response.headers.get("etag")
        if not body.get("truncated"):
            files = _blobs(body, prefix="")
        else:
            # Too large for one answer: find the folder's tree, then walk it.
            sha = str(body.get("sha", ""))
            for part in folder.split("/") if folder else []:
                sub = await self._json(f"{self._base}/git/trees/{sha}", f"tree {sha}")
                sha = next((str(e["sha"]) for e in sub.get("tree", [])
                            if e.get("path") == part and e.get("type") == "tree"), "")  # fmt: skip
                if not sha:
                    raise _missing(folder, self._where)
            files = await self._walk(sha, prefix=f"{folder}/" if folder else "")
        if folder:
            files = [f for f in files if f.path.startswith(f"{folder}/")]
            if not files:
                raise _missing(folder, self._where)
        return TreeListing(files=sorted(files, key=lambda f: f.path), etag=new_etag)

    async def _walk(self, sha: str, *, prefix: str) -> list[RepoFile]:
        body = await self._json(f"{self._base}/git/trees/{sha}", f"tree {sha}", recursive="1")
        if not body.get("truncated"):
            return _blobs(body, prefix=prefix)
        flat = await self._json(f"{self._base}/git/trees/{sha}", f"tree {sha}")
        if flat.get("truncated"):  # never drop files silently
            raise BadInputError(f"GitHub truncated the listing of folder '{prefix}' in "
                                f"{self._where}: it has too many entries to sync")  # fmt: skip
        files = _blobs(flat, prefix=prefix)
        for entry in flat.get("tree", []):
            if entry.get("type") == "tree":
                files += await self._walk(str(entry["sha"]), prefix=f"{prefix}{entry['path']}/")
        return files

    async def blob(self, sha: str) -> bytes:
        """The bytes of a blob by its sha (the git blobs API, base64 in JSON)."""
        body = await self._json(f"{self._base}/git/blobs/{quote(sha, safe='')}", f"blob {sha}")
        if not isinstance(body, dict) or body.get("encoding") != "base64":
            raise TransientError(f"GitHub sent blob {sha} in an unexpected encoding")
        try:
            return base64.b64decode(str(body.get("content", "")), validate=False)
        except (binascii.Error, ValueError) as exc:
            raise TransientError(f"GitHub sent an undecodable blob {sha}") from exc


def _decode(response: httpx2.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise TransientError(f"GitHub sent invalid JSON for {what}") from exc


def _blobs(body: Any, *, prefix: str) -> list[RepoFile]:
    """Regular files of a tree answer (symlinks and submodules are not documents)."""
    out = []
    for entry in body.get("tree", []) if isinstance(body, dict) else []:
        if isinstance(entry, dict) and entry.get("type") == "blob" and entry.get("mode") in (
            "100644", "100755",
        ):  # fmt: skip
            out.append(RepoFile(path=prefix + str(entry["path"]), sha=str(entry["sha"]),
                                size=int(entry.get("size") or 0)))  # fmt: skip
    return out


def _missing(folder: str, where: str) -> NotFoundError:
    return NotFoundError(
        f"GitHub: folder '{folder}' not found in {where} (check R42_HANDBOOK_PATH; "
        "an empty folder has no files to sync)"
    )


def _reset_time(response: httpx2.Response) -> datetime | None:
    reset = response.headers.get("x-ratelimit-reset", "")
    if reset.isdigit():
        return datetime.fromtimestamp(int(reset), UTC)
    retry_after = response.headers.get("retry-after", "")
    if retry_after.isdigit():
        return datetime.now(UTC) + timedelta(seconds=int(retry_after))
    return None


def _raise_for_status(response: httpx2.Response, *, what: str) -> None:
    status = response.status_code
    if status < 400:
        return
    if status == 404:
        raise NotFoundError(
            f"GitHub: {what} not found (check R42_HANDBOOK_OWNER/REPO/PATH/BRANCH; a private "
            "repository needs GITHUB_TOKEN)"
        )
    if status == 409:
        raise NotFoundError(f"GitHub: {what}: the repository is empty")
    if status == 401:
        raise ConfigError("GitHub rejected the token (401): check GITHUB_TOKEN")
    remaining = response.headers.get("x-ratelimit-remaining")
    secondary = status == 403 and "retry-after" in response.headers
    if status == 429 or (status == 403 and remaining == "0") or secondary:
        reset_at = _reset_time(response)
        when = f"; it resets at {reset_at:%H:%M:%S} UTC" if reset_at else ""
        raise RateLimitedError(f"GitHub rate limit reached reading {what}{when}",
                               reset_at=reset_at)  # fmt: skip
    if status == 403:
        raise ConfigError(f"GitHub refused access to {what} (403): check GITHUB_TOKEN")
    if status >= 500:
        raise TransientError(f"GitHub answered {status} for {what}")
    raise BadInputError(f"GitHub answered {status} for {what}")
