"""Verbatim mentions: word runs equal to a label or id, with the per-word first-word cache."""

from __future__ import annotations

import pytest

from shared.kb import KbTopic, verbatim
from shared.kb.tokens import tokenize
from shared.kb.verbatim import Mentions

TOPICS = [
    KbTopic("ouderschapsverlof", "Ouderschapsverlof", "concept", ""),
    KbTopic("bijzonder-verlof", "Bijzonder verlof", "concept", ""),
    KbTopic("code-review", "Code review", "process", ""),
    KbTopic("het", "Het", "concept", ""),  # only a stopword: never mentioned
]


def _found(mentions: Mentions, text: str) -> set[int]:
    return mentions.find_words(tuple(tokenize(text, keep_stopwords=True)))


def test_runs_of_whole_words_name_topics() -> None:
    mentions = Mentions.of(TOPICS)
    assert _found(mentions, "Hoe werkt bijzonder verlof bij een code review?") == {1, 2}
    assert _found(mentions, "ouderschapsverlof") == {0}
    assert _found(mentions, "bijzonder-verlof aanvragen") == {1}  # the id, kebab-case
    assert _found(mentions, "een bijzonder geval van verlof") == set()
    assert _found(mentions, "het is code") == set()


def test_the_first_word_cache_never_changes_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verbatim, "FIRST_CACHE", 3)  # cleared every few words
    mentions = Mentions.of(TOPICS)
    questions = ["code review en bijzonder verlof", "review code", "bijzonder verlof"] * 3
    answers = [_found(mentions, q) for q in questions]
    assert answers == [_found(Mentions.of(TOPICS), q) for q in questions]
    assert answers[:3] == [{1, 2}, set(), {1}]
    assert len(mentions._first) <= 3


def test_a_word_names_its_own_topic_and_starts_longer_labels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    topics = [
        KbTopic("verlof", "Verlof", "concept", ""),
        KbTopic("verlof-aanvragen", "Verlof aanvragen", "process", ""),
        KbTopic("verlof-aanvragen-bij-ziekte", "Verlof aanvragen bij ziekte", "process", ""),
        KbTopic("aanvragen", "Aanvragen", "process", ""),
    ]
    mentions = Mentions.of(topics)
    for _ in range(2):  # the second time from the per-word cache
        assert _found(mentions, "Verlof aanvragen bij ziekte?") == {0, 1, 2, 3}
        assert _found(mentions, "verlof bij ziekte aanvragen") == {0, 3}
        assert _found(mentions, "ziekte") == set()
    # Runs of the stored lengths are probed only from a word that starts such a label
    # followed by one that comes second in one.
    assert mentions._first["verlof"] == ((0,), True, False)
    assert mentions._first["aanvragen"] == ((3,), False, True)
    assert mentions._first["bij"] == ((), False, False)
    assert "verlof" in mentions._firsts and "aanvragen" not in mentions._firsts
    assert "aanvragen" in mentions._seconds and "verlof" not in mentions._seconds
    probed: list[int] = []
    probe = Mentions._probe

    def counted(self: Mentions, key: int) -> list[int]:
        probed.append(key)
        return probe(self, key)

    monkeypatch.setattr(Mentions, "_probe", counted)
    assert _found(mentions, "verlof bij ziekte") == {0} and not probed
    assert _found(mentions, "verlof aanvragen") == {0, 1, 3} and len(probed) == 1
