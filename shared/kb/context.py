"""Assemble the bounded KB context block that grounds an R42 answer."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from shared.kb.models import KbInputError, RelationLike, TopicLike, kb_hash
from shared.kb.overlay import Layered
from shared.kb.retrieval import Hit, RetrievalIndex, is_relevant
from shared.kb.steps import Steps, run_steps

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4  # rough for Dutch and English prose; keep budgets conservative
# With a ~1,500-token preamble the whole system prompt stays under 4,000 tokens.
DEFAULT_MAX_CONTEXT_TOKENS = 2400
MIN_CONTEXT_TOKENS = 400
DESCRIPTION_CHARS = 600
RELATION_DESCRIPTION_CHARS = 160
MAX_RELATIONS = 30
MIN_CONTENT_CHARS = 120  # below this a content excerpt is not worth its heading

TOPICS_HEADING = "Onderwerpen:"
RELATIONS_HEADING = "Relaties:"
CONTENT_HEADING = "Inhoud:"
NO_TOPICS_LINE = "(geen passende onderwerpen gevonden)"


@dataclass(frozen=True, slots=True)
class KbContext:
    """The context text, the topic ids it covers, the KB hash and its token estimate."""

    text: str
    topic_ids: tuple[str, ...]
    kb_hash: str
    token_estimate: int
    relevant: bool = True  # False: no topic cleared the relevance floor ("not in the KB")


def estimate_tokens(text: str) -> int:
    """Rough token count: characters / 4, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _clip_block(text: str, limit: int) -> str:
    """Like _clip but keeps line breaks (content excerpts have headings and paragraphs)."""
    lines = [" ".join(line.split()) for line in text.strip().splitlines()]
    kept = "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1]))
    if len(kept) <= limit:
        return kept
    cut = kept[: max(limit - 1, 0)]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:\n") + "…"


def _grouped(relations: Iterable[RelationLike]) -> Steps[Layered[str, list[RelationLike]]]:
    by_topic: dict[str, list[RelationLike]] = {}
    for at, relation in enumerate(relations):
        by_topic.setdefault(relation.source, []).append(relation)
        if relation.target != relation.source:
            by_topic.setdefault(relation.target, []).append(relation)
        if at % 256 == 255:
            yield None
    return Layered.of(by_topic)


class RelationIndex:
    """Relations grouped by topic so a context build never scans every relation."""

    __slots__ = ("_by_topic",)

    def __init__(self, relations: Iterable[RelationLike]) -> None:
        self._by_topic: Layered[str, list[RelationLike]] = run_steps(_grouped(relations))

    @classmethod
    def building(cls, relations: Iterable[RelationLike]) -> Steps[RelationIndex]:
        """`RelationIndex(relations)` in steps: one slice per 256 relations (shared.kb.steps)."""
        new = object.__new__(cls)
        new._by_topic = yield from _grouped(relations)
        return new

    def replaced(
        self, topic_ids: Iterable[str], relations: Iterable[RelationLike]
    ) -> RelationIndex:
        """A new index where the relations touching these topics are exactly `relations`.

        This index is left as it is (lists are copied, never changed in place), so turns
        reading it meanwhile see one consistent version; the cost follows the topics
        touched, not the KB (see shared.kb.overlay).
        """
        return run_steps(self.replacing(topic_ids, relations))

    def replacing(
        self, topic_ids: Iterable[str], relations: Iterable[RelationLike]
    ) -> Steps[RelationIndex]:
        """`replaced` in steps: one slice per topic touched (shared.kb.steps)."""
        affected = set(topic_ids)
        by_topic = self._by_topic
        changes: dict[str, list[RelationLike]] = {}

        def current(end: str) -> list[RelationLike]:
            if end in changes:
                return changes[end]
            return [] if end in affected else by_topic.get(end, [])

        for topic_id in affected:
            for relation in by_topic.get(topic_id, ()):
                for end in (relation.source, relation.target):
                    if end not in affected and end in by_topic:
                        changes[end] = [
                            r for r in current(end)
                            if r.source not in affected and r.target not in affected
                        ]  # fmt: skip
            yield None
        for at, relation in enumerate(relations):
            for end in {relation.source, relation.target}:
                changes[end] = [*current(end), relation]
            if at % 64 == 63:
                yield None
        new = object.__new__(RelationIndex)
        new._by_topic = yield from by_topic.deriving(
            put=changes.items(), drop=affected - changes.keys()
        )
        return new

    def among(self, topic_ids: Iterable[str]) -> list[RelationLike]:
        """Relations whose both endpoints are in topic_ids, in a stable order."""
        wanted = set(topic_ids)
        found: dict[tuple[str, str, str], RelationLike] = {}
        for topic_id in wanted:
            for relation in self._by_topic.get(topic_id, ()):
                if relation.source in wanted and relation.target in wanted:
                    found.setdefault((relation.source, relation.type, relation.target), relation)
        return [found[key] for key in sorted(found)]


def _topic_map(topics: Mapping[str, TopicLike] | Iterable[TopicLike]) -> Mapping[str, TopicLike]:
    if isinstance(topics, Mapping):
        return topics
    if isinstance(topics, (str, bytes)) or not isinstance(topics, Iterable):
        raise KbInputError("topics must be a mapping of id → topic or an iterable of topics")
    return {topic.id: topic for topic in topics}


