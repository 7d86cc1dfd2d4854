"""One chat turn: checks, KB context, the tool loop on the fast tier, sources, thread.

Tool loop: every request offers both tools (so the cached prefix never changes) with
tool_choice auto. lookup_topic is answered with the topic in full, or an is_error result
for an unknown id; after 3 lookups (or 5 tool rounds) the next request carries
tool_choice none, so the model must answer in text. propose_graph_delta input is
cleaned by `validate_delta`; an invalid delta is dropped (the model hears why), a valid
one becomes the turn's proposal (one per turn), stored only when the turn succeeds.

Streaming (`on_text`): each round's text goes out as the model writes it, rounds separated by
a blank line, and the answer is then what was streamed (a preface before a tool call
included), so what the person read is what is remembered and rated.

Sources are the topics the answer used: every topic looked up successfully (in lookup
order), then the context topics (in retrieval order) whose label or id the answer
mentions; at most 5.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.r42.knowledge import KbCache, KbSnapshot, turn_context
from services.r42.lookup import LookupResult, lookup_topic
from services.r42.ports import R42Store
from services.r42.prompts import (
    APOLOGY,
    EMPTY_HINT,
    INPUT_TRUNCATED,
    NO_ANSWER,
    PROMPT_VERSION,
    QUIZ_REFUSAL,
    system_blocks,
)
from services.r42.proposals import effective_admin, save_proposal
from services.r42.thread import history_messages, load_thread
from services.r42.tools import LOOKUP_TOOL_NAME, PROPOSE_TOOL_NAME, TOOLS
from shared.bus import ChatReply, ChatRequest, Proposal, SourceRef
from shared.errors import R42Error
from shared.kb import GraphDelta, detect_language, fold_text, validate_delta
from shared.llm import LLMBusyError, TextSink, ToolUse, answer_within, call_llm
from shared.store import ThreadMessage, Topic, utcnow

log = logging.getLogger(__name__)

TASK = "r42.chat"
TIER = "fast"
MAX_LOOKUPS = 3
MAX_TOOL_ROUNDS = 5
MAX_INPUT_CHARS = 8000
MAX_SOURCES = 5
ANSWER_MAX_TOKENS = 2048
TURN_TIMEOUT_S = 90.0
BUSY = "R42 is druk tot {until}. Probeer het daarna nog eens."
_TOOL_NONE = {"type": "none"}
_TOOL_AUTO = {"type": "auto"}
_LIMIT_TEXT = f"{MAX_INPUT_CHARS:,}".replace(",", ".")  # Dutch thousands separator


@dataclass
class _Turn:
    """What the tool loop gathered."""

    lookups: list[LookupResult] = field(default_factory=list)
    delta: GraphDelta | None = None
    offline: bool = False
    model: str = ""


def new_error_ref() -> str:
    """A short reference id a user can quote; it is logged with the failure."""
    return f"r42-{uuid.uuid4().hex[:8]}"


async def chat_turn(
    *,
    store: R42Store,
    kb: KbCache,
    request: ChatRequest,
    admins: Collection[str] = (),
    on_text: TextSink | None = None,
) -> ChatReply:
    """Answer one chat message (see the module docstring for the rules)."""
    text = request.text.strip()
    if not text:
        return ChatReply(text=EMPTY_HINT)
    if await store.quiz_attempts.get_active_attempt(request.user_id) is not None:
        return ChatReply(text=QUIZ_REFUSAL, refused=True)
    truncated = len(text) > MAX_INPUT_CHARS
    if truncated:
        text = text[:MAX_INPUT_CHARS]
    is_admin = effective_admin(request.user_id, admins)
    history = await load_thread(store, request.thread_key)
    asked_at = utcnow()
    notice = INPUT_TRUNCATED.format(limit=_LIMIT_TEXT) if truncated else ""
    stream = _Stream(on_text, first=f"{notice}\n\n" if notice else "") if on_text else None
    try:
        # answer_within: a shared rate-limit pause past the turn's budget fails at once.
        async with asyncio.timeout(TURN_TIMEOUT_S):
            with answer_within(TURN_TIMEOUT_S):
                answer, sources, turn = await _converse(
                    store=store, kb=kb, request=request, question=text, is_admin=is_admin,
                    history=history, stream=stream,
                )  # fmt: skip
    except LLMBusyError as exc:
        log.warning("chat turn refused at once: the model is paused until %s", exc.local_time())
        return ChatReply(text=BUSY.format(until=exc.local_time()))
    except Exception as exc:  # the person waiting gets an apology and a reference, not a trace
        ref = new_error_ref()
        log.error(
            "chat turn failed (ref %s, user %s, correlation %s): %s: %s",
            ref, request.user_id, request.correlation_id, type(exc).__name__, exc,
            exc_info=not _expected_failure(exc),
        )  # fmt: skip
        return ChatReply(text=APOLOGY.format(ref=ref), error_ref=ref)
    proposal: Proposal | None = None
    if turn.delta is not None:
        proposal = await save_proposal(store=store, delta=turn.delta, proposed_by=request.user_id)
    await store.threads.append(
        request.thread_key,
        [
            ThreadMessage(role="user", text=text, at=asked_at),
            ThreadMessage(role="assistant", text=answer, at=utcnow()),
        ],
    )
    if truncated:
        answer = f"{notice}\n\n{answer}"
    return ChatReply(
        text=answer, sources=sources, proposal=proposal, offline=turn.offline,
        truncated_input=truncated, model=turn.model, prompt_version=PROMPT_VERSION,
    )  # fmt: skip


class _Stream:
    """The turn's text sink: a blank line between rounds, everything shown kept."""

    def __init__(self, sink: TextSink, *, first: str = "") -> None:
        self._sink = sink
        self._pending = first
        self.rounds: list[str] = []

    def round(self) -> TextSink:
        """A sink for the next model round."""
        self.rounds.append("")
        index = len(self.rounds) - 1
        if any(r.strip() for r in self.rounds[:index]):
            self._pending = "\n\n"

        async def send(text: str) -> None:
            if not self.rounds[index] and not text.strip():
                return  # leading whitespace of a round would break the separators
            self.rounds[index] += text
            text, self._pending = self._pending + text, ""
            await self._sink(text)

        return send

    @property
    def text(self) -> str:
        """Everything streamed, as one answer."""
        return "\n\n".join(r.strip() for r in self.rounds if r.strip())


