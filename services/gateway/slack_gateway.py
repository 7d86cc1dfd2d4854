"""The Slack side of the gateway: chat turns, /learn content, proposals, reviews and feedback.

Every flow here runs after the request was acked (see slack_app); the reply_to dicts on
bus events carry where to answer: {"via": "slack", "channel", "ts", "thread_ts", "user"}.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from services.gateway import actions as ids
from services.gateway import blocks_chat as bc
from services.gateway.background import Background
from services.gateway.client import ForbiddenError, GatewayClient
from services.gateway.dedupe import Deduper
from services.gateway.slack_api import Blocks, SlackApi
from services.gateway.text import escape, mention, strip_mentions
from shared.bus import KbDelta
from shared.errors import BadInputError, BusError, NotFoundError, R42Error

log = logging.getLogger(__name__)

VIA = "slack"
EMPTY_MENTION_HINT = (
    "Stel me gerust een vraag, bijvoorbeeld: _Hoe declareer ik reiskosten?_ "
    "Typ `/r42 help` voor alles wat ik kan."
)


def user_message(exc: BaseException) -> str:
    """What to tell a person about a failure (R42 errors are safe to show; others get a ref)."""
    if isinstance(exc, BusError):
        return f"R42 is even niet bereikbaar ({exc}). Probeer het zo opnieuw."
    if isinstance(exc, (BadInputError, NotFoundError, ForbiddenError)):
        return str(exc)
    if isinstance(exc, R42Error):
        return f"Er ging iets mis: {exc}"
    ref = uuid.uuid4().hex[:8]
    log.error("unexpected error (ref %s)", ref, exc_info=exc)
    return f"Er ging iets mis (referentie {ref})."


Update = Callable[[Blocks, str], Awaitable[None]]
Private = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Reply:
    """How to answer an interaction: replace the clicked message, or tell the clicker privately."""

    update: Update
    private: Private


@dataclass
class SlackGateway:
    """Everything the Slack listeners and the bus handlers share."""

    client: GatewayClient
    api: SlackApi
    deduper: Deduper
    admin_channel: str | None = None
    background: Background = field(default_factory=Background)

    @property
    def store(self) -> Any:
        """The store behind the client."""
        return self.client.store

    def reply_to(
        self,
        *,
        channel: str,
        user: str,
        ts: str | None = None,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Routing data for an answer event that must come back to this message."""
        data = {"via": VIA, "channel": channel, "user": user, **extra}
        if ts:
            data["ts"] = ts
        if thread_ts:
            data["thread_ts"] = thread_ts
        return data

    async def notify(self, channel: str, text: str, *, thread_ts: str | None = None) -> None:
        """Post a short notice (mrkdwn)."""
        await self.api.post(channel, bc.notice_blocks(text), text=text, thread_ts=thread_ts)

    # -- chat -------------------------------------------------------------------------------

    async def chat_turn(
        self, *, user: str, channel: str, text: str, thread_ts: str | None, correlation: str
    ) -> None:
        """Answer one DM / mention: working indicator, R42's answer, sources, chip, feedback."""
        question = strip_mentions(text)
        if not question:
            await self.notify(channel, EMPTY_MENTION_HINT, thread_ts=thread_ts)
            return
        if await self.client.quiz_active(user):
            log.info("quiz active for %s: R42 stays silent", user)
            return
        thinking = await self.api.post(
            channel, bc.thinking_blocks(), text=bc.THINKING_TEXT, thread_ts=thread_ts
        )
        try:
            name = await self.api.user_name(user)
            reply = await self.client.chat(
                user_id=user, text=question, user_name=name, correlation_id=correlation
            )
        except Exception as exc:
            text = user_message(exc)
            await self.api.update(
                channel, thinking, bc.notice_blocks(f":warning: {text}"), text=text
            )
            return
        if reply.refused:
            await self.api.update(
                channel,
                thinking,
                bc.notice_blocks(escape(reply.text or "…")),
                text=reply.text or "…",
            )
            return
        messages = bc.answer_messages(reply, turn_id=correlation)
        await self.api.update(channel, thinking, messages[0], text=reply.text[:3000] or "…")
        for extra in messages[1:]:  # long answers continue where the answer is (DM or thread)
            await self.api.post(channel, extra, text="(vervolg)", thread_ts=thread_ts)

    async def feedback(
        self, *, user: str, turn_id: str, positive: bool, where: str, reply: Reply
    ) -> None:
        """Store 👍 / 👎 and thank the user privately."""
        await self.client.feedback(user_id=user, turn_id=turn_id, positive=positive, where=where)
        await reply.private("Bedankt voor je feedback!")

    # -- proposals and reviews --------------------------------------------------------------

    async def proposal_click(
        self, *, user: str, proposal_id: str, accept: bool, blocks: Blocks, reply: Reply
    ) -> None:
        """Yes / No on a chip: ask r42, show the outcome, send non-admin Yes to the admins."""
        try:
            result = await self.client.decide_proposal(
                proposal_id=proposal_id, user_id=user, accept=accept
            )
        except Exception as exc:
            await reply.private(user_message(exc))
            return
        if result.status in ("not_found", "already_decided"):
            await reply.private(bc.PROPOSAL_OUTCOMES[result.status])
            return
        await reply.update(
            bc.proposal_outcome(blocks, status=result.status, user_id=user), bc.PROPOSAL_QUESTION
        )
        if result.status == "pending_review" and result.suggestion_id:
            await self.send_review(result.suggestion_id)

    async def send_review(self, suggestion_id: str) -> None:
        """Post an Approve / Reject request to the admin channel (or each admin's DM)."""
        suggestion = await self.store.suggestions.get(suggestion_id)
        if suggestion is None:
            log.warning("suggestion %s vanished before review", suggestion_id)
            return
        blocks = bc.review_blocks(
            suggestion_id=suggestion.id,
            delta=KbDelta.model_validate(suggestion.delta),
            proposed_by=suggestion.proposed_by,
            summary=str(suggestion.context.get("summary", "")),
        )
        targets = (
            [self.admin_channel]
            if self.admin_channel
            else [await self.api.dm_channel(a) for a in sorted(self.client.admins)]
        )
        if not targets:
            log.warning(
                "suggestion %s waits for review but no admins are configured", suggestion.id
            )
        for target in targets:
            await self.api.post(target, blocks, text="Voorstel voor de kennisgraaf")

    async def review_click(
        self, *, user: str, suggestion_id: str, approve: bool, blocks: Blocks, reply: Reply
    ) -> None:
        """Approve / Reject: authorised here; the message then says who decided."""
        decision = await self.client.decide_suggestion(
            suggestion_id=suggestion_id, user_id=user, approve=approve
        )
        if decision.status == "forbidden":
            log.warning("non-admin %s tried to decide suggestion %s", user, suggestion_id)
            await reply.private("Alleen beheerders kunnen voorstellen beoordelen.")
            return
        if decision.status == "not_found":
            await reply.private("Dit voorstel bestaat niet (meer).")
            return
        if decision.decision is None or decision.decided_by is None:
            # A concurrent click won; whoever it was, their decision stands.
            await reply.private("Over dit voorstel is net al besloten door een andere beheerder.")
            return
        approved, by = decision.approved, decision.decided_by
        if any(b.get("block_id") == ids.BLOCK_REVIEW_ACTIONS for b in blocks):
            updated = bc.review_outcome(blocks, approved=approved, decided_by=by)
        else:  # a row of the /r42 suggestions list: its own actions block
            updated = _decided_row(blocks, suggestion_id, approved=approved, by=by)
        await reply.update(updated, "Voorstel beoordeeld")
        if decision.status == "already_decided":
            await reply.private(f"Hierover is al besloten door {mention(by)}.")


def _decided_row(blocks: Blocks, suggestion_id: str, *, approved: bool, by: str) -> Blocks:
    verdict = ":white_check_mark: Goedgekeurd" if approved else ":x: Afgewezen"
    line = bc.context(f"{verdict} door {mention(by)}")
    out: Blocks = []
    for block in blocks:
        values = [e.get("value") for e in block.get("elements") or [] if isinstance(e, dict)]
        out.append(line if block.get("type") == "actions" and suggestion_id in values else block)
    return out
