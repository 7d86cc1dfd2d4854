"""One chat turn: checks, KB context, the tool loop on the fast tier, sources, thread.

Tool loop: every request offers the same three tools (so the cached prefix never changes)
with tool_choice auto. search_kb runs the retrieval again with the model's own words (a
synonym, the Dutch translation of an English question) and returns at most 5 topics;
lookup_topic is answered with the topic in full, or an is_error result for an unknown id.
At most MAX_TOOL_HOPS rounds answered with tool calls and as many search/lookup calls per
turn; then the next request carries tool_choice none, so the model must answer in text.
propose_graph_delta input is cleaned by `validate_delta`; an invalid delta is dropped (the
model hears why), a valid one becomes the turn's proposal (one per turn), stored only when
the turn succeeds.

Relevance floor: a turn is grounded once retrieval found a topic above the floor
(`KbContext.relevant`, a relevant search_kb, a topic looked up) or it made a proposal. The
model is asked even when the first retrieval is below the floor, told that nothing matched,
so it can reformulate with search_kb (the misses the analyser cannot bridge: a synonym, a
translation); its text is not streamed until the turn is grounded. A turn that ends
ungrounded answers the fixed "not in the knowledge graph" line in the question's language
(whatever the model wrote) and says `kb_miss`, which the gap list reads.

Streaming (`on_text`): each grounded round's text goes out as the model writes it, rounds
separated by a blank line, and the answer is then what was streamed (a preface before a
tool call included), so what the person read is what is remembered and rated.

Sources are the topics the answer used: every topic looked up successfully (in lookup
order), then the context and search_kb topics (in retrieval order) whose label or id the
answer mentions; at most 5.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from services.r42.idempotency import confirm_turn_lease
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
    not_in_kb,
    search_result_text,
    system_blocks,
    thread_text,
)
from services.r42.proposals import effective_admin, save_proposal
from services.r42.smalltalk import is_small_talk
from services.r42.sources import answer_sources
from services.r42.thread import history_messages, load_thread
from services.r42.tools import (
    LOOKUP_TOOL_NAME,
    MAX_ID_CHARS,
    MAX_QUERY_CHARS,
    MAX_TOOL_HOPS,
    PROPOSE_TOOL_NAME,
    SEARCH_TOOL_NAME,
    TOOLS,
)
from shared.bus import ChatReply, ChatRequest, Proposal, SourceRef
from shared.errors import R42Error
from shared.kb import GraphDelta, detect_language, is_relevant, validate_delta
from shared.llm import (
    OFFLINE_PREFIX,
    LLMBusyError,
    TextSink,
    ToolUse,
    answer_within,
    call_llm,
    get_runtime,
)
from shared.store import LeaseLostError, ThreadMessage, utcnow

log = logging.getLogger(__name__)

TASK = "r42.chat"
TIER = "fast"
MAX_RETRIEVALS = MAX_TOOL_HOPS  # search_kb and lookup_topic calls per turn, together
SEARCH_HITS = 5
MAX_INPUT_CHARS = 8000
TURN_TIMEOUT_S = 90.0
BUSY = "R42 is druk tot {until}. Probeer het daarna nog eens."
_TOOL_NONE = {"type": "none"}
_TOOL_AUTO = {"type": "auto"}
_LIMIT_TEXT = f"{MAX_INPUT_CHARS:,}".replace(",", ".")  # Dutch thousands separator


@dataclass
class _Turn:
    """What the tool loop gathered."""

    lookups: list[LookupResult] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)  # relevant search_kb hits, in order
    retrievals: int = 0
    hops: int = 0
    relevant: bool = False
    delta: GraphDelta | None = None
    offline: bool = False
    model: str = ""
    kb_miss: bool = False
    language: Literal["nl", "en"] = "nl"

    @property
    def grounded(self) -> bool:
        """Whether the answer may stand: the KB had something, or the turn proposes an edit."""
        return self.relevant or self.delta is not None


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
    except LeaseLostError:
        raise  # taken over by another replica: its caller's retry gets that one's reply
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
        kb_miss=turn.kb_miss, language=turn.language,
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


def _last_question(history: list[ThreadMessage]) -> str:
    return next((m.text for m in reversed(history) if m.role == "user"), "")


def _question_content(question: str, request: ChatRequest) -> str | list[dict[str, str]]:
    """The question, after the channel thread's recent messages when it was asked in one."""
    if not request.thread:
        return question
    return [
        {"type": "text", "text": thread_text(request.thread)},
        {"type": "text", "text": question},
    ]