def _expected_failure(exc: Exception) -> bool:
    return isinstance(exc, (R42Error, TimeoutError))


async def _converse(
    *,
    store: R42Store,
    kb: KbCache,
    request: ChatRequest,
    question: str,
    is_admin: bool,
    history: list[ThreadMessage],
    stream: _Stream | None = None,
) -> tuple[str, list[SourceRef], _Turn]:
    snapshot = await kb.get()
    context = await turn_context(store=store, snapshot=snapshot, question=question)
    system = system_blocks(
        catalogue_text=snapshot.catalogue, context_text=context.text,
        user_id=request.user_id, user_name=request.user_name, is_admin=is_admin,
        language=detect_language(question),
    )  # fmt: skip
    messages: list[dict[str, Any]] = [
        *history_messages(history),
        {"role": "user", "content": question},
    ]
    turn = _Turn()
    for round_no in range(1, MAX_TOOL_ROUNDS + 1):
        last_round = len(turn.lookups) >= MAX_LOOKUPS or round_no == MAX_TOOL_ROUNDS
        choice = _TOOL_NONE if last_round else _TOOL_AUTO
        result = await call_llm(
            task=TASK, tier=TIER, system=system, messages=messages, tools=TOOLS,
            tool_choice=choice, max_tokens=ANSWER_MAX_TOKENS,
            on_text=stream.round() if stream is not None else None,
        )  # fmt: skip
        turn.offline = turn.offline or result.offline
        turn.model = result.model
        if choice["type"] == "none" or not result.tool_uses:
            break
        messages.append(result.assistant_message())
        results = [
            await _run_tool(use, store=store, snapshot=snapshot, turn=turn)
            for use in result.tool_uses
        ]
        messages.append({"role": "user", "content": results})
    answer = (stream.text if stream is not None else result.text.strip()) or NO_ANSWER
    sources = answer_sources(
        answer, lookups=turn.lookups, context_ids=context.topic_ids, topics=snapshot.topics
    )
    return answer, sources, turn