class _Budget:
    def __init__(self, chars: int) -> None:
        self.left = chars
        self.lines: list[str] = []

    def fits(self, *lines: str) -> bool:
        return sum(len(line) + 1 for line in lines) <= self.left

    def add(self, *lines: str) -> bool:
        if not self.fits(*lines):
            return False
        self.lines.extend(lines)
        self.left -= sum(len(line) + 1 for line in lines)
        return True


def build_kb_context(
    question: str,
    *,
    index: RetrievalIndex,
    topics: Mapping[str, TopicLike] | Iterable[TopicLike],
    relations: RelationIndex | Iterable[RelationLike],
    contents: Mapping[str, str] | None = None,
    max_topics: int = 10,
    max_content_topics: int = 5,
    content_chars: int = 1000,
    max_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS,
    hits: Sequence[Hit] | None = None,
) -> KbContext:
    """Top topics, the relations among them and content excerpts, within max_tokens.

    Pass the `hits` of a search already made for this question to avoid a second search.
    Below the relevance floor the context lists no topics and says `relevant=False`.
    """
    if not isinstance(question, str):
        raise KbInputError(f"question must be a string, got {type(question).__name__}")
    limits = {
        "max_topics": (max_topics, 1),
        "max_content_topics": (max_content_topics, 0),
        "content_chars": (content_chars, 0),
        # Below this not even one topic line (≤ ~800 chars) would fit.
        "max_tokens": (max_tokens, MIN_CONTEXT_TOKENS),
    }
    for name, (value, low) in limits.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise KbInputError(f"{name} must be an integer ≥ {low}, got {value!r}")
    if contents is not None and not isinstance(contents, Mapping):
        raise KbInputError("contents must be a mapping of topic id → text")
    by_id = _topic_map(topics)
    fingerprint = index.fingerprint
    if len(by_id) != len(index):
        # A stale index would cite the wrong KB version; pay for the true hash instead.
        log.warning("retrieval index (%d topics) is stale for a KB of %d", len(index), len(by_id))
        fingerprint = kb_hash(by_id)
    suffix = f"[kb_hash: {fingerprint}]"
    budget = _Budget(max_tokens * CHARS_PER_TOKEN - len(suffix) - 1)

    if hits is None:
        hits = index.search(question, k=max_topics)
    relevant = is_relevant(hits)
    hits = [hit for hit in hits if hit.topic_id in by_id] if relevant else []
    chosen: list[str] = []
    budget.add(TOPICS_HEADING)
    for hit in hits[:max_topics]:
        topic = by_id[hit.topic_id]
        line = f"- [{topic.id}] {_clip(topic.label, 160)} ({topic.type})"
        description = _clip(topic.description or "", DESCRIPTION_CHARS)
        if not budget.add(f"{line}: {description}" if description else line):
            break
        chosen.append(topic.id)
    if not chosen:
        budget.add(NO_TOPICS_LINE)

    related = relations if isinstance(relations, RelationIndex) else RelationIndex(relations)
    lines = []
    for relation in related.among(chosen)[:MAX_RELATIONS]:
        line = f"- {relation.source} {relation.type} {relation.target}"
        note = _clip(relation.description or "", RELATION_DESCRIPTION_CHARS)
        lines.append(f"{line}: {note}" if note else line)
    if lines and budget.add("", RELATIONS_HEADING, lines[0]):
        for line in lines[1:]:
            if not budget.add(line):
                break

    verbatim = {hit.topic_id for hit in hits if hit.verbatim}
    ordered = [t for t in chosen if t in verbatim] + [t for t in chosen if t not in verbatim]
    contents = contents or {}
    with_content = [t for t in ordered if str(contents.get(t) or "").strip()]
    section = ["", CONTENT_HEADING]
    for topic_id in with_content[:max_content_topics] if content_chars else ():
        heading = f"## {_clip(by_id[topic_id].label, 160)} [{topic_id}]"
        overhead = sum(len(line) + 1 for line in (*section, heading)) + 1
        room = min(content_chars, budget.left - overhead)
        if room < MIN_CONTENT_CHARS:
            break
        budget.add(*section, heading, _clip_block(str(contents[topic_id]), room))
        section = []

    text = "\n".join([*budget.lines, suffix])
    return KbContext(text, tuple(chosen), fingerprint, estimate_tokens(text), relevant)


CATALOGUE_DESCRIPTION_CHARS = 300
DEFAULT_CATALOGUE_TOKENS = 12_000


def build_kb_catalogue(
    topics: Mapping[str, TopicLike] | Iterable[TopicLike],
    *,
    max_tokens: int = DEFAULT_CATALOGUE_TOKENS,
    order: Iterable[str] | None = None,
) -> str:
    """Every topic as one line, sorted by id, within max_tokens: the same text per KB version.

    A chat prompt puts this before anything that changes per question, so the prefix up to
    it can be cached for as long as the KB stays the same. `order`: the topic ids sorted
    already (a retrieval index keeps them), so a large KB is not sorted again.
    """
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise KbInputError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    by_id = _topic_map(topics)
    budget = _Budget(max_tokens * CHARS_PER_TOKEN)
    budget.add(TOPICS_HEADING)
    for topic_id in sorted(by_id) if order is None else order:
        topic = by_id.get(topic_id)
        if topic is None:
            continue
        line = f"- [{topic.id}] {_clip(topic.label, 160)} ({topic.type})"
        description = _clip(topic.description or "", CATALOGUE_DESCRIPTION_CHARS)
        if not budget.add(f"{line}: {description}" if description else line):
            break
    return "\n".join(budget.lines)
