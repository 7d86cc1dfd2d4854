"""Which services are ready: seen by the nats-server itself (connection, user, bound subjects)
and by each service's own `/readyz` (NATS, store and consumers, as the probes see them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from shared.obs.status import read_statuses
from shared.runtime.loopback import LoopbackError, get_json, status
from shared.runtime.nats_auth import READY_SUBJECTS, SERVICE_GRANTS, NatsUser

READYZ_TIMEOUT_S = 1.0


def connections(monitor_url: str, *, timeout: float = 2.0) -> list[dict[str, object]]:
    """The server's client connections with their subscriptions (empty when unreachable)."""
    try:
        body = get_json(f"{monitor_url}/connz?subs=1&auth=1&limit=4096", timeout=timeout)
    except LoopbackError:
        return []
    conns = body.get("connections") if isinstance(body, dict) else None
    return [c for c in conns if isinstance(c, dict)] if isinstance(conns, list) else []


def service_of(instance: str) -> str:
    """The service an instance belongs to: `r42.2` → `r42` (names never contain '.')."""
    return instance.partition(".")[0]


def ready_services(
    monitor_urls: str | Sequence[str], users: Mapping[str, NatsUser], names: list[str]
) -> dict[str, bool]:
    """instance → whether its bus connection is up, as its service's user, with its rpc
    subjects bound; a cluster's connections are gathered from every node.

    A service the runtime has no grants for (a custom `name=module`) counts as ready once
    it runs: there is nothing to check it against.
    """
    urls = [monitor_urls] if isinstance(monitor_urls, str) else list(monitor_urls)
    conns = [c for url in urls for c in connections(url)]
    result: dict[str, bool] = {}
    for name in names:
        service = service_of(name)
        user = users.get(service)
        grants = SERVICE_GRANTS.get(service)
        if user is None or grants is None:
            result[name] = True
            continue
        result[name] = any(
            c.get("name") == f"r42-{name}"
            and c.get("authorized_user") == user.public_key
            and int(str(c.get("subscriptions") or 0)) > 0
            and set(READY_SUBJECTS.get(service, ())) <= set(_subjects(c))
            for c in conns
        )
    return result


def _subjects(conn: Mapping[str, object]) -> list[str]:
    subs = conn.get("subscriptions_list") or []
    return [str(s) for s in subs] if isinstance(subs, list) else []


def readyz(data_dir: Path, pids: Mapping[str, int], names: Sequence[str]) -> dict[str, bool]:
    """instance → whether the running process's `/readyz` answers 200.

    Its URL comes from the status file that process wrote (a file of an earlier pid is
    stale). A custom service (`name=module`, no grants) serves no probe: ready once it runs.
    """
    statuses = {s.instance: s for s in read_statuses(data_dir)}
    result: dict[str, bool] = {}
    for name in names:
        found = statuses.get(name)
        if found is None or found.pid != pids.get(name):
            result[name] = service_of(name) not in SERVICE_GRANTS and name in pids
            continue
        result[name] = status(found.readyz_url, timeout=READYZ_TIMEOUT_S) == 200
    return result
