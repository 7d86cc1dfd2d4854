"""The per-process status file `<data>/run/<instance>.json` that `r42 status` reads."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

RUN_DIR = "run"


class ServiceStatus(BaseModel):
    """What one running service process says about itself."""

    version: int = 1
    service: str
    instance: str
    pid: int
    metrics_url: str = Field(description="http://host:port/metrics")
    healthz_url: str
    readyz_url: str
    ready: bool
    checks: dict[str, str] = Field(default_factory=dict, description="check → 'ok' or the reason")
    started_at: datetime
    updated_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def status_path(data_dir: Path, instance: str) -> Path:
    """Where the status file of `instance` lives."""
    return Path(data_dir) / RUN_DIR / f"{instance}.json"


def write_status(data_dir: Path, status: ServiceStatus) -> Path:
    """Write atomically (a reader never sees half a file); no secrets in it, so 0644."""
    path = status_path(data_dir, status.instance)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(status.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_statuses(data_dir: Path) -> list[ServiceStatus]:
    """Every readable status file under the data dir (stale ones included: check `pid`)."""
    found: list[ServiceStatus] = []
    for path in sorted((Path(data_dir) / RUN_DIR).glob("*.json")):
        try:
            found.append(ServiceStatus.model_validate_json(path.read_bytes()))
        except (OSError, ValueError):
            continue
    return found


def remove_status(data_dir: Path, instance: str, *, pid: int) -> None:
    """Remove the file if this process wrote it (a restarted replica may own it by now)."""
    path = status_path(data_dir, instance)
    try:
        current = ServiceStatus.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return
    if current.pid == pid:
        path.unlink(missing_ok=True)
