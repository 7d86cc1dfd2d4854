"""Who may decide on the graph: the owner's own admin list, never a field of a request.

`R42_ADMINS` is the list; an empty list means nobody. One documented exception: in the
embedded runtime (`r42 up` on this machine: NATS on loopback, the SQLite store in the data
dir) the operator at its console reviews suggestions too. Console user ids have the form
`console-<name>`, which no Slack or Teams id has, and only the console issues them. The
rule comes from how the runtime runs, not from a flag in an event: with an external NATS
or MongoDB (production) a console id has no rights at all.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from shared.config import Settings
from shared.identity import CONSOLE_PREFIX


def embedded(settings: Settings) -> bool:
    """Whether these settings run the embedded, single-machine runtime."""
    if not settings.store_url.startswith("sqlite"):
        return False
    if not settings.nats_url:
        return True
    host = urlsplit(settings.nats_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_graph_admin(user_id: str, settings: Settings) -> bool:
    """Whether `user_id` may approve or reject suggestions (see the module docstring)."""
    if user_id in settings.admins:
        return True
    return embedded(settings) and user_id.startswith(CONSOLE_PREFIX) and len(user_id) > 8
