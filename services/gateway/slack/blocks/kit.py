"""Block Kit in one place: Slack's limits (checked on every payload), mrkdwn text, primitives."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)

from shared.errors import BadInputError

Blocks = list[dict[str, Any]]

# -- limits ---------------------------------------------------------------------------------

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTION_ID = 255
MAX_CHECKBOX_OPTIONS = 10
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_BLOCK_ID = 255
MAX_FALLBACK_TEXT = 40_000
MAX_MESSAGE_CHARS = 12_000
"""Our own cap on a message's total block text: longer answers continue in a new message."""
SAFE_SECTION_TEXT = 2900
"""What builders aim for: a margin below the hard limit for mention and link expansion."""


def as_dicts(blocks: Iterable[Block | dict[str, Any]]) -> list[dict[str, Any]]:
    """Blocks as plain dicts (slack_sdk models serialised, dicts kept)."""
    return [b.to_dict() if isinstance(b, Block) else dict(b) for b in blocks]


def _text(obj: Any) -> str:
    return str(obj.get("text", "")) if isinstance(obj, dict) else ""


def _check_element(element: dict[str, Any], where: str, problems: list[str]) -> None:
    if element.get("type") == "button":
        if len(_text(element.get("text"))) > MAX_BUTTON_TEXT:
            problems.append(f"{where}: button text over {MAX_BUTTON_TEXT} chars")
        if len(str(element.get("value", ""))) > MAX_BUTTON_VALUE:
            problems.append(f"{where}: button value over {MAX_BUTTON_VALUE} chars")
    if element.get("type") == "checkboxes":
        options = element.get("options") or []
        if not 1 <= len(options) <= MAX_CHECKBOX_OPTIONS:
            problems.append(f"{where}: checkboxes need 1-{MAX_CHECKBOX_OPTIONS} options")
        for option in options:
            if len(_text(option.get("text"))) > MAX_OPTION_TEXT:
                problems.append(f"{where}: option text over {MAX_OPTION_TEXT} chars")
            if not 1 <= len(str(option.get("value", ""))) <= MAX_OPTION_VALUE:
                problems.append(f"{where}: option value must be 1-{MAX_OPTION_VALUE} chars")
    if len(str(element.get("action_id", ""))) > MAX_ACTION_ID:
        problems.append(f"{where}: action_id over {MAX_ACTION_ID} chars")
    if element.get("type") in ("mrkdwn", "plain_text") and len(_text(element)) > MAX_SECTION_TEXT:
        problems.append(f"{where}: text element over {MAX_SECTION_TEXT} chars")


def block_problems(
    blocks: Sequence[Block | dict[str, Any]], *, max_blocks: int = MAX_MESSAGE_BLOCKS
) -> list[str]:
    """Every way `blocks` break Slack's limits (empty when they are fine)."""
    problems: list[str] = []
    dicts = as_dicts(blocks)
    if len(dicts) > max_blocks:
        problems.append(f"{len(dicts)} blocks (max {max_blocks})")
    seen_ids: set[str] = set()
    for i, block in enumerate(dicts):
        where = f"block {i} ({block.get('type')})"
        block_id = block.get("block_id")
        if block_id is not None:
            if len(str(block_id)) > MAX_BLOCK_ID:
                problems.append(f"{where}: block_id too long")
            if block_id in seen_ids:
                problems.append(f"{where}: duplicate block_id {block_id!r}")
            seen_ids.add(block_id)
        kind = block.get("type")
        if kind == "section":
            text = _text(block.get("text"))
            if not text and not block.get("fields"):
                problems.append(f"{where}: section without text or fields")
            if len(text) > MAX_SECTION_TEXT:
                problems.append(f"{where}: text has {len(text)} chars (max {MAX_SECTION_TEXT})")
            for field in block.get("fields") or []:
                if len(_text(field)) > 2000:
                    problems.append(f"{where}: a field is over 2000 chars")
            if isinstance(block.get("accessory"), dict):
                _check_element(block["accessory"], where, problems)
        elif kind == "header":
            if len(_text(block.get("text"))) > MAX_HEADER_TEXT:
                problems.append(f"{where}: header over {MAX_HEADER_TEXT} chars")
        elif kind == "context":
            elements = block.get("elements") or []
            if not elements or len(elements) > MAX_CONTEXT_ELEMENTS:
                problems.append(f"{where}: {len(elements)} elements (1-{MAX_CONTEXT_ELEMENTS})")
            for element in elements:
                _check_element(element, where, problems)
        elif kind == "actions":
            elements = block.get("elements") or []
            if not elements or len(elements) > MAX_ACTIONS_ELEMENTS:
                problems.append(f"{where}: {len(elements)} elements (1-{MAX_ACTIONS_ELEMENTS})")
            action_ids = [e.get("action_id") for e in elements if e.get("action_id")]
            if len(action_ids) != len(set(action_ids)):
                problems.append(f"{where}: duplicate action_id in one block")
            for element in elements:
                _check_element(element, where, problems)
        elif kind == "image":
            if not (block.get("image_url") or block.get("slack_file")):
                problems.append(f"{where}: image without image_url or slack_file")
            if not block.get("alt_text"):
                problems.append(f"{where}: image without alt_text")
        elif kind == "input":
            if not block.get("element") or not block.get("label"):
                problems.append(f"{where}: input without element or label")
    return problems