def _language(question: str) -> Literal["nl", "en"]:
    return "en" if detect_language(question) == "en" else "nl"


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
    # In a channel thread the question may refer to what was said before R42 was mentioned.
    previous = _last_question(history) or (request.thread[-1].text if request.thread else "")
    if not context.relevant and previous:
        # A follow-up ("En hoeveel dagen?") is about what the conversation was about: it
        # counts when, read with the previous question, it touches one of that one's topics.
        follow_up = await turn_context(
            store=store, snapshot=snapshot, question=f"{previous}\n{question}"
        )
        touched = {hit.topic_id for hit in snapshot.index.search(question, k=SEARCH_HITS * 2)}
        if follow_up.relevant and touched & set(follow_up.topic_ids):
            context = follow_up
    # Small talk asks nothing of the KB: the model answers it as it is, and it is no gap.
    turn = _Turn(relevant=context.relevant or is_small_talk(question), language=_language(question))
    language = turn.language
    system = system_blocks(
        catalogue_text=snapshot.catalogue, context_text=context.text,
        user_id=request.user_id, user_name=request.user_name, is_admin=is_admin,
        language=language, relevant=turn.relevant, in_thread=bool(request.thread),
    )  # fmt: skip
    messages: list[dict[str, Any]] = [
        *history_messages(history),
        {"role": "user", "content": _question_content(question, request)},
    ]
    # R42_ANSWER_MAX_TOKENS, checked against the fast model's limit when settings were built.
    max_tokens = get_runtime().settings.answer_max_tokens
    while True:
        choice = _TOOL_NONE if turn.hops >= MAX_TOOL_HOPS else _TOOL_AUTO
        # An ungrounded round may become the fixed "not in the KB" line: not shown as written.
        sink = stream.round() if stream is not None and turn.grounded else None
        await confirm_turn_lease()  # a holder that stalled past its lease stops here
        result = await call_llm(
            task=TASK, tier=TIER, system=system, messages=messages, tools=TOOLS,
            tool_choice=choice, max_tokens=max_tokens, on_text=sink,
        )  # fmt: skip
        turn.offline = turn.offline or result.offline
        turn.model = result.model
        if choice["type"] == "none" or not result.tool_uses:
            break
        turn.hops += 1
        messages.append(result.assistant_message())
        results = [
            await _run_tool(use, store=store, snapshot=snapshot, turn=turn)
            for use in result.tool_uses
        ]
        messages.append({"role": "user", "content": results})
    if not turn.grounded:
        turn.kb_miss = True
        answer = (OFFLINE_PREFIX if turn.offline else "") + not_in_kb(language)
        if stream is not None:
            await stream.round()(answer)
        return answer, [], turn
    answer = (stream.text if stream is not None else result.text.strip()) or NO_ANSWER
    sources = answer_sources(
        answer, lookups=turn.lookups, context_ids=[*context.topic_ids, *turn.searched],
        topics=snapshot.topics,
    )  # fmt: skip
    return answer, sources, turn


async def _run_tool(
    use: ToolUse, *, store: R42Store, snapshot: KbSnapshot, turn: _Turn
) -> dict[str, Any]:
    if use.name in (SEARCH_TOOL_NAME, LOOKUP_TOOL_NAME):
        if turn.retrievals >= MAX_RETRIEVALS:
            return use.result(
                f"Limiet bereikt: hooguit {MAX_RETRIEVALS} keer zoeken of opzoeken per vraag. "
                "Antwoord nu met wat je weet.",
                is_error=True,
            )
        turn.retrievals += 1
    if use.name == SEARCH_TOOL_NAME:
        return _search(use, snapshot=snapshot, turn=turn)
    if use.name == LOOKUP_TOOL_NAME:
        topic_id = use.input.get("id")
        if not isinstance(topic_id, str) or len(topic_id) > MAX_ID_CHARS:
            return use.result(
                f"lookup_topic heeft een onderwerp-id nodig (tekst, hooguit {MAX_ID_CHARS} "
                "tekens), zoals tussen [haken] in de context.",
                is_error=True,
            )
        found = await lookup_topic(store, topic_id, labels=snapshot.labels)
        turn.lookups.append(found)
        turn.relevant = turn.relevant or found.topic is not None
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


def _search(use: ToolUse, *, snapshot: KbSnapshot, turn: _Turn) -> dict[str, Any]:
    # The raw input: the lenient model would turn a missing or non-string query into "".
    query = use.input.get("query")
    if not isinstance(query, str) or not query.strip():
        return use.result("search_kb heeft een zoekvraag nodig (tekst, niet leeg).", is_error=True)
    query = " ".join(query.split())
    if len(query) > MAX_QUERY_CHARS:
        return use.result(
            f"Zoekvraag te lang ({len(query)} tekens, hooguit {MAX_QUERY_CHARS}): gebruik een "
            "paar zoekwoorden.",
            is_error=True,
        )
    hits = snapshot.index.search(query, k=SEARCH_HITS)
    found = [hit.topic_id for hit in hits if hit.relevant and hit.topic_id in snapshot.topics]
    if found and is_relevant(hits):
        turn.relevant = True
        turn.searched.extend(i for i in found if i not in turn.searched)
    topics = [snapshot.topics[i] for i in found]
    return use.result(search_result_text(query, topics))
