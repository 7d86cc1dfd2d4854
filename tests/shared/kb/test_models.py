"""Topic ids, accent folding, the KB hash and relation normalisation."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from shared.errors import BadInputError
from shared.kb import (
    KbRelation,
    KbTopic,
    RelationLike,
    TopicLike,
    fold_text,
    is_kebab_id,
    kb_hash,
    normalise_relation,
    to_kebab_id,
    tokenize,
)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Ouderschapsverlof (betaald)", "ouderschapsverlof-betaald"),
        ("Ouderschapsverlof", "ouderschapsverlof"),
        ("Één café — twee reünies", "een-cafe-twee-reunies"),
        ("Straße & Søren", "strasse-soren"),
        ("  CFO  ", "cfo"),
        ("Code_review / pair-programming!", "code-review-pair-programming"),
        ("ISO 27001", "iso-27001"),
    ],
)
def test_to_kebab_id(label: str, expected: str) -> None:
    assert to_kebab_id(label) == expected
    assert is_kebab_id(to_kebab_id(label))


@pytest.mark.parametrize("label", ["", "  ", "---", "!!!", "日本語"])
def test_to_kebab_id_rejects_labels_without_letters(label: str) -> None:
    with pytest.raises(BadInputError, match="topic id"):
        to_kebab_id(label)


def test_to_kebab_id_caps_length() -> None:
    topic_id = to_kebab_id("woord " * 100)
    assert is_kebab_id(topic_id) and len(topic_id) <= 120


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("ouderschapsverlof", True),
        ("code-review", True),
        ("iso-27001", True),
        ("Code-Review", False),
        ("code--review", False),
        ("-code", False),
        ("code-", False),
        ("code_review", False),
        ("", False),
        ("a" * 121, False),
        (None, False),
        (42, False),
    ],
)
def test_is_kebab_id(value: object, ok: bool) -> None:
    assert is_kebab_id(value) is ok


def test_fold_text_lowercases_and_strips_accents() -> None:
    assert fold_text("Geïntimideerd Café ÉÉN") == "geintimideerd cafe een"


def test_tokenize_keeps_kebab_ids_whole_and_drops_stopwords() -> None:
    assert tokenize("Wat is de ouderschaps-verlof regeling?") == [
        "ouderschaps-verlof",
        "regeling",
    ]
    assert tokenize("De het een", keep_stopwords=True) == ["de", "het", "een"]
    assert tokenize("de het een the of") == []


def test_kb_hash_is_sha256_of_sorted_ids() -> None:
    expected = hashlib.sha256(b"a-topic\nb-topic\nc-topic").hexdigest()[:8]
    assert kb_hash(["c-topic", "a-topic", "b-topic"]) == expected
    assert kb_hash(["b-topic", "c-topic", "a-topic"]) == expected
    assert kb_hash(["a-topic", "b-topic"]) != expected
    assert len(kb_hash([])) == 8


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("a", "b", "related_to"), ("a", "b", "related_to")),
        (("a", "b", "part_of"), ("a", "b", "part_of")),
        (("proces", "rol", "executed_by"), ("proces", "rol", "executed_by")),
        (("rol", "proces", "executes"), ("proces", "rol", "executed_by")),
        (("rol", "proces", " Executes "), ("proces", "rol", "executed_by")),
        (("a", "b", "DEPENDS_ON"), ("a", "b", "depends_on")),
        (("a", "b", "owns"), None),
        (("a", "b", ""), None),
        (("a", "b", None), None),
    ],
)
def test_normalise_relation(args: tuple, expected: tuple | None) -> None:
    assert normalise_relation(*args) == expected


def test_dataclasses_satisfy_the_protocols() -> None:
    assert isinstance(KbTopic("a", "A"), TopicLike)
    assert isinstance(KbRelation("a", "b"), RelationLike)
    with pytest.raises(AttributeError):
        KbTopic("a", "A").label = "B"  # type: ignore[misc]


def test_importing_the_package_is_light_and_side_effect_free() -> None:
    code = (
        "import logging, sys, threading; import shared.kb; "
        "assert 'sklearn' not in sys.modules, 'sklearn loaded at import'; "
        "assert threading.active_count() == 1; "
        "assert not logging.getLogger().handlers"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[3]
    )
