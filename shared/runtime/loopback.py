"""Plain HTTP GETs to this machine's nats-server monitor and service probes (stdlib only).

`r42 up` polls these while it starts. An httpx client builds an SSL context when it is made
(~75 ms of CPU, even for http URLs) and httpx costs ~90 ms to import: both sat on the path
to the first answer, for a few loopback requests that need neither TLS nor pooling.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit


class LoopbackError(Exception):
    """A request that got no HTTP answer (refused, timed out, cut off) or no JSON body."""


def get(url: str, *, timeout: float) -> tuple[int, bytes]:
    """(status, body) of GET `url` (http only); raise LoopbackError when nothing answers."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"not a plain http URL: {url!r}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", target)
        resp = conn.getresponse()
        return resp.status, resp.read()
    except (OSError, http.client.HTTPException) as exc:
        raise LoopbackError(f"GET {url}: {type(exc).__name__}: {exc}") from None
    finally:
        conn.close()


def status(url: str, *, timeout: float) -> int | None:
    """The HTTP status of GET `url`; None when nothing answers."""
    try:
        return get(url, timeout=timeout)[0]
    except LoopbackError:
        return None


def get_json(url: str, *, timeout: float) -> object:
    """The JSON body of a 200 answer to GET `url`; raise LoopbackError otherwise."""
    code, body = get(url, timeout=timeout)
    if code != 200:
        raise LoopbackError(f"GET {url}: HTTP {code}")
    try:
        return json.loads(body)
    except ValueError as exc:
        raise LoopbackError(f"GET {url}: not JSON: {exc}") from None
