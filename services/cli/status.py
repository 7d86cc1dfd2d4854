"""`r42 status [--json]`: the running stack's NATS nodes and services, with readiness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from shared.config import build_settings
from shared.runtime import display_url, find_running, pid_alive
from shared.runtime.nats_auth import SERVICE_GRANTS, ensure_user
from shared.runtime.readiness import ready_services, service_of


def collect(data_dir: Path | None) -> dict[str, Any] | None:
    """The status document, or None when no `r42 up` runs on the data dir."""
    settings = build_settings(**({"data_dir": data_dir} if data_dir else {}))
    state = find_running(settings.data_dir)
    if state is None:
        return None
    instances = list(state.services)
    ready = dict(state.ready)
    monitors = [n.monitor_url for n in state.nats_nodes if n.monitor_url and n.pid]
    if not monitors and state.nats_monitor_url:
        monitors = [state.nats_monitor_url]
    if monitors and state.users_dir:
        users_dir = Path(state.users_dir)
        names = {service_of(i) for i in instances}
        users = {
            n: ensure_user(users_dir, n, SERVICE_GRANTS[n])
            for n in names
            if n in SERVICE_GRANTS and (users_dir / f"{n}.nk").exists()
        }
        ready = ready_services(monitors, users, instances)
    from shared.obs.status import read_statuses

    # Each service's own status file (shared.obs) adds its metrics URL when it has one.
    metrics = {st.pid: st.metrics_url for st in read_statuses(Path(state.data_dir))}
    if state.nats_nodes:
        nats = [
            {"pid": n.pid, "url": display_url(n.url)}
            for n in state.nats_nodes
            if n.pid is not None and pid_alive(n.pid)
        ]
    elif state.nats_pid is None or pid_alive(state.nats_pid):
        nats = [{"pid": state.nats_pid, "url": display_url(state.nats_url)}]
    else:
        nats = []
    restarts = state.restarts
    return {
        "data_dir": state.data_dir,
        "pid": state.pid,
        "nats": nats,
        "nats_expected": max(1, len(state.nats_nodes)),
        "stream_replicas": state.stream_replicas,
        "services": [
            {
                "name": service_of(instance),
                "instance": instance,
                "pid": pid,
                "ready": bool(ready.get(instance)) and pid_alive(pid),
                "restarts": restarts.get(instance, 0),
                "metrics_url": metrics.get(pid),
            }
            for instance, pid in state.services.items()
        ],
        "nats_restarts": sum(v for k, v in restarts.items() if k.startswith("nats")),
        # A staged start's later services, not spawned yet (no pid, not ready).
        "starting": list(state.pending),
    }


def register(app: typer.Typer) -> None:
    """Register `r42 status`."""

    @app.command()
    def status(
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
        data_dir: Annotated[Path | None, typer.Option("--data-dir", help="[R42_DATA_DIR]")] = None,
    ) -> None:
        """Show the running stack: NATS, each service's pid, readiness and restarts."""
        doc = collect(data_dir)
        if doc is None:
            if as_json:
                typer.echo(json.dumps({"nats": [], "services": [], "running": False}))
            typer.echo("r42 is not running here (start it with `r42 up`)", err=True)
            raise typer.Exit(1)
        if as_json:
            typer.echo(json.dumps(doc, indent=2))
            return
        typer.echo(f"r42 up (pid {doc['pid']}) on {doc['data_dir']}")
        down = doc["nats_expected"] - len(doc["nats"])
        if down > 0:
            what = (
                "nats" if doc["nats_expected"] == 1 else f"{down} of {doc['nats_expected']} nodes"
            )
            typer.echo(f"  {'nats':<12} {what} DOWN (the runtime restarts it)")
        for node in doc["nats"]:
            pid = f"pid {node['pid']}" if node["pid"] else "external"
            typer.echo(f"  {'nats':<12} {node['url']} ({pid})")
        typer.echo(f"  {'':<12} streams R{doc['stream_replicas']}, restarts {doc['nats_restarts']}")
        for svc in doc["services"]:
            mark = "ready" if svc["ready"] else "NOT READY"
            where = f"  {svc['metrics_url']}" if svc["metrics_url"] else ""
            typer.echo(
                f"  {svc['instance']:<12} pid {svc['pid']:<8} {mark:<10} "
                f"restarts {svc['restarts']}{where}"
            )
        for instance in doc["starting"]:
            typer.echo(f"  {instance:<12} {'-':<12} starting (after the chat path)")
