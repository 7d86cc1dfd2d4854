"""Topic cards and admin topic actions: every write goes to the KG owner, which authorises it.

The card and each action are requests to the extractor (`rpc.extractor.topic_card`,
`rpc.extractor.topic`); the owner checks the actor against its admin list and audits the
attempt, refusals included. What a delete takes along (relations, content, the quiz bank)
is read here so a surface can say so before an admin confirms.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.gateway.core.context import CoreContext
from shared.bus import NoResponderError, request
from shared.bus.topic_rpc import (
    TOPIC_ACTION_SUBJECT,
    TOPIC_CARD_SUBJECT,
    TopicAction,
    TopicCard,
    TopicCardReply,
    TopicCardRequest,
    TopicReply,
)
from shared.errors import BadInputError, BusError, NotFoundError
from shared.store import AuditEntry, AuditSurface

RPC_TIMEOUT_S = 30.0
NOT_SERVED = "de kennisgraaf is nu niet bereikbaar (de extractor antwoordt niet); probeer het zo"


@dataclass(frozen=True)
class DeleteImpact:
    """What goes with a topic: its relations, its content parts and its quiz questions."""

    relations: int
    content_parts: list[str]
    quiz_questions: int


class TopicCalls:
    """Cards for everyone; edits, deletes, merges and relation changes for admins."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def _ask[R: (TopicReply, TopicCardReply)](
        self, subject: str, body: TopicAction | TopicCardRequest, model: type[R]
    ) -> R:
        ctx = self.ctx
        try:
            return await request(ctx.broker, subject, body, response_model=model,
                                 timeout=RPC_TIMEOUT_S, namespace=ctx.namespace)  # fmt: skip
        except NoResponderError:
            raise BusError(NOT_SERVED) from None

    async def card(self, query: str) -> TopicCard:
        """The card of a topic by id or label; NotFoundError when none matches."""
        query = query.strip()
        if not query:
            raise BadInputError("noem een onderwerp, bijvoorbeeld `/r42 topic onboarding`")
        if len(query) > 300:
            raise BadInputError("de onderwerpnaam is te lang")
        reply = await self._ask(TOPIC_CARD_SUBJECT, TopicCardRequest(query=query), TopicCardReply)
        if reply.card is None:
            raise NotFoundError(f"geen onderwerp gevonden voor '{query}'")
        return reply.card

    async def act(self, action: TopicAction) -> TopicReply:
        """Send one action to the KG owner (it authorises and audits); the reply says how."""
        return await self._ask(TOPIC_ACTION_SUBJECT, action, TopicReply)

    async def impact(self, topic_id: str) -> DeleteImpact:
        """What deleting a topic takes along."""
        store = self.ctx.store
        relations = await store.relations.list(topic_id=topic_id)
        content = await store.content.get(topic_id)
        parts = [k for k in ("article", "slides", "infographic")
                 if content is not None and getattr(content, k) is not None]  # fmt: skip
        bank = await store.quiz_banks.get(topic_id)
        return DeleteImpact(len(relations), parts, len(bank.questions) if bank else 0)

    async def refuse(
        self, *, user_id: str, action: str, target: str, surface: AuditSurface
    ) -> None:
        """Audit an attempt a surface refused before asking the owner (e.g. opening a modal)."""
        await self.ctx.store.audit.record(
            AuditEntry(actor=user_id, action=f"topic.{action}", target=target, allowed=False,
                       after={"outcome": "refused", "detail": "not an admin"}, surface=surface)
        )  # fmt: skip


REFUSED = "alleen beheerders mogen onderwerpen aanpassen; de poging is vastgelegd"


def outcome_text(reply: TopicReply, done: str) -> str:
    """A Dutch line for the outcome of an action (done names what happened)."""
    if reply.outcome == "done":
        return done
    if reply.outcome == "unchanged":
        return "Er is niets veranderd: het stond al zo."
    if reply.outcome == "refused":
        return REFUSED[0].upper() + REFUSED[1:] + "."
    if reply.outcome == "not_found":
        return "Dat onderwerp of die relatie bestaat (niet) meer."
    return "Dat kan niet met deze invoer."
