"""Adaptive Card building blocks (schema 1.5) and the size rule every card the bot sends obeys.

Teams renders Adaptive Cards up to 1.5 in every client and refuses a message above about
28 KB, so `card()` stamps the version and `fit()` shortens the longest texts until the card
fits. Buttons are `Action.Execute` with a `verb` and `data`: their clicks arrive as
`adaptiveCard/action` invokes and the invoke answer replaces the card (Universal Actions).
"""

from __future__ import annotations

import json
from typing import Any

CARD_VERSION = "1.5"
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
MAX_CARD_BYTES = 24 * 1024
"""Below Teams' ~28 KB message limit, leaving room for the activity envelope."""
MAX_TEXT = 8000

Card = dict[str, Any]
Element = dict[str, Any]


def truncate(text: str, limit: int) -> str:
    """Text cut to `limit` characters with an ellipsis."""
    text = text or ""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def text(
    value: str,
    *,
    weight: str | None = None,
    size: str | None = None,
    subtle: bool = False,
    color: str | None = None,
) -> Element:
    """A wrapping TextBlock (Teams' markdown subset)."""
    block: Element = {"type": "TextBlock", "text": truncate(value, MAX_TEXT) or " ", "wrap": True}
    if weight:
        block["weight"] = weight
    if size:
        block["size"] = size
    if subtle:
        block["isSubtle"] = True
    if color:
        block["color"] = color
    return block


def heading(value: str) -> Element:
    """A large bold title."""
    return text(truncate(value, 200), weight="Bolder", size="Medium")


def facts(pairs: list[tuple[str, str]]) -> Element:
    """A FactSet of (title, value) pairs."""
    return {
        "type": "FactSet",
        "facts": [{"title": truncate(t, 100), "value": truncate(v, 500)} for t, v in pairs],
    }


def execute(title: str, verb: str, data: dict[str, Any], *, style: str | None = None) -> Element:
    """An Action.Execute button (its click comes back as an adaptiveCard/action invoke)."""
    action: Element = {"type": "Action.Execute", "title": truncate(title, 60), "verb": verb}
    action["data"] = data
    if style:
        action["style"] = style
    return action


def action_set(actions: list[Element]) -> Element:
    """Buttons inside the body (a card's own `actions` may hold at most a handful)."""
    return {"type": "ActionSet", "actions": actions}


def card(body: list[Element], *, actions: list[Element] | None = None) -> Card:
    """A top-level 1.5 card that fits Teams' message size."""
    result: Card = {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": CARD_VERSION,
        "body": body,
    }
    if actions:
        result["actions"] = actions
    return fit(result)


def card_size(value: Card) -> int:
    """The card's JSON size in bytes."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def fit(value: Card, *, limit: int = MAX_CARD_BYTES) -> Card:
    """Shorten the longest TextBlocks until the card is under `limit` bytes."""
    while card_size(value) > limit:
        blocks = [b for b in _walk(value) if b.get("type") == "TextBlock"]
        longest = max(blocks, key=lambda b: len(b["text"]), default=None)
        if longest is None or len(longest["text"]) <= 200:
            value["body"] = [text("(ingekort: dit bericht is te groot voor Teams)")]
            value.pop("actions", None)
            break
        longest["text"] = truncate(longest["text"], len(longest["text"]) * 2 // 3)
    return value


def _walk(node: Any) -> list[Element]:
    found: list[Element] = []
    if isinstance(node, dict):
        found.append(node)
        for child in node.values():
            found += _walk(child)
    elif isinstance(node, list):
        for child in node:
            found += _walk(child)
    return found


def attachment(value: Card) -> dict[str, Any]:
    """A card as a message attachment."""
    return {"contentType": CARD_CONTENT_TYPE, "content": value}


def notice(message: str, *, warning: bool = False) -> Card:
    """A one-line card (errors get the attention colour)."""
    return card([text(message, color="Attention" if warning else None)])


def invoke_card(value: Card) -> dict[str, Any]:
    """The answer to an adaptiveCard/action invoke that replaces the clicked card."""
    return {"statusCode": 200, "type": CARD_CONTENT_TYPE, "value": value}


def invoke_message(message: str) -> dict[str, Any]:
    """The answer to an invoke that shows a short message and leaves the card as it is."""
    return {
        "statusCode": 200,
        "type": "application/vnd.microsoft.activity.message",
        "value": message,
    }
