"""Outbound messages through the Bot Connector at a conversation's serviceUrl (proactively).

Every send runs after the HTTP answer, through the SDK adapter's proactive path, so the
connector client is created for this send. Without an app id the bot is anonymous (local
development) and so must the connector client be: an empty ClaimsIdentity makes the SDK
create it without a token; with an app id it gets a token for our registration.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.activity import (
    Activity,
    Attachment,
    ConversationAccount,
    ConversationParameters,
    ConversationReference,
)
from microsoft_agents.hosting.core import ChannelServiceAdapter, ClaimsIdentity, TurnContext
from microsoft_agents.hosting.core.connector import ConnectorClientBase

from services.gateway.teams.cards import Card, attachment
from shared.errors import PermanentError, TransientError

log = logging.getLogger(__name__)


class SendError(TransientError):
    """The Bot Connector did not take the activity."""


def message(
    card: Card | None = None, *, summary: str = "", extra: list[dict[str, Any]] | None = None
) -> Activity:
    """A message activity with a card (and extra attachments such as an inline image)."""
    attachments = [attachment(card)] if card is not None else []
    attachments += extra or []
    return Activity(
        type="message",
        text=summary or None,
        attachments=[Attachment.model_validate(a) for a in attachments],
    )


class TeamsSender:
    """send / update / typing against the conversation of a stored reference."""

    def __init__(self, adapter: ChannelServiceAdapter, *, app_id: str | None) -> None:
        self._adapter = adapter
        self._app_id = app_id

    def _claims(self) -> ClaimsIdentity:
        if not self._app_id:
            return ClaimsIdentity()  # anonymous: the SDK builds a token-less connector client
        return self._adapter.create_claims_identity(self._app_id)

    async def _run(self, ref: ConversationReference, call: Any) -> Any:
        result: dict[str, Any] = {}

        async def callback(ctx: TurnContext) -> None:
            # The adapter registers its connector client under the abstract base class.
            connector = ctx.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
            result["value"] = await call(connector)

        claims = self._claims()
        try:
            await self._adapter.continue_conversation_with_claims(
                claims, ref.get_continuation_activity(), callback, claims.get_token_audience()
            )
        except Exception as exc:
            status = getattr(exc, "status", None)
            if status in (400, 401, 403, 404, 413):
                raise PermanentError(f"Bot Connector refused the activity ({status})") from exc
            raise SendError(
                f"Bot Connector unreachable or failing: {type(exc).__name__} {status or ''}"
            ) from exc
        return result.get("value")

    def _address(self, ref: ConversationReference, activity: Activity) -> Activity:
        activity.apply_conversation_reference(ref)
        activity.reply_to_id = None  # type: ignore[assignment]  # typed str; None = absent
        return activity

    async def send(
        self, ref: ConversationReference, activity: Activity, *, reply_to: str | None = None
    ) -> str:
        """Post into the conversation (as a reply to `reply_to` when given); the new id."""
        out = self._address(ref, activity)

        async def call(connector: ConnectorClientBase) -> str:
            if reply_to:
                out.reply_to_id = reply_to
                res = await connector.conversations.reply_to_activity(
                    ref.conversation.id, reply_to, out
                )
            else:
                res = await connector.conversations.send_to_conversation(ref.conversation.id, out)
            return str(res.id or "")

        return str(await self._run(ref, call))

    async def update(
        self, ref: ConversationReference, activity_id: str, activity: Activity
    ) -> None:
        """Replace an earlier message of the bot (a card) with a new one."""
        out = self._address(ref, activity)
        out.id = activity_id

        async def call(connector: ConnectorClientBase) -> None:
            await connector.conversations.update_activity(ref.conversation.id, activity_id, out)

        await self._run(ref, call)

    async def typing(self, ref: ConversationReference) -> None:
        """Show the typing indicator (best effort: a failure never stops the answer)."""
        try:
            await self.send(ref, Activity(type="typing"))
        except Exception as exc:
            log.info("typing indicator not sent: %s", exc)

    async def open_personal(
        self, activity: Activity, *, refs: Any, user_id: str
    ) -> ConversationReference:
        """Create the user's 1:1 chat with the bot (POST /v3/conversations) and store it."""
        ref = activity.get_conversation_reference()
        tenant = activity.conversation.tenant_id if activity.conversation else None
        assert activity.from_property is not None and activity.recipient is not None
        params = ConversationParameters.model_validate(
            {
                "is_group": False,
                "agent": {"id": activity.recipient.id, "name": activity.recipient.name},
                "members": [{"id": activity.from_property.id}],
                "tenant_id": tenant,
                "channel_data": {"tenant": {"id": tenant}} if tenant else None,
            }
        )

        async def call(connector: ConnectorClientBase) -> str:
            created = await connector.conversations.create_conversation(params)
            return str(created.id)

        conversation_id = str(await self._run(ref, call))
        personal = Activity(
            type="message",
            channel_id=activity.channel_id,
            service_url=activity.service_url,
            conversation=ConversationAccount(
                id=conversation_id, conversation_type="personal", tenant_id=tenant
            ),
            from_property=activity.from_property,
            recipient=activity.recipient,
        )
        saved: ConversationReference = await refs.save(personal, user_id=user_id)
        return saved
