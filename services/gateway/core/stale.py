"""Stale learning content for admins: list it, regenerate a selection (the content service)."""

from __future__ import annotations

from collections.abc import Sequence

from services.gateway.core.audit import audit
from services.gateway.core.context import CoreContext
from shared.bus import NoResponderError, request
from shared.bus.stale_rpc import (
    STALE_LIST_SUBJECT,
    STALE_REGENERATE_SUBJECT,
    RegenerateReply,
    RegenerateRequest,
    StaleListReply,
    StaleListRequest,
)
from shared.errors import BadInputError, BusError
from shared.store import AuditSurface

LIST_TIMEOUT_S = 30.0
REGENERATE_TIMEOUT_S = 900.0  # one model call per part
NOT_SERVED = "de content-service draait niet; start R42 met `r42 up`"


class StaleCalls:
    """Admins only: checked here and again by the content service; every action audited."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def _admin(self, user_id: str, action: str, surface: AuditSurface) -> None:
        if not self.ctx.is_admin(user_id):
            await audit(self.ctx, actor=user_id, action=action, target="content",
                        allowed=False, surface=surface, after={"outcome": "refused"})  # fmt: skip
        self.ctx.require_admin(user_id, "verouderde inhoud beheren")

    async def list(self, *, user_id: str, surface: AuditSurface) -> StaleListReply:
        """Every stale part with why."""
        await self._admin(user_id, "content.stale", surface)
        return await self._ask(
            STALE_LIST_SUBJECT, StaleListRequest(user_id=user_id), StaleListReply, LIST_TIMEOUT_S
        )

    async def regenerate(
        self, *, user_id: str, parts: Sequence[str], surface: AuditSurface
    ) -> RegenerateReply:
        """Regenerate the chosen parts ('TOPIC|KIND')."""
        await self._admin(user_id, "content.regenerate", surface)
        if not parts:
            raise BadInputError("kies minstens één onderdeel om te vernieuwen")
        try:
            req = RegenerateRequest(user_id=user_id, parts=list(parts))
        except ValueError:
            raise BadInputError("deze selectie is ongeldig") from None
        reply = await self._ask(
            STALE_REGENERATE_SUBJECT, req, RegenerateReply, REGENERATE_TIMEOUT_S
        )
        await audit(self.ctx, actor=user_id, action="content.regenerate", target="content",
                    allowed=True, surface=surface, before={"parts": list(parts)},
                    after=reply.model_dump())  # fmt: skip
        return reply

    async def _ask[R: StaleListReply | RegenerateReply](
        self, subject: str, req: StaleListRequest | RegenerateRequest, model: type[R],
        wait_s: float,
    ) -> R:  # fmt: skip
        try:
            return await request(self.ctx.broker, subject, req, response_model=model,
                                 timeout=wait_s, namespace=self.ctx.namespace)  # fmt: skip
        except NoResponderError:
            raise BusError(NOT_SERVED) from None
