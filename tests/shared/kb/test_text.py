"""Chunking and the known-ids hint."""

from __future__ import annotations

import itertools
import logging
import random

import pytest

from shared.errors import BadInputError
from shared.kb import KNOWN_IDS_INSTRUCTION, build_known_ids_hint, chunk_spans, chunk_text


def _sentences(rng: random.Random, count: int, *, words: tuple[int, int] = (4, 14)) -> list[str]:
    """Sentences of unique-ish words so every chunk can be located in the source."""
    out = []
    for _ in range(count):
        body = " ".join(f"w{rng.randrange(10**7)}" for _ in range(rng.randint(*words)))
        out.append(f"Z{rng.randrange(10**6)} {body}{rng.choice('.!?')}")
    return out


def _locate(text: str, chunks: list[str], overlap: int) -> list[tuple[int, int]]:
    """Each chunk's (start, end) in the stripped source; asserts nothing was lost between them."""
    text = text.strip()
    spans: list[tuple[int, int]] = []
    for chunk in chunks:
        low = spans[-1][1] - overlap if spans else 0
        start = text.find(chunk, max(low, 0))
        assert start >= 0, "a chunk is not a contiguous piece of the source"
        if spans:
            prev_start, prev_end = spans[-1]
            assert start > prev_start, "chunks must advance"
            assert text[prev_end:start].strip() == "", "text between two chunks was dropped"
            assert prev_end - start <= overlap, "overlap longer than overlap_chars"
        spans.append((start, start + len(chunk)))
    assert spans[0][0] == 0 and spans[-1][1] == len(text), "chunks do not cover the whole text"
    return spans


def test_text_that_fits_is_one_trimmed_chunk() -> None:
    assert chunk_text("  Eén zin die past.\n\n  ", max_chars=100, overlap_chars=10) == [
        "Eén zin die past."
    ]
    exact = "x" * 100
    assert chunk_text(exact, max_chars=100, overlap_chars=10) == [exact]


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t "])
def test_empty_or_whitespace_gives_no_chunks(text: str) -> None:
    assert chunk_text(text) == []


@pytest.mark.parametrize(
    ("text", "kwargs"),
    [
        (None, {}),
        (b"bytes", {}),
        ("tekst", {"max_chars": 0}),
        ("tekst", {"max_chars": -5}),
        ("tekst", {"max_chars": 100, "overlap_chars": 100}),
        ("tekst", {"max_chars": 100, "overlap_chars": 150}),
        ("tekst", {"overlap_chars": -1}),
        ("tekst", {"max_chars": 10.5}),
        ("tekst", {"max_chars": True}),
    ],
)
def test_bad_arguments_are_rejected_clearly(text: object, kwargs: dict) -> None:
    with pytest.raises(BadInputError) as caught:
        chunk_text(text, **kwargs)  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError)
    assert str(caught.value)


def test_defaults_match_the_contract() -> None:
    rng = random.Random(7)
    text = " ".join(_sentences(rng, 2000))
    chunks = chunk_text(text)
    assert len(chunks) > 2
    assert max(map(len, chunks)) <= 8000
    _locate(text, chunks, 800)


def test_sentence_ends_are_the_split_points_inside_a_paragraph() -> None:
    rng = random.Random(1)
    sentences = _sentences(rng, 120)
    text = " ".join(sentences)
    chunks = chunk_text(text, max_chars=600, overlap_chars=0)
    assert len(chunks) > 3
    starts = {s.split()[0] for s in sentences}
    for chunk in chunks:
        assert chunk[-1] in ".!?", "a chunk ended mid-sentence"
        assert chunk.split()[0] in starts, "a chunk started mid-sentence"
    assert " ".join(chunks) == text


def test_paragraphs_are_the_outer_boundary() -> None:
    rng = random.Random(2)
    paragraphs = [" ".join(_sentences(rng, rng.randint(2, 5))) for _ in range(40)]
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(text, max_chars=1500, overlap_chars=0)
    assert len(chunks) > 3
    for chunk in chunks:
        # Every chunk is made of whole paragraphs, although sentence ends come more often.
        assert all(part in paragraphs for part in chunk.split("\n\n"))
    assert "\n\n".join(chunks) == text


def test_a_paragraph_end_wins_over_a_later_sentence_end() -> None:
    first = "Eerste alinea zin een. " * 30  # ~690 chars, ends past half of the window
    second = "Tweede alinea zin twee. " * 30
    text = first.strip() + "\n\n" + second.strip()
    chunks = chunk_text(text, max_chars=1000, overlap_chars=0)
    assert chunks[0] == first.strip()
    assert chunks[1].startswith("Tweede")


def test_overlong_sentence_is_hard_split_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    blob = "".join(random.Random(3).choice("abcdef") for _ in range(2500))
    with caplog.at_level(logging.WARNING, logger="shared.kb.text"):
        chunks = chunk_text(blob, max_chars=1000, overlap_chars=0)
    assert "".join(chunks) == blob
    assert all(len(c) <= 1000 for c in chunks)
    assert any("hard-split" in r.getMessage() for r in caplog.records)
    assert blob[:50] not in caplog.text  # the warning never quotes the (possibly private) text


