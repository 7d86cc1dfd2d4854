"""Text → JSON: fences, the balanced-brace scanner and validation."""

from __future__ import annotations

import pytest

from shared.llm import LLMOutputError, LLMValidationError, extract_json, parse_text_output
from shared.llm.parsing import iter_json_candidates
from tests.shared.llm.support import Answer


def test_fenced_json_followed_by_prose() -> None:
    text = 'Here you go:\n```json\n{"answer": "42", "confidence": 0.9}\n```\nHope {this} helps!'
    assert extract_json(text) == {"answer": "42", "confidence": 0.9}


def test_fence_without_language_tag() -> None:
    assert extract_json('```\n[1, 2, {"a": [3]}]\n```') == [1, 2, {"a": [3]}]


def test_unfenced_object_inside_prose() -> None:
    text = 'Sure. The result is {"answer": "yes", "confidence": 1} as requested.'
    assert extract_json(text) == {"answer": "yes", "confidence": 1}


def test_braces_and_brackets_inside_strings_do_not_confuse_the_scanner() -> None:
    text = 'x {"a": "}{ ][ not structure", "b": "quote \\" and } brace"} y'
    assert extract_json(text) == {"a": "}{ ][ not structure", "b": 'quote " and } brace'}


def test_escaped_backslash_before_closing_quote() -> None:
    text = '{"path": "C:\\\\dir\\\\", "n": 1}'
    assert extract_json(text) == {"path": "C:\\dir\\", "n": 1}


def test_nested_structures_return_the_outermost_value() -> None:
    text = 'prefix {"a": {"b": [1, {"c": [2, 3]}]}, "d": []} suffix {"e": 1}'
    assert extract_json(text) == {"a": {"b": [1, {"c": [2, 3]}]}, "d": []}


def test_top_level_array() -> None:
    assert extract_json('answer: [{"x": 1}, {"x": 2}] done') == [{"x": 1}, {"x": 2}]


def test_bracketed_prose_before_json_is_skipped() -> None:
    text = '[offline] note {not json} then {"answer": "ok", "confidence": 0.5}'
    assert extract_json(text) == {"answer": "ok", "confidence": 0.5}


def test_mismatched_brackets_are_not_a_candidate() -> None:
    assert list(iter_json_candidates("{ ] }")) == []
    assert list(iter_json_candidates('{"a": [1}')) == []


def test_unclosed_json_is_an_output_error() -> None:
    with pytest.raises(LLMOutputError, match="no JSON"):
        extract_json('{"answer": "cut off here')


def test_no_json_is_an_output_error() -> None:
    with pytest.raises(LLMOutputError):
        extract_json("I cannot answer that.")


def test_parse_validates_against_the_schema() -> None:
    assert parse_text_output('{"answer": "a", "confidence": 0.2}', Answer) == Answer(
        answer="a", confidence=0.2
    )
    with pytest.raises(LLMValidationError, match="confidence"):
        parse_text_output('{"answer": "a", "confidence": 7}', Answer)


def test_parse_accepts_non_model_types() -> None:
    assert parse_text_output("ids: [1, 2, 3]", list[int]) == [1, 2, 3]
