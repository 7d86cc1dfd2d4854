"""Observability settings, read from the environment at service start-up."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

_INSTANCE_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")


class ObsSettings(BaseSettings):
    """Where /metrics, /healthz and /readyz listen, and where traces go."""

    model_config = SettingsConfigDict(env_prefix="R42_", extra="ignore", populate_by_name=True)

    metrics_host: str = Field(default="127.0.0.1", min_length=1)
    metrics_port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port")
    otlp_endpoint: str | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        ),
    )
    traces_file: Path | None = Field(
        default=None, description="Append finished spans as JSON lines (R42_TRACES_FILE)"
    )
    instance: str | None = Field(
        default=None, description="Names the status file when replicas share a data dir"
    )

    @field_validator("otlp_endpoint", "instance", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("instance")
    @classmethod
    def _instance_name(cls, value: str | None) -> str | None:
        if value is not None and not _INSTANCE_RE.fullmatch(value):
            raise ValueError("use lowercase letters, digits, '.', '-' or '_' (max 63)")
        return value
