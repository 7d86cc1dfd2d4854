"""Starting a GitHub handbook sync from Slack or the console (`rpc.extractor.sync_handbook`).

The sync itself runs in the extractor. PROPOSED CONTRACT, to move to shared/bus (the
extractor must import it from there; until it serves the subject the gateway says so):
request {user_id, is_admin}, reply {changed, unchanged, failed, message}.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from services.gateway.client import GatewayClient
from shared.bus import request
from shared.errors import BusError

SYNC_SUBJECT = "rpc.extractor.sync_handbook"
SYNC_TIMEOUT_S = 900.0
NOT_SERVED = (
    "de handbook-synchronisatie is via chat nog niet beschikbaar (de extractor beantwoordt "
    f"{SYNC_SUBJECT} niet); start hem met `r42 sync-handbook`"
)


class HandbookSyncRequest(BaseModel):
    """An admin asks the extractor to sync the GitHub handbook now."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)
    is_admin: bool = False


class HandbookSyncReply(BaseModel):
    """How many handbook files changed, were unchanged or failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    changed: int = Field(default=0, ge=0)
    unchanged: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    message: str = Field(default="", max_length=4000)


async def sync_handbook(client: GatewayClient, *, user_id: str) -> HandbookSyncReply:
    """Ask the extractor for a handbook sync (admins only); BusError when nobody serves it."""
    client.require_admin(user_id, "het handboek synchroniseren")
    try:
        return await request(
            client.broker,
            SYNC_SUBJECT,
            HandbookSyncRequest(user_id=user_id, is_admin=True),
            response_model=HandbookSyncReply,
            timeout=SYNC_TIMEOUT_S,
            namespace=client.namespace,
        )
    except BusError as exc:
        if "no service is answering" in str(exc):
            raise BusError(NOT_SERVED) from None
        raise


def describe_sync(reply: HandbookSyncReply) -> str:
    """One line on a finished sync."""
    line = (
        f"handboek gesynchroniseerd: {reply.changed} bestand(en) bijgewerkt, "
        f"{reply.unchanged} ongewijzigd, {reply.failed} mislukt"
    )
    return f"{line}. {reply.message}".strip() if reply.message else line