def test_overlong_sentence_prefers_word_boundaries() -> None:
    words = [f"woord{i:04d}" for i in range(400)]  # no sentence end anywhere
    text = " ".join(words)
    chunks = chunk_text(text, max_chars=500, overlap_chars=0)
    assert all(len(c) <= 500 for c in chunks)
    for chunk in chunks:
        assert all(piece in words for piece in chunk.split()), "a word was cut in half"


def test_no_warning_when_sentences_fit(caplog: pytest.LogCaptureFixture) -> None:
    text = " ".join(_sentences(random.Random(4), 100))
    with caplog.at_level(logging.WARNING, logger="shared.kb.text"):
        chunk_text(text, max_chars=500, overlap_chars=50)
    assert not caplog.records


def test_adjacent_chunks_share_trailing_whole_sentences() -> None:
    rng = random.Random(5)
    text = " ".join(_sentences(rng, 200))
    chunks = chunk_text(text, max_chars=800, overlap_chars=200)
    _locate(text, chunks, 200)
    spans = chunk_spans(text, max_chars=800, overlap_chars=200)
    shared = 0
    for (prev, (_, prev_end)), (chunk, (start, _)) in itertools.pairwise(
        zip(chunks, spans, strict=True)
    ):
        if prev_end > start:
            overlap = text[start:prev_end]
            assert len(overlap) <= 200
            assert prev.endswith(overlap) and chunk.startswith(overlap)
            assert overlap[-1] in ".!?" and overlap.split()[0].startswith("Z")
            shared += 1
    assert shared >= len(chunks) - 2, "sentences of ≤ 200 chars should nearly always overlap"


def test_property_sweep_never_exceeds_max_and_never_loses_text() -> None:
    rng = random.Random(20261129)
    for _ in range(150):
        parts = []
        for _ in range(rng.randint(1, 60)):
            roll = rng.random()
            if roll < 0.1:
                parts.append("".join(rng.choices("abcdefghijklmnop", k=rng.randint(50, 3000))))
            elif roll < 0.25:
                parts.append(rng.choice(["\n\n", "\n \n\t", "\n\n\n"]))
            else:
                parts.extend(_sentences(rng, rng.randint(1, 4), words=(1, 30)))
        text = rng.choice(["", "  ", "\n"]) + " ".join(parts) + rng.choice(["", " \n"])
        max_chars = rng.randint(20, 2500)
        overlap = rng.randint(0, max_chars - 1)
        chunks = chunk_text(text, max_chars=max_chars, overlap_chars=overlap)
        spans = chunk_spans(text, max_chars=max_chars, overlap_chars=overlap)
        assert chunks == chunk_text(text, max_chars=max_chars, overlap_chars=overlap)
        assert chunks == [text[start:end] for start, end in spans]
        if not text.strip():
            assert chunks == []
            continue
        for chunk in chunks:
            assert 0 < len(chunk) <= max_chars
            assert chunk == chunk.strip()
        assert text[: spans[0][0]].strip() == "" and text[spans[-1][1] :].strip() == ""
        for (prev_start, prev_end), (start, end) in itertools.pairwise(spans):
            assert prev_start < start and prev_end < end, "chunks must advance"
            assert text[prev_end:start].strip() == "", "text between two chunks was dropped"
            # The shared part is trailing text of the previous chunk, never longer than allowed.
            assert prev_end - start <= overlap


def test_hint_is_empty_without_ids() -> None:
    assert build_known_ids_hint([]) == ""
    assert build_known_ids_hint(None) == ""  # seed parity: null/undefined → ""
    assert build_known_ids_hint(iter(())) == ""
    assert build_known_ids_hint(["", "  "]) == ""


def test_hint_lists_the_200_most_recent_ids_oldest_first() -> None:
    ids = [f"topic-{i}" for i in range(250)]
    hint = build_known_ids_hint(ids)
    lines = hint.splitlines()
    assert lines[0] == KNOWN_IDS_INSTRUCTION
    assert "do NOT create new IDs" in lines[0]
    assert lines[1:] == [f"- topic-{i}" for i in range(50, 250)]
    assert hint.endswith("- topic-249\n")


def test_hint_dedupes_keeping_the_latest_position() -> None:
    hint = build_known_ids_hint(["a", "b", "a", "c", " b "])
    assert hint.splitlines()[1:] == ["- a", "- c", "- b"]
    # Repeats must not push distinct ids out of the 200 window.
    ids = ["old"] + [f"t-{i}" for i in range(199)] + ["t-5"] * 50
    lines = build_known_ids_hint(ids).splitlines()[1:]
    assert len(lines) == 200 and lines[0] == "- old" and lines[-1] == "- t-5"


@pytest.mark.parametrize("bad", ["one-string", [1, 2], [None]])
def test_hint_rejects_bad_input(bad: object) -> None:
    with pytest.raises(BadInputError):
        build_known_ids_hint(bad)  # type: ignore[arg-type]
