"""Starting a GitHub handbook sync from Slack or the console (`rpc.extractor.sync_handbook`).

The sync itself runs in the extractor; the contract is shared/bus/extractor_rpc.py.
"""

from __future__ import annotations

from services.gateway.client import GatewayClient
from shared.bus import request
from shared.bus.extractor_rpc import (
    SYNC_HANDBOOK_SUBJECT,
    HandbookSyncReply,
    HandbookSyncRequest,
)
from shared.errors import BusError

SYNC_TIMEOUT_S = 900.0
NOT_SERVED = (
    "de handbook-synchronisatie is nu niet beschikbaar (geen extractor beantwoordt "
    f"{SYNC_HANDBOOK_SUBJECT}); start hem met `r42 sync-handbook`"
)


async def sync_handbook(client: GatewayClient, *, user_id: str) -> HandbookSyncReply:
    """Ask the extractor for a handbook sync (admins only); BusError when nobody serves it."""
    client.require_admin(user_id, "het handboek synchroniseren")
    try:
        return await request(
            client.broker,
            SYNC_HANDBOOK_SUBJECT,
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
