"""Extractor-specific settings (env prefix R42_EXTRACTOR_), built at start-up."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.errors import ConfigError
from shared.kb import MAX_CHUNK_CHARS, OVERLAP_CHARS

LEASE_TTL_S = 6.0
"""Short, so a killed `r42 ingest` blocks the resume only briefly; a lapsed lease nobody took
is kept by a live holder's next renewal, and replicas take over only on redelivery."""


@dataclass(frozen=True)
class ExtractOptions:
    """Chunking and model settings of one extraction run."""

    max_chunk_chars: int
    overlap_chars: int
    output_retries: int = 1
    max_output_tokens: int = 4096
    lease_ttl_s: float = LEASE_TTL_S
    """A source's extraction lease lapses this long after its holder's last renewal."""


class ExtractorSettings(BaseSettings):
    """Tuning of the extractor service; defaults are production values."""

    model_config = SettingsConfigDict(env_prefix="R42_EXTRACTOR_", extra="ignore")

    bus_namespace: str = Field(
        default="", description="Bus namespace (tests isolate themselves on a shared server)"
    )
    ack_wait_s: float = Field(
        default=30.0,
        gt=0,
        description="How long an unacknowledged source stays with a crashed worker before "
        "JetStream redelivers it (a live worker keeps it with in-progress signals)",
    )
    max_deliver: int = Field(default=5, ge=1, description="Deliveries before a source fails")
    source_workers: int = Field(
        default=4, ge=1, le=64, description="Sources extracted concurrently per replica"
    )
    max_chunk_chars: int = Field(default=MAX_CHUNK_CHARS, ge=200)
    overlap_chars: int = Field(default=OVERLAP_CHARS, ge=0)
    output_retries: int = Field(
        default=1,
        ge=0,
        le=3,
        description="Extra asks when the model's tool input is invalid (HTTP retries are "
        "call_llm's own policy)",
    )
    max_output_tokens: int = Field(
        default=4096,
        ge=256,
        description="max_tokens per extraction call; the limiter reserves it against the "
        "output-token budget until the reply settles, so it stays near what a chunk needs",
    )
    sample_handbook: bool = Field(
        default=True, description="Ingest the bundled sample handbook on the first start"
    )

    @property
    def options(self) -> ExtractOptions:
        """Chunking and model options of every extraction run (service and CLI alike)."""
        return ExtractOptions(
            max_chunk_chars=self.max_chunk_chars, overlap_chars=self.overlap_chars,
            output_retries=self.output_retries, max_output_tokens=self.max_output_tokens,
            # Lapsed by the time JetStream redelivers the source to another replica.
            lease_ttl_s=min(self.ack_wait_s, LEASE_TTL_S),
        )  # fmt: skip


def build_extractor_settings(**overrides: Any) -> ExtractorSettings:
    """Build the extractor settings from the environment; ConfigError when invalid."""
    try:
        settings = ExtractorSettings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_input=False)
        )
        raise ConfigError(f"invalid extractor settings (R42_EXTRACTOR_*): {problems}") from None
    if settings.overlap_chars >= settings.max_chunk_chars:
        raise ConfigError("R42_EXTRACTOR_OVERLAP_CHARS must be below R42_EXTRACTOR_MAX_CHUNK_CHARS")
    return settings
