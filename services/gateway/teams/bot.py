"""The bot: routes Teams activities (messages, card invokes, installs) to the flows.

Messages are answered with 202 at once: the handler only claims the activity id (a
redelivery is dropped) and starts the work in the background, which replies proactively.
Card invokes (Action.Execute) must carry their answer in the HTTP response: they do one
fast step (a store read or a bus publish) and return the refreshed card.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from microsoft_agents.activity import (
    Activity,
    AdaptiveCardInvokeResponse,
    AdaptiveCardInvokeValue,
    ConversationReference,
)
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.teams import TeamsActivityHandler

from services.gateway.teams import cards, flows_chat, flows_learn, flows_review, uploads, views
from services.gateway.teams.surface import (
    TeamsGateway,
    conversation_key,
    strip_mentions,
    user_id_of,
)

log = logging.getLogger(__name__)

ADMIN_COMMANDS = frozenset({"sources", "suggestions", "diagnostics", "graph"})
PERSONAL_ONLY = frozenset({"learn", "quiz"})


def _key(activity: Activity) -> str:
    conversation = activity.conversation.id if activity.conversation else ""
    return f"{activity.type}|{conversation}|{activity.id}" if activity.id else ""


def _card_text(activity: Activity) -> str:
    """The first text of the card a click came from is not sent back: use the message text."""
    return activity.text or ""


class R42TeamsBot(TeamsActivityHandler):
    """The Teams activity handler over the shared Teams gateway state."""

    def __init__(self, gw: TeamsGateway) -> None:
        self.gw = gw

    async def on_turn(self, turn_context: TurnContext) -> None:  # type: ignore[override]
        """Drop redeliveries of messages and invokes, then route."""
        activity = turn_context.activity
        if activity.type in ("message", "invoke") and not await self.gw.claims.claim(
            _key(activity)
        ):
            log.info("duplicate Teams delivery %s dropped", activity.id)
            if activity.type == "invoke":
                await turn_context.send_activity(
                    Activity(
                        type="invokeResponse",
                        value={"status": 200, "body": cards.invoke_message("Dit is al verwerkt.")},
                    )
                )
            return
        await super().on_turn(turn_context)

    async def on_message_activity(self, turn_context: TurnContext) -> None:  # type: ignore[override]
        """Answer later: the HTTP request ends now."""
        activity = turn_context.activity
        self.gw.background.spawn(self._message(activity), name=f"teams-message-{activity.id}")

    async def _message(self, activity: Activity) -> None:
        user = user_id_of(activity)
        ref = await self.gw.refs.save(activity, user_id=user)
        personal = (activity.conversation.conversation_type or "personal") == "personal"
        files = uploads.file_attachments(activity)
        if files:
            await uploads.handle(self.gw, ref=ref, user=user, files=files, personal=personal)
            return
        text = strip_mentions(activity)
        word, _, arg = text.partition(" ")
        command = word.lower().lstrip("/")
        thread = None if personal else activity.id
        if command in PERSONAL_ONLY and not personal:
            target = await self.personal_ref(activity, user)
            if target is None:
                await self.gw.notify(
                    ref,
                    "Stuur me een privébericht om te leren of de quiz te spelen.",
                    reply_to=thread,
                )
                return
            await self.gw.notify(ref, "Ik stuur het je in een privégesprek.", reply_to=thread)
            ref, thread = target, None
        if command == "help":
            await self.gw.post(ref, views.help_card(), summary="Help", reply_to=thread)
        elif command == "learn":
            kind = flows_learn.KINDS.get(arg.strip().lower(), "article")
            await flows_learn.learn(self.gw, ref=ref, user=user, kind=kind)
        elif command == "quiz":
            await flows_learn.start_quiz(self.gw, ref=ref, user=user)
        elif command == "leaderboard":
            await self.gw.post(
                ref, await flows_learn.leaderboard(self.gw), summary="Ranglijst", reply_to=thread
            )
        elif command == "clear":
            cleared = await self.gw.client.chat.clear(
                user_id=user, conversation=conversation_key(ref.conversation.id)
            )
            await self.gw.notify(ref, cleared.greeting, reply_to=thread)
        elif command in ADMIN_COMMANDS:
            await flows_chat.admin_command(
                self.gw, ref=ref, user=user, command=command, arg=arg.strip()
            )
        elif command == "ingest":
            await self.gw.notify(ref, uploads.HOW_TO, reply_to=thread)
        else:
            name = activity.from_property.name if activity.from_property else ""
            await flows_chat.chat_turn(
                self.gw, ref=ref, user=user, name=name or "", text=text,
                correlation=activity.id or uuid.uuid4().hex, reply_to=thread,
            )  # fmt: skip

    async def personal_ref(self, activity: Activity, user: str) -> ConversationReference | None:
        """The user's personal chat (opened through the connector when there is none yet)."""
        ref = await self.gw.refs.personal(user)
        if ref is not None or activity.from_property is None:
            return ref
        try:
            return await self.gw.sender.open_personal(activity, refs=self.gw.refs, user_id=user)
        except Exception as exc:
            log.warning("could not open a personal chat with %s: %s", user, exc)
            return None

    async def on_conversation_update_activity(self, turn_context: TurnContext) -> None:  # type: ignore[override]
        """Installed or added: remember the conversation for proactive messages."""
        activity = turn_context.activity
        self.gw.background.spawn(
            self.gw.refs.save(activity, user_id=user_id_of(activity)), name="teams-install"
        )

    async def on_adaptive_card_invoke(  # type: ignore[override]
        self, turn_context: TurnContext, invoke_value: AdaptiveCardInvokeValue
    ) -> AdaptiveCardInvokeResponse:
        """An Action.Execute click: one fast step, the refreshed card as the answer."""
        activity = turn_context.activity
        user = user_id_of(activity)
        verb = invoke_value.action.verb or ""
        raw = invoke_value.action.data
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        ref = await self.gw.refs.save(activity, user_id=user)
        if verb == views.VERB_QUIZ_ANSWER:
            qd = data.get("qd")
            qd = qd if isinstance(qd, dict) else {}
            result = await flows_learn.answer(
                self.gw,
                ref=ref,
                user=user,
                data=data,
                card_activity=activity.reply_to_id,
                question=qd,
            )
        elif verb == views.VERB_SLIDE:
            result = await flows_learn.slide(self.gw, data=data)
        elif verb == views.VERB_LEARN:
            result = await flows_learn.open_format(self.gw, ref=ref, user=user, data=data)
        elif verb == views.VERB_LEADERBOARD:
            result = cards.invoke_card(await flows_learn.leaderboard(self.gw))
        elif verb == views.VERB_FEEDBACK:
            result = await flows_chat.feedback(self.gw, user=user, data=data)
        elif verb == views.VERB_PROPOSAL:
            result = await flows_chat.proposal(
                self.gw, user=user, data=data, answer_text=_card_text(activity)
            )
        elif verb == views.VERB_REVIEW:
            result = await flows_review.review(
                self.gw, user=user, data=data, ref=ref, card_activity=activity.reply_to_id
            )
        else:
            log.warning("unknown card verb %r from %s", verb[:60], user)
            result = cards.invoke_message("Deze knop ken ik niet.")
        return AdaptiveCardInvokeResponse.model_validate(result)
