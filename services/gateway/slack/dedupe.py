"""Slack retry dedupe: the gateway's claims bucket (the mechanism lives in core.claims)."""

from __future__ import annotations

from faststream.nats import NatsBroker
from nats.js.kv import KeyValue

from services.gateway.core.claims import CLAIM_TTL_S, Deduper, TtlSet
from services.gateway.core.claims import open_claims as open_bucket
from shared.bus.subjects import validate_namespace

__all__ = ["CLAIM_TTL_S", "Deduper", "TtlSet", "bucket_name", "open_claims"]


def bucket_name(namespace: str = "") -> str:
    """The KV bucket of gateway claims (per bus namespace)."""
    validate_namespace(namespace)
    return f"r42_gateway_claims_{namespace}" if namespace else "r42_gateway_claims"


async def open_claims(broker: NatsBroker, *, namespace: str = "", replicas: int = 1) -> KeyValue:
    """Bind (or create, with `replicas`) the shared Slack claims bucket."""
    return await open_bucket(broker, bucket=bucket_name(namespace), replicas=replicas)
