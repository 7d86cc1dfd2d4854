"""Source text handling for extraction: chunking and the known-ids prompt hint."""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterable

from shared.kb.models import KbInputError

log = logging.getLogger(__name__)

MAX_CHUNK_CHARS = 8000
OVERLAP_CHARS = 800
KNOWN_IDS_LIMIT = 200
KNOWN_IDS_INSTRUCTION = (
    "Already-extracted topic IDs (do NOT create new IDs for these — reuse them when the "
    "text is about the same thing):"
)

# Boundaries are offsets where a new unit starts (after the separating whitespace).
_PARAGRAPH_RE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE_RE = re.compile(r"[.!?][\"'”’)\]]*\s+")
_SPACE_RE = re.compile(r"\s+")
_NON_SPACE_RE = re.compile(r"\S")


def _starts(pattern: re.Pattern[str], text: str) -> list[int]:
    return [m.end() for m in pattern.finditer(text) if m.end() < len(text)]


def _last_in(points: list[int], low: int, high: int) -> int | None:
    """The largest point p with low < p <= high."""
    i = bisect.bisect_right(points, high)
    if i and points[i - 1] > low:
        return points[i - 1]
    return None


def _first_in(points: list[int], low: int, high: int) -> int | None:
    """The smallest point p with low <= p < high."""
    i = bisect.bisect_left(points, low)
    if i < len(points) and points[i] < high:
        return points[i]
    return None


def _check_chunk_args(text: object, max_chars: object, overlap_chars: object) -> None:
    if not isinstance(text, str):
        raise KbInputError(f"chunk_text needs a string, got {type(text).__name__}")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars <= 0:
        raise KbInputError(f"max_chars must be a positive integer, got {max_chars!r}")
    if not isinstance(overlap_chars, int) or isinstance(overlap_chars, bool) or overlap_chars < 0:
        raise KbInputError(f"overlap_chars must be a non-negative integer, got {overlap_chars!r}")
    if overlap_chars >= max_chars:
        raise KbInputError(
            f"overlap_chars ({overlap_chars}) must be smaller than max_chars ({max_chars})"
        )


def chunk_text(
    text: str, *, max_chars: int = MAX_CHUNK_CHARS, overlap_chars: int = OVERLAP_CHARS
) -> list[str]:
    """Split text into trimmed chunks ≤ max_chars at paragraph, then sentence boundaries."""
    spans = chunk_spans(text, max_chars=max_chars, overlap_chars=overlap_chars)
    return [text[start:end] for start, end in spans]


def chunk_spans(
    text: str, *, max_chars: int = MAX_CHUNK_CHARS, overlap_chars: int = OVERLAP_CHARS
) -> list[tuple[int, int]]:
    """Where chunk_text's chunks lie in `text`: (start, end) offsets, in order."""
    _check_chunk_args(text, max_chars, overlap_chars)
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    if not text:
        return []
    if len(text) <= max_chars:
        return [(lead, lead + len(text))]

    paragraphs = _starts(_PARAGRAPH_RE, text)
    sentences = sorted(set(_starts(_SENTENCE_RE, text)) | set(paragraphs))
    words = _starts(_SPACE_RE, text)
    spans: list[tuple[int, int]] = []
    hard_splits = 0
    start, covered = 0, 0  # covered: where the text not yet in any chunk begins
    while True:
        start = _NON_SPACE_RE.search(text, start).start()  # type: ignore[union-attr]
        limit = start + max_chars
        if limit >= len(text):
            spans.append((start, len(text)))
            break
        # The furthest boundary that adds new text: a paragraph end when it fills at least
        # half the window (no tiny chunks before a long paragraph), else a sentence end.
        low = max(covered, start)
        paragraph = _last_in(paragraphs, low, limit)
        sentence = _last_in(sentences, low, limit)
        end = paragraph if paragraph and paragraph - start >= max_chars // 2 else sentence
        end = end or paragraph
        if end is None:
            hard_splits += 1
            # Prefer a word boundary in the last fifth of the window, else cut mid-word.
            end = _last_in(words, max(low, limit - max_chars // 5), limit) or limit
        spans.append((start, start + len(text[start:end].rstrip())))
        # A hard cut can land in whitespace: new text starts at the next visible character.
        covered = _NON_SPACE_RE.search(text, end).start()  # type: ignore[union-attr]
        # Overlap: the longest trailing run of whole sentences (else words) ≤ overlap_chars,
        # strictly after this chunk's start (no chunk repeats whole) and close enough for
        # the next window to reach past `covered`.
        low = max(end - overlap_chars, start + 1, covered - max_chars + 1)
        start = _first_in(sentences, low, end) or _first_in(words, low, end) or end
    if hard_splits:
        log.warning(
            "chunk_text: %d piece(s) had no sentence or paragraph boundary within "
            "max_chars=%d and were hard-split",
            hard_splits,
            max_chars,
        )
    return [(lead + start, lead + end) for start, end in spans]


def build_known_ids_hint(ids: Iterable[str] | None) -> str:
    """Prompt hint listing the 200 most recent known topic ids (input is oldest → newest)."""
    if ids is None:  # like the seed: no ids (null/undefined) is an empty hint
        return ""
    if isinstance(ids, str):
        raise KbInputError("build_known_ids_hint needs an iterable of ids, not one string")
    latest: dict[str, None] = {}
    for raw in ids:
        if not isinstance(raw, str):
            raise KbInputError(f"topic ids must be strings, got {type(raw).__name__}")
        topic_id = raw.strip()
        if not topic_id:
            continue
        # Re-inserting moves a repeated id to its latest position.
        latest.pop(topic_id, None)
        latest[topic_id] = None
    if not latest:
        return ""
    recent = list(latest)[-KNOWN_IDS_LIMIT:]
    return KNOWN_IDS_INSTRUCTION + "\n" + "".join(f"- {topic_id}\n" for topic_id in recent)
