"""Stored conversation references: where proactive messages (content, quiz, progress) go.

A small repository over the store's settings collection: one row per conversation
(`teams:ref:<conversation id>`) and, for personal chats, one per user
(`teams:user:<aad object id>`) pointing at that user's chat with the bot.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity, ConversationReference

from shared.store import Store

_REF = "teams:ref:"
_USER = "teams:user:"
_SERVICE = "teams:service"


class ConversationRefs:
    """Save and look up conversation references (JSON in the store)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._written: dict[str, Any] = {}  # key -> last value written (skip repeats)

    async def _set(self, key: str, value: Any) -> None:
        if self._written.get(key) == value:
            return
        await self._store.settings.set(key, value)
        if len(self._written) > 10_000:
            self._written.clear()
        self._written[key] = value

    async def save(self, activity: Activity, *, user_id: str) -> ConversationReference:
        """Remember the conversation of an inbound activity (and the user's personal chat)."""
        ref = activity.get_conversation_reference()
        data = ref.model_dump(mode="json", by_alias=True, exclude_none=True)
        data.pop("activityId", None)  # a reference is the conversation, not one message
        await self._set(_REF + ref.conversation.id, data)
        if (ref.conversation.conversation_type or "personal") == "personal":
            await self._set(_USER + user_id, {"conversation": ref.conversation.id})
        tenant = ref.conversation.tenant_id or getattr(activity.conversation, "tenant_id", None)
        await self._set(
            _SERVICE,
            {
                "serviceUrl": ref.service_url,
                "tenantId": tenant,
                "bot": data.get("bot") or data.get("agent"),
            },
        )
        return ref

    async def get(self, conversation_id: str) -> ConversationReference | None:
        """The stored reference of a conversation."""
        data = await self._store.settings.get(_REF + conversation_id)
        return ConversationReference.model_validate(data) if isinstance(data, dict) else None

    async def personal(self, user_id: str) -> ConversationReference | None:
        """The user's personal chat with the bot, if they ever wrote to it."""
        row = await self._store.settings.get(_USER + user_id)
        if not isinstance(row, dict) or not row.get("conversation"):
            return None
        return await self.get(str(row["conversation"]))

    async def service(self) -> dict[str, Any] | None:
        """The last seen serviceUrl, tenant and bot account (to open new chats)."""
        row = await self._store.settings.get(_SERVICE)
        return row if isinstance(row, dict) else None
