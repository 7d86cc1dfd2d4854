"""Repository protocols of the extractor's and surfaces' own records."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Protocol

from shared.store.models_records import ConversationRef, HandbookTree, HeldChange


class HeldChangeRepository(Protocol):
    """Extractions over the bulk bound, held for an admin's review."""

    async def put(self, held: HeldChange) -> HeldChange:
        """Hold a change (a held key again replaces it: the newest extraction counts)."""

    async def get(self, key: str) -> HeldChange | None:
        """One held change or None."""

    async def list(self) -> list[HeldChange]:
        """Every held change, by key."""

    async def take(self, key: str) -> HeldChange | None:
        """Remove and return a held change (once: None when missing or already taken)."""


class HandbookTreeRepository(Protocol):
    """The cached file listing of each handbook folder (for conditional GitHub requests)."""

    async def get(self, where: str, path: str) -> HandbookTree | None:
        """The cached listing of one repository folder, or None."""

    async def put(self, tree: HandbookTree) -> None:
        """Cache (or replace) a folder's listing."""

    async def clear(self) -> int:
        """Forget every cached listing (the next sync lists in full); returns how many."""


class KbVersionRepository(Protocol):
    """The graph's version hash, chained from one change to the next."""

    async def get(self) -> str | None:
        """The current hash, or None before the first change."""

    async def advance(self, step: Callable[[str], str], *, initial: str | None = None) -> str:
        """Atomically store step(current hash, or initial when none is stored) and return it.

        BadInputError when there is no stored hash and no initial one.
        """


class CurrentSourceRepository(Protocol):
    """Which source is the current version of each document name."""

    async def get(self, name: str) -> str | None:
        """The current source id of a document, or None."""

    async def swap(self, name: str, source_id: str) -> str | None:
        """Make source_id current for name; returns the previous source id (None if new)."""

    async def clear(self, name: str, source_id: str) -> bool:
        """Forget the name only while source_id is its current source."""


class ConversationRefRepository(Protocol):
    """Conversation references a surface posts into later (proactive messages)."""

    async def put(self, ref: ConversationRef) -> None:
        """Remember (or replace) the reference of a conversation."""

    async def get(self, surface: str, conversation_id: str) -> ConversationRef | None:
        """The stored reference of a conversation."""

    async def personal(self, surface: str, user_id: str) -> ConversationRef | None:
        """The user's personal chat with the bot (the newest one), if they ever wrote to it."""

    async def list(self, surface: str) -> builtins.list[ConversationRef]:
        """Every reference of a surface, by conversation id."""
