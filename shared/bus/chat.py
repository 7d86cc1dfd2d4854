"""Request/reply contracts of the r42 chat service (`rpc.r42.*`), shared by gateway and CLI."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.bus.events import KbDelta

CHAT_SUBJECT = "rpc.r42.chat"
"""One chat turn: ChatRequest → ChatReply."""
PROPOSAL_SUBJECT = "rpc.r42.proposal"
"""A user's Yes / No on a proposal chip: ProposalDecisionRequest → ProposalDecisionReply."""
CLEAR_SUBJECT = "rpc.r42.clear"
"""Wipe a user's thread: ClearRequest → ClearReply."""

MAX_MESSAGE_CHARS = 20_000
"""The longest message a client is expected to send; the r42 service keeps at most its own
(smaller) limit of it and says so in the reply (`truncated_input`), never rejecting it."""


CONVERSATION_PATTERN = r"^[A-Za-z0-9:._-]{0,300}$"
"""A conversation key: which DM, channel thread or assistant thread of a user a turn is in."""

TURN_ID_PATTERN = r"^[!-~]{1,200}$"
"""A turn id: printable ASCII, no spaces (a Slack client_msg_id, a Teams activity id, a uuid)."""


MAX_THREAD_NOTES = 10
"""At most this many earlier messages of a channel thread come with a turn."""
MAX_THREAD_NOTE_CHARS = 1_500


class _Rpc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ThreadNote(_Rpc):
    """One earlier message of the channel thread R42 was mentioned in (context, not a question)."""

    author: str = Field(max_length=200)
    text: str = Field(max_length=MAX_THREAD_NOTE_CHARS)


def thread_key(user_id: str, conversation: str) -> str:
    """The stored thread of one conversation of one user (the user's default when empty).

    The user id is part of the key, so a caller can only ever reach its own conversations.
    """
    return f"{user_id}|{conversation}" if conversation else user_id


class ChatRequest(_Rpc):
    """One user message to R42 (admin status is the r42 service's own decision, never sent)."""

    user_id: str = Field(min_length=1, max_length=200)
    user_name: str = Field(default="", max_length=200)
    text: str = Field(max_length=200_000)
    correlation_id: str | None = Field(default=None, max_length=200)
    conversation: str = Field(default="", pattern=CONVERSATION_PATTERN)
    """Each conversation (a DM, a channel thread, an assistant thread) has its own memory."""
    turn_id: str | None = Field(default=None, pattern=TURN_ID_PATTERN)
    """The caller's id of this message: a repeat of it (a retry after a lost reply, a redelivered
    event) gets the stored reply instead of a second turn. None: every request is a new turn."""
    settle_kb: bool = False
    """Answer only after every KB update the service has heard is applied (the console's
    first question after the sample handbook was read: an answer from a half-updated
    snapshot would say "not in the knowledge graph" about what was just read)."""
    thread: list[ThreadNote] = Field(default_factory=list, max_length=MAX_THREAD_NOTES)
    """The recent messages of the channel thread the question was asked in, oldest first
    (an @mention inside a thread): what the question refers to, never instructions."""
    wait_s: float | None = Field(default=None, gt=0, le=600)
    """How long the caller waits for this attempt: a repeat that finds the turn running on
    another replica waits for its reply at most this long (then the caller asks again)."""

    @property
    def thread_key(self) -> str:
        """The stored thread this turn reads and extends."""
        return thread_key(self.user_id, self.conversation)


class SourceRef(_Rpc):
    """A topic the answer used."""

    id: str
    label: str


class Proposal(_Rpc):
    """A validated, pending knowledge-graph edit the user may confirm."""

    id: str
    delta: KbDelta
    summary: str = Field(default="", max_length=3000)


class ChatReply(_Rpc):
    """R42's answer: text, the topics it used, and an optional proposal."""

    text: str
    sources: list[SourceRef] = Field(default_factory=list)
    proposal: Proposal | None = None
    refused: bool = Field(default=False, description="Refused without an LLM call (quiz active)")
    error_ref: str | None = Field(default=None, description="Reference id of a failed turn")
    offline: bool = False
    truncated_input: bool = False
    model: str = Field(default="", max_length=200, description="The model that answered")
    prompt_version: str = Field(default="", max_length=100)
    kb_miss: bool = Field(
        default=False, description="The KB has nothing on the question (the admins' gap list)"
    )
    language: Literal["nl", "en"] = Field(default="nl", description="The answer's language")
    replayed: bool = Field(
        default=False, description="The stored reply of an earlier delivery of the same turn id"
    )

    @property
    def sources_label(self) -> str:
        """The word before the sources line, in the answer's language."""
        return "Sources" if self.language == "en" else "Bronnen"


class ProposalDecisionRequest(_Rpc):
    """A user's Yes / No on a proposal; admins apply at once, others queue for review."""

    proposal_id: str = Field(min_length=1, max_length=200)
    user_id: str = Field(min_length=1, max_length=200)
    accept: bool


class ProposalDecisionReply(_Rpc):
    """What happened to the proposal."""

    status: Literal["applied", "pending_review", "declined", "not_found", "already_decided"]
    suggestion_id: str | None = None
    message: str = ""


class ClearRequest(_Rpc):
    """Wipe one conversation of a user (the default one when `conversation` is empty)."""

    user_id: str = Field(min_length=1, max_length=200)
    conversation: str = Field(default="", pattern=CONVERSATION_PATTERN)

    @property
    def thread_key(self) -> str:
        """The stored thread to wipe."""
        return thread_key(self.user_id, self.conversation)


class ClearReply(_Rpc):
    """The thread was cleared and reseeded with the greeting."""

    removed: int
    greeting: str