async def _run_tool(
    use: ToolUse, *, store: R42Store, snapshot: KbSnapshot, turn: _Turn
) -> dict[str, Any]:
    if use.name == LOOKUP_TOOL_NAME:
        if len(turn.lookups) >= MAX_LOOKUPS:
            return use.result(
                f"Limiet bereikt: hooguit {MAX_LOOKUPS} opzoekingen per vraag. Antwoord nu "
                "met wat je weet.",
                is_error=True,
            )
        topic_id = str(getattr(use.parsed, "id", ""))
        found = await lookup_topic(store, topic_id, labels=snapshot.labels)
        turn.lookups.append(found)
        return use.result(found.text, is_error=found.is_error)
    if use.name == PROPOSE_TOOL_NAME:
        if turn.delta is not None:
            return use.result(
                "Er staat in deze beurt al een voorstel klaar; er kan maar één voorstel per "
                "antwoord zijn.",
                is_error=True,
            )
        # The raw input, not the parsed model: its defaults would fill in what the model
        # left out (a topic without a type is dropped, not made a concept).
        delta = validate_delta(use.input, snapshot.topics)
        if delta is None:
            return use.result(
                "Voorstel afgewezen: het voegt niets geldigs toe (nodig: een reden en nieuwe "
                "onderwerpen met id, label en type concept/role/process, of relaties tussen "
                "bestaande ids van het type related_to/depends_on/part_of/executed_by). Er is "
                "niets veranderd.",
                is_error=True,
            )
        turn.delta = delta
        return use.result(
            "Voorstel klaargezet. Er is nog niets veranderd: de gebruiker krijgt een knop om "
            "het te bevestigen, daarna beslist een beheerder. Vertel dat kort in je antwoord."
        )
    return use.result(f"Onbekende tool {use.name!r}.", is_error=True)  # call_llm rejects these


@functools.lru_cache(maxsize=4096)
def _mention_pattern(folded: str) -> re.Pattern[str]:
    # Labels repeat across turns; compiling once per label keeps answer_sources cheap.
    return re.compile(rf"(?<!\w){re.escape(folded)}(?!\w)")


def _mentions(folded_answer: str, phrase: str) -> bool:
    folded = fold_text(phrase).strip()
    if len(folded) < 3:
        return False
    return _mention_pattern(folded).search(folded_answer) is not None


def answer_sources(
    answer: str,
    *,
    lookups: Iterable[LookupResult],
    context_ids: Iterable[str],
    topics: Mapping[str, Topic],
    limit: int = MAX_SOURCES,
) -> list[SourceRef]:
    """Looked-up topics, then context topics the answer mentions by label or id (≤ limit)."""
    chosen: dict[str, str] = {}
    for result in lookups:
        if result.topic is not None:
            chosen.setdefault(result.topic.id, result.topic.label)
    folded = fold_text(answer)
    for topic_id in context_ids:
        topic = topics.get(topic_id)
        if topic is None or topic_id in chosen:
            continue
        if _mentions(folded, topic.label) or _mentions(folded, topic.id):
            chosen[topic_id] = topic.label
    return [SourceRef(id=i, label=label) for i, label in list(chosen.items())[:limit]]
