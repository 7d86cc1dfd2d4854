"""match_label: the one rule for finding a topic by a typed name."""

from __future__ import annotations

from dataclasses import dataclass

from shared.kb import match_label


@dataclass(frozen=True)
class _T:
    id: str
    label: str
    description: str = ""


TOPICS = [
    _T("verlof-aanvragen", "Verlof aanvragen"),
    _T("verlof", "Verlof"),
    _T("ouderschapsverlof", "Ouderschapsverlof"),
    _T("cafe-regels", "Café-regels"),
]


def test_exact_label_beats_prefix_and_contains() -> None:
    assert match_label(TOPICS, "verlof") == TOPICS[1]


def test_prefix_then_contains_shortest_label_first() -> None:
    assert match_label(TOPICS, "verlof aan") == TOPICS[0]
    assert match_label(TOPICS, "schaps") == TOPICS[2]


def test_accents_fold_and_a_spaced_id_matches() -> None:
    assert match_label(TOPICS, "cafe-REGELS") == TOPICS[3]
    assert match_label(TOPICS, "verlof aanvragen") == TOPICS[0]


def test_blank_or_unknown_finds_nothing() -> None:
    assert match_label(TOPICS, "   ") is None
    assert match_label(TOPICS, "pensioen") is None