def check_blocks(
    blocks: Sequence[Block | dict[str, Any]], *, max_blocks: int = MAX_MESSAGE_BLOCKS
) -> list[dict[str, Any]]:
    """Blocks as dicts if they are within Slack's limits; BadInputError naming each problem."""
    problems = block_problems(blocks, max_blocks=max_blocks)
    if problems:
        raise BadInputError("Block Kit limits exceeded: " + "; ".join(problems))
    return as_dicts(blocks)


def split_text(text: str, limit: int = SAFE_SECTION_TEXT) -> list[str]:
    """Split text into pieces of at most `limit` chars, at paragraph, line or word breaks."""
    if limit < 1:
        raise BadInputError("limit must be >= 1")
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = -1
        for sep in ("\n\n", "\n", ". ", " "):
            cut = window.rfind(sep)
            if cut >= limit // 3:
                cut += len(sep)
                break
        else:
            cut = limit
        if cut < limit // 3:
            cut = limit  # one long word: a hard cut beats an endless loop
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def block_chars(block: dict[str, Any]) -> int:
    """The text a block carries (section text and fields)."""
    text = len(_text(block.get("text")))
    return text + sum(len(_text(f)) for f in block.get("fields") or [])


def chunk_blocks(
    blocks: Sequence[Block | dict[str, Any]],
    *,
    per_message: int = MAX_MESSAGE_BLOCKS,
    max_chars: int = MAX_MESSAGE_CHARS,
) -> list[list[dict[str, Any]]]:
    """Split a long block list into messages of at most `per_message` blocks and `max_chars`."""
    messages: list[list[dict[str, Any]]] = [[]]
    chars = 0
    for block in as_dicts(blocks):
        size = block_chars(block)
        if messages[-1] and (len(messages[-1]) >= per_message or chars + size > max_chars):
            messages.append([])
            chars = 0
        messages[-1].append(block)
        chars += size
    return messages


def truncate(text: str, limit: int) -> str:
    """Text cut to `limit` chars with an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


# -- text -----------------------------------------------------------------------------------

_MENTION_RE = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LINK_RE = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")
_BULLET_RE = re.compile(r"^(\s*)[-*+]\s+", re.MULTILINE)


def escape(text: str) -> str:
    """Escape the three characters Slack treats as control sequences in mrkdwn."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Common Markdown (bold, headings, links, bullets) as Slack mrkdwn; other text escaped."""
    text = escape(markdown)
    text = _HEADING_RE.sub(lambda m: f"*{m.group(1)}*", text)
    text = _BOLD_RE.sub(lambda m: f"*{m.group(1)}*", text)
    text = _LINK_RE.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)
    return _BULLET_RE.sub(lambda m: f"{m.group(1)}• ", text)


def strip_mentions(text: str) -> str:
    """The message text without user mentions (the bot's own @R42 among them)."""
    return _MENTION_RE.sub(" ", text or "").strip()


def mention(user_id: str) -> str:
    """A Slack mention of a user id (plain text for ids Slack would not resolve)."""
    return f"<@{user_id}>" if re.fullmatch(r"[UW][A-Z0-9]+", user_id) else escape(user_id)


# -- primitives -----------------------------------------------------------------------------


def section(text: str, *, block_id: str | None = None) -> dict[str, Any]:
    """A mrkdwn section; text beyond Slack's limit is cut (split it first where that matters)."""
    return SectionBlock(
        text=MarkdownTextObject(text=truncate(text, SAFE_SECTION_TEXT)), block_id=block_id
    ).to_dict()


def context(text: str, *, block_id: str | None = None) -> dict[str, Any]:
    """A one-element context block (small grey text)."""
    element = MarkdownTextObject(text=truncate(text, SAFE_SECTION_TEXT))
    return ContextBlock(elements=[element], block_id=block_id).to_dict()


def header(text: str) -> dict[str, Any]:
    """A header block (plain text, cut to Slack's 150 chars)."""
    return HeaderBlock(text=truncate(text, 150)).to_dict()


def button(
    text: str, action_id: str, value: str = "", *, style: str | None = None
) -> ButtonElement:
    """A button with a value (Slack caps values at 2000 chars)."""
    return ButtonElement(text=truncate(text, 75), action_id=action_id, value=value, style=style)


def divider() -> dict[str, Any]:
    """A divider block."""
    return DividerBlock().to_dict()


def text_sections(markdown: str) -> Blocks:
    """Markdown as mrkdwn sections, split so each stays under the section text limit."""
    return [section(piece) for piece in split_text(to_mrkdwn(markdown), SAFE_SECTION_TEXT)]


def notice_blocks(text: str) -> Blocks:
    """A plain one-section message (already mrkdwn)."""
    return [section(truncate(text, SAFE_SECTION_TEXT))]


def replace_block(blocks: Blocks, block_id: str, replacement: Blocks) -> Blocks:
    """The message blocks with the block `block_id` replaced (removed when replacement is [])."""
    out: Blocks = []
    for block in blocks:
        if block.get("block_id") == block_id:
            out.extend(replacement)
        else:
            out.append(block)
    return out
