"""Stored conversation references: where proactive messages (content, quiz, progress) go.

One row per conversation in the store's conversation_refs (surface `teams`); a personal
chat's row names its user, so the user's chat with the bot is found by the AAD object id.
The last seen serviceUrl, tenant and bot account (to open new chats) is the flag
`teams:service`.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity, ConversationReference

from shared.store import ConversationRef, Store

SURFACE = "teams"
SERVICE_FLAG = "teams:service"


class ConversationRefs:
    """Save and look up conversation references (typed rows in the store)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._written: dict[str, Any] = {}  # what was last written per row (skip repeats)

    def _unchanged(self, key: str, value: Any) -> bool:
        if self._written.get(key) == value:
            return True
        if len(self._written) > 10_000:
            self._written.clear()
        self._written[key] = value
        return False

    async def save(self, activity: Activity, *, user_id: str) -> ConversationReference:
        """Remember the conversation of an inbound activity (and the user's personal chat)."""
        ref = activity.get_conversation_reference()
        data = ref.model_dump(mode="json", by_alias=True, exclude_none=True)
        data.pop("activityId", None)  # a reference is the conversation, not one message
        personal = (ref.conversation.conversation_type or "personal") == "personal"
        row = ConversationRef(surface=SURFACE, conversation_id=ref.conversation.id,
                              reference=data, user_id=user_id if personal else None)  # fmt: skip
        if not self._unchanged(f"ref:{row.conversation_id}", row):
            try:
                await self._store.conversation_refs.put(row)
            except BaseException:
                self._written.pop(f"ref:{row.conversation_id}", None)
                raise
        tenant = ref.conversation.tenant_id or getattr(activity.conversation, "tenant_id", None)
        service = {"serviceUrl": ref.service_url, "tenantId": tenant,
                   "bot": data.get("bot") or data.get("agent")}  # fmt: skip
        if not self._unchanged("service", service):
            try:
                await self._store.flags.set(SERVICE_FLAG, service)
            except BaseException:
                self._written.pop("service", None)
                raise
        return ref

    async def get(self, conversation_id: str) -> ConversationReference | None:
        """The stored reference of a conversation."""
        row = await self._store.conversation_refs.get(SURFACE, conversation_id)
        return ConversationReference.model_validate(row.reference) if row else None

    async def personal(self, user_id: str) -> ConversationReference | None:
        """The user's personal chat with the bot, if they ever wrote to it."""
        row = await self._store.conversation_refs.personal(SURFACE, user_id)
        return ConversationReference.model_validate(row.reference) if row else None

    async def service(self) -> dict[str, Any] | None:
        """The last seen serviceUrl, tenant and bot account (to open new chats)."""
        flag = await self._store.flags.get(SERVICE_FLAG)
        return dict(flag.value) if flag else None
