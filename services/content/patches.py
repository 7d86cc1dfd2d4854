"""Article refinement as small patch operations, applied in order to a copy.

`apply_article_patches` never mutates its input, skips tools it does not know and treats a
`remove_section` whose heading matches nothing as a no-op. `apply_and_validate` checks the
whole result against the Article model and rejects the turn as a whole when it breaks a
rule (e.g. fewer than three sections left): nothing half-applied is ever stored.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from services.content.models import MIN_SENTENCES, MIN_TAKEAWAYS, Article, Short, Text, heading_key
from shared.errors import BadInputError
from shared.llm import Tool
from shared.store import describe_validation

log = logging.getLogger(__name__)


class _Patch(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SetIntro(_Patch):
    """Replace the intro."""

    intro: Text


class SetSection(_Patch):
    """Replace the body of the section with this heading (case-insensitive), else append it."""

    heading: Short
    body: Text = Field(description=f"At least {MIN_SENTENCES} full sentences")


class AddSection(_Patch):
    """Insert a new section at the start or the end."""

    heading: Short
    body: Text = Field(description=f"At least {MIN_SENTENCES} full sentences")
    position: Literal["start", "end"] = "end"


class RemoveSection(_Patch):
    """Remove the section with this heading (case-insensitive)."""

    heading: Short


class ReplaceTakeaways(_Patch):
    """Replace all key takeaways."""

    takeaways: list[Short] = Field(min_length=MIN_TAKEAWAYS, max_length=8)


PATCH_MODELS: dict[str, type[_Patch]] = {
    "set_intro": SetIntro,
    "set_section": SetSection,
    "add_section": AddSection,
    "remove_section": RemoveSection,
    "replace_takeaways": ReplaceTakeaways,
}
# set_intro first: with tool_choice "any" the offline provider answers with the first tool.
PATCH_TOOLS: tuple[Tool, ...] = (
    Tool("set_intro", "Replace the article's intro.", SetIntro),
    Tool(
        "set_section",
        "Replace the body of the section with this heading (matched case-insensitively); "
        "a heading that matches nothing adds the section at the end.",
        SetSection,
    ),
    Tool("add_section", "Add a new section at the start or the end.", AddSection),
    Tool("remove_section", "Remove the section with this heading.", RemoveSection),
    Tool("replace_takeaways", "Replace all key takeaways.", ReplaceTakeaways),
)


def _name_and_input(use: Any) -> tuple[str, Any]:
    if isinstance(use, Mapping):
        return str(use.get("name", "")), use.get("input")
    return str(getattr(use, "name", "")), getattr(use, "input", None)


def _find(sections: list[dict[str, Any]], heading: str) -> int | None:
    key = heading_key(heading)
    return next((i for i, s in enumerate(sections) if heading_key(s["heading"]) == key), None)


def _apply_one(doc: dict[str, Any], patch: _Patch) -> None:
    sections: list[dict[str, Any]] = doc["sections"]
    if isinstance(patch, SetIntro):
        doc["intro"] = patch.intro
    elif isinstance(patch, SetSection):
        index = _find(sections, patch.heading)
        if index is None:
            sections.append({"heading": patch.heading, "body": patch.body})
        else:
            sections[index]["body"] = patch.body  # the stored heading keeps its casing
    elif isinstance(patch, AddSection):
        section = {"heading": patch.heading, "body": patch.body}
        if patch.position == "start":
            sections.insert(0, section)
        else:
            sections.append(section)
    elif isinstance(patch, RemoveSection):
        index = _find(sections, patch.heading)
        if index is None:
            log.info("remove_section: no section headed %r; nothing removed", patch.heading)
        else:
            del sections[index]
    elif isinstance(patch, ReplaceTakeaways):
        doc["key_takeaways"] = list(patch.takeaways)


def apply_article_patches(
    article: Article | Mapping[str, Any], tool_uses: Iterable[Any]
) -> dict[str, Any]:
    """Apply patch tool calls in order to a copy of the article; returns the patched dict."""
    if isinstance(article, Article):
        doc: dict[str, Any] = article.model_dump(mode="json")
    elif isinstance(article, Mapping):
        doc = copy.deepcopy(dict(article))
    else:
        raise BadInputError(f"an article must be an Article or a dict, not {type(article)}")
    doc["sections"] = [dict(s) for s in doc.get("sections") or []]
    doc["key_takeaways"] = list(doc.get("key_takeaways") or [])
    for position, use in enumerate(tool_uses, start=1):
        name, raw = _name_and_input(use)
        model = PATCH_MODELS.get(name)
        if model is None:
            log.info("ignoring unknown patch %r (#%d)", name, position)
            continue
        try:
            patch = model.model_validate(raw)
        except ValidationError as exc:
            raise BadInputError(
                f"patch #{position} ({name}) is invalid: {describe_validation(exc)}"
            ) from None
        _apply_one(doc, patch)
    return doc


def apply_and_validate(article: Article | Mapping[str, Any], tool_uses: Iterable[Any]) -> Article:
    """Apply the patches and re-validate; the whole turn is rejected if the result is invalid."""
    uses = list(tool_uses)
    patched = apply_article_patches(article, uses)
    try:
        return Article.model_validate(patched)
    except ValidationError as exc:
        names = ", ".join(_name_and_input(u)[0] for u in uses) or "none"
        raise BadInputError(
            f"the refinement was rejected as a whole ({names}); the patched article would be "
            f"invalid: {describe_validation(exc)}"
        ) from None
