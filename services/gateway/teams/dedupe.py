"""Duplicate deliveries: Teams re-sends an activity (same id) it thinks was not answered.

The activity id is claimed in the Teams claims bucket through the same mechanism as Slack's
retries (core.claims): the first process to claim it answers, repeats are dropped.
"""

from __future__ import annotations

from faststream.nats import NatsBroker
from nats.js.kv import KeyValue

from services.gateway.core.claims import CLAIM_TTL_S, Deduper
from services.gateway.core.claims import open_claims as open_bucket
from shared.bus.subjects import validate_namespace

__all__ = ["CLAIM_TTL_S", "ActivityClaims", "bucket_name", "open_claims"]

ActivityClaims = Deduper
"""claim(activity key) is True exactly once across this process and every replica."""


def bucket_name(namespace: str = "") -> str:
    """The KV bucket of Teams activity claims (per bus namespace)."""
    validate_namespace(namespace)
    return f"r42_teams_claims_{namespace}" if namespace else "r42_teams_claims"


async def open_claims(broker: NatsBroker, *, namespace: str = "", replicas: int = 1) -> KeyValue:
    """Bind (or create, with `replicas`) the shared Teams claims bucket."""
    return await open_bucket(broker, bucket=bucket_name(namespace), replicas=replicas)
