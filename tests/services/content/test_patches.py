"""Patch operations on an article: order, no mutation, matching, fallbacks, whole-turn rejection."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.content.models import Article
from services.content.patches import PATCH_TOOLS, apply_and_validate, apply_article_patches
from shared.errors import BadInputError
from shared.llm import ToolUse
from tests.services.content.conftest import ARTICLE

BODY = "Nieuwe zin een. Nieuwe zin twee. Nieuwe zin drie."


def use(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "input": fields}


def headings(doc: dict[str, Any] | Article) -> list[str]:
    sections = doc.sections if isinstance(doc, Article) else doc["sections"]
    return [s.heading if hasattr(s, "heading") else s["heading"] for s in sections]


def test_patch_tools_are_the_five_operations_with_model_schemas() -> None:
    assert [t.name for t in PATCH_TOOLS] == [
        "set_intro", "set_section", "add_section", "remove_section", "replace_takeaways",
    ]  # fmt: skip
    for tool in PATCH_TOOLS:
        assert tool.input_schema == tool.model.model_json_schema()


def test_set_intro_and_replace_takeaways() -> None:
    out = apply_article_patches(
        ARTICLE,
        [use("set_intro", intro="Kort en krachtig."),
         use("replace_takeaways", takeaways=["Een.", "Twee.", "Drie."])],
    )  # fmt: skip
    assert out["intro"] == "Kort en krachtig."
    assert out["key_takeaways"] == ["Een.", "Twee.", "Drie."]
    assert out["sections"] == ARTICLE["sections"]


def test_input_is_never_mutated_dict_or_model() -> None:
    original = copy.deepcopy(ARTICLE)
    model = Article.model_validate(ARTICLE)
    model_before = model.model_dump()
    patches = [
        use("set_section", heading="wat het is", body=BODY),
        use("remove_section", heading="Hoe"),
        use("add_section", heading="Begin", body=BODY, position="start"),
        use("replace_takeaways", takeaways=["X.", "Y."]),
    ]
    apply_article_patches(ARTICLE, patches)
    apply_and_validate(model, patches)
    assert ARTICLE == original
    assert model.model_dump() == model_before


def test_heading_match_is_case_insensitive_and_keeps_the_stored_heading() -> None:
    out = apply_article_patches(ARTICLE, [use("set_section", heading="  WAT  het IS ", body=BODY)])
    assert headings(out) == ["Wat het is", "Waarom", "Hoe"]
    assert out["sections"][0]["body"] == BODY


def test_set_section_without_a_match_appends() -> None:
    out = apply_article_patches(ARTICLE, [use("set_section", heading="Valkuilen", body=BODY)])
    assert headings(out) == ["Wat het is", "Waarom", "Hoe", "Valkuilen"]
    assert out["sections"][-1]["body"] == BODY


@pytest.mark.parametrize(
    ("position", "expected"),
    [("start", ["Nieuw", "Wat het is", "Waarom", "Hoe"]),
     ("end", ["Wat het is", "Waarom", "Hoe", "Nieuw"])],
)  # fmt: skip
def test_add_section_at_start_or_end(position: str, expected: list[str]) -> None:
    out = apply_article_patches(
        ARTICLE, [use("add_section", heading="Nieuw", body=BODY, position=position)]
    )
    assert headings(out) == expected


def test_add_section_defaults_to_the_end() -> None:
    out = apply_article_patches(ARTICLE, [use("add_section", heading="Nieuw", body=BODY)])
    assert headings(out)[-1] == "Nieuw"


def test_remove_section_and_a_missing_heading_is_a_no_op() -> None:
    out = apply_article_patches(ARTICLE, [use("remove_section", heading="WAAROM")])
    assert headings(out) == ["Wat het is", "Hoe"]
    same = apply_article_patches(ARTICLE, [use("remove_section", heading="Bestaat niet")])
    assert same == ARTICLE


def test_patches_apply_in_order() -> None:
    # remove then set: the set finds nothing and appends; set then remove: gone.
    first = apply_article_patches(
        ARTICLE,
        [use("remove_section", heading="Hoe"), use("set_section", heading="Hoe", body=BODY)],
    )
    assert headings(first) == ["Wat het is", "Waarom", "Hoe"]
    assert first["sections"][-1]["body"] == BODY
    second = apply_article_patches(
        ARTICLE,
        [use("set_section", heading="Hoe", body=BODY), use("remove_section", heading="Hoe")],
    )
    assert headings(second) == ["Wat het is", "Waarom"]
    twice = apply_article_patches(
        ARTICLE,
        [use("set_intro", intro="Eerste."), use("set_intro", intro="Tweede.")],
    )
    assert twice["intro"] == "Tweede."


def test_unknown_patches_are_ignored() -> None:
    out = apply_article_patches(
        ARTICLE,
        [use("rewrite_everything", text="Weg ermee."), use("set_intro", intro="Nieuw intro.")],
    )
    assert out == {**ARTICLE, "intro": "Nieuw intro."}


def test_tool_use_objects_are_accepted() -> None:
    patch = PATCH_TOOLS[0].model(intro="Via ToolUse.")
    tool_use = ToolUse(id="t1", name="set_intro", input={"intro": "Via ToolUse."}, parsed=patch)
    assert apply_and_validate(ARTICLE, [tool_use]).intro == "Via ToolUse."


def test_malformed_patch_input_is_bad_input() -> None:
    with pytest.raises(BadInputError, match=r"patch #2 \(add_section\) is invalid"):
        apply_article_patches(
            ARTICLE, [use("set_intro", intro="Ok."), use("add_section", heading="X")]
        )


def test_valid_result_is_an_article() -> None:
    result = apply_and_validate(ARTICLE, [use("add_section", heading="Extra", body=BODY)])
    assert isinstance(result, Article) and len(result.sections) == 4


@pytest.mark.parametrize(
    ("patches", "reason"),
    [
        ([use("remove_section", heading=h) for h in ("Wat het is", "Waarom", "Hoe")],
         "at least 3 items"),
        ([use("remove_section", heading="Hoe")], "at least 3 items"),
        ([use("set_intro", intro="Prima."),
          use("set_section", heading="Hoe", body="Maar een zin.")],
         "needs at least 3 sentences, has 1"),
        ([use("add_section", heading="waarom", body=BODY)], "two sections are headed 'waarom'"),
    ],
)  # fmt: skip
def test_an_invalid_result_rejects_the_whole_turn(
    patches: list[dict[str, Any]], reason: str
) -> None:
    with pytest.raises(BadInputError, match="rejected as a whole") as info:
        apply_and_validate(ARTICLE, patches)
    assert reason in str(info.value)
