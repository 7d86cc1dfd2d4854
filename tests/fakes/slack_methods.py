"""The argument rules and Block Kit limits the fake Slack Web API enforces, as Slack does.

Each method lists its required and optional arguments (from the Web API reference); a
missing required argument or an unknown one answers `{"ok": false, "error":
"invalid_arguments"}` with Slack's `response_metadata.messages`. Message and view payloads
are checked against Block Kit's limits and refused with `invalid_blocks`. This module is
written from Slack's documentation, independently of the gateway's own limit checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MESSAGE_OPTIONAL = frozenset(
    {
        "text", "blocks", "attachments", "thread_ts", "reply_broadcast", "unfurl_links",
        "unfurl_media", "mrkdwn", "metadata", "icon_emoji", "icon_url", "username", "parse",
        "link_names", "as_user", "markdown_text",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """What one method accepts."""

    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    one_of: frozenset[str] = frozenset()
    """At least one of these must be present (e.g. a message needs text or blocks)."""
    one_of_error: str = "invalid_arguments"


def _rule(required: str = "", optional: str = "", **kw: Any) -> Rule:
    return Rule(frozenset(required.split()), frozenset(optional.split()), **kw)


RULES: dict[str, Rule] = {
    "auth.test": _rule(optional="team_id"),  # Bolt sends team_id with it
    "apps.connections.open": _rule(),
    "chat.postMessage": Rule(
        frozenset({"channel"}),
        _MESSAGE_OPTIONAL,
        one_of=frozenset({"text", "blocks", "attachments", "markdown_text"}),
        one_of_error="no_text",
    ),
    "chat.update": Rule(
        frozenset({"channel", "ts"}), _MESSAGE_OPTIONAL | {"file_ids"} - {"thread_ts"}
    ),
    "chat.postEphemeral": Rule(
        frozenset({"channel", "user"}),
        _MESSAGE_OPTIONAL,
        one_of=frozenset({"text", "blocks", "attachments", "markdown_text"}),
        one_of_error="no_text",
    ),
    # Streamed answers are replies (thread_ts), as Slack and slack-sdk's chat_stream require.
    "chat.startStream": _rule(
        "channel thread_ts",
        "markdown_text recipient_team_id recipient_user_id chunks task_display_mode "
        "icon_emoji icon_url username",
    ),
    "chat.appendStream": Rule(
        frozenset({"channel", "ts"}),
        frozenset({"markdown_text", "chunks"}),
        one_of=frozenset({"markdown_text", "chunks"}),
        one_of_error="no_text",
    ),
    "chat.stopStream": _rule("channel ts", "markdown_text blocks metadata chunks session_status"),
    "chat.delete": _rule("channel ts", "as_user"),
    "conversations.open": Rule(
        optional=frozenset({"users", "channel", "return_im", "prevent_creation"}),
        one_of=frozenset({"users", "channel"}),
        one_of_error="users_list_not_supplied",
    ),
    "conversations.replies": _rule(
        "channel ts", "cursor inclusive latest limit oldest include_all_metadata"
    ),
    "users.info": _rule("user", "include_locale"),
    "views.publish": _rule("user_id view", "hash"),
    "views.open": Rule(
        frozenset({"view"}),
        frozenset({"trigger_id", "interactivity_pointer"}),
        one_of=frozenset({"trigger_id", "interactivity_pointer"}),
    ),
    "files.info": _rule("file", "count cursor limit page"),
    "files.getUploadURLExternal": _rule("filename length", "alt_txt snippet_type"),
    "files.completeUploadExternal": _rule(
        "files", "channel_id channels initial_comment thread_ts blocks"
    ),
    "assistant.threads.setStatus": _rule("channel_id thread_ts status", "loading_messages"),
    "assistant.threads.setSuggestedPrompts": _rule("channel_id thread_ts prompts", "title"),
    "assistant.threads.setTitle": _rule("channel_id thread_ts title"),
}


def argument_error(method: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """Slack's error body for a call that breaks the method's argument rules (None when ok)."""
    rule = RULES.get(method)
    if rule is None:
        return {"ok": False, "error": "unknown_method"}
    given = {k for k, v in args.items() if v is not None and k != "token"}
    messages = [f"[ERROR] missing required field: {k}" for k in sorted(rule.required - given)]
    unknown = given - rule.required - rule.optional
    messages += [f"[ERROR] unsupported argument: {k}" for k in sorted(unknown)]
    if messages:
        return {
            "ok": False,
            "error": "invalid_arguments",
            "response_metadata": {"messages": messages},
        }
    if rule.one_of and not rule.one_of & given:
        return {"ok": False, "error": rule.one_of_error}
    return None


# -- streaming ------------------------------------------------------------------------------

MAX_MARKDOWN_TEXT = 12_000
_CHUNK_TYPES = frozenset({"markdown_text", "task_update", "plan_update", "blocks"})


def stream_error(method: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """Slack's refusal of a streaming call's text or chunks (None when ok)."""
    if not method.startswith("chat.") or not method.endswith("Stream"):
        return None
    if len(str(args.get("markdown_text") or "")) > MAX_MARKDOWN_TEXT:
        return {"ok": False, "error": "msg_too_long"}
    chunks = args.get("chunks")
    if chunks is None:
        return None
    if not isinstance(chunks, list):
        return {"ok": False, "error": "invalid_chunks"}
    for chunk in chunks:
        if not isinstance(chunk, dict) or chunk.get("type") not in _CHUNK_TYPES:
            return {"ok": False, "error": "invalid_chunks"}
        if chunk["type"] == "markdown_text":
            text = chunk.get("text")
            if not isinstance(text, str) or not text or len(text) > MAX_MARKDOWN_TEXT:
                return {"ok": False, "error": "invalid_chunks"}
    return None


def streamed_text(args: dict[str, Any]) -> str:
    """The markdown a streaming call adds to the message (its text, then its text chunks)."""
    text = str(args.get("markdown_text") or "")
    for chunk in args.get("chunks") or []:
        if isinstance(chunk, dict) and chunk.get("type") == "markdown_text":
            text += str(chunk.get("text", ""))
    return text


# -- Block Kit ------------------------------------------------------------------------------

LIMITS = {"message_blocks": 50, "view_blocks": 100, "section_text": 3000, "header_text": 150}


def _text(obj: Any) -> str:
    return str(obj.get("text", "")) if isinstance(obj, dict) else ""


def _element_problems(element: Any, where: str) -> list[str]:
    if not isinstance(element, dict) or "type" not in element:
        return [f"{where}: element without a type"]
    out: list[str] = []
    if len(str(element.get("action_id", ""))) > 255:
        out.append(f"{where}: action_id over 255 chars")
    if element["type"] == "button":
        if not 1 <= len(_text(element.get("text"))) <= 75:
            out.append(f"{where}: button text must be 1-75 chars")
        if len(str(element.get("value", ""))) > 2000:
            out.append(f"{where}: button value over 2000 chars")
    if element["type"] == "checkboxes":
        options = element.get("options") or []
        if not 1 <= len(options) <= 10:
            out.append(f"{where}: checkboxes need 1-10 options")
        values = [o.get("value") for o in options if isinstance(o, dict)]
        for option in options:
            if not 1 <= len(_text(option.get("text"))) <= 75:
                out.append(f"{where}: option text must be 1-75 chars")
            if not 1 <= len(str(option.get("value", ""))) <= 150:
                out.append(f"{where}: option value must be 1-150 chars")
        for chosen in element.get("initial_options") or []:
            if chosen.get("value") not in values:
                out.append(f"{where}: initial_options must be among the options")
    if element["type"] == "feedback_buttons":
        for side in ("positive_button", "negative_button"):
            button = element.get(side)
            if not isinstance(button, dict) or "value" not in button:
                out.append(f"{where}: feedback_buttons needs {side} with a value")
            elif not 1 <= len(_text(button.get("text"))) <= 75:
                out.append(f"{where}: {side} text must be 1-75 chars")
    return out


def block_errors(blocks: Any, *, max_blocks: int) -> list[str]:
    """Every way `blocks` break Block Kit's limits, worded like Slack's `errors` list."""
    if not isinstance(blocks, list):
        return ["blocks must be an array"]
    errors: list[str] = []
    if len(blocks) > max_blocks:
        errors.append(f"must contain at most {max_blocks} blocks")
    ids: set[str] = set()
    for i, block in enumerate(blocks):
        where = f"[json-pointer:/blocks/{i}]"
        if not isinstance(block, dict) or "type" not in block:
            errors.append(f"{where} block without a type")
            continue
        kind = block["type"]
        block_id = block.get("block_id")
        if block_id is not None:
            if block_id in ids or len(str(block_id)) > 255:
                errors.append(f"{where} block_id duplicate or too long")
            ids.add(block_id)
        if kind == "section":
            if not _text(block.get("text")) and not block.get("fields"):
                errors.append(f"{where} section needs text or fields")
            if len(_text(block.get("text"))) > LIMITS["section_text"]:
                errors.append(f"{where} section text over 3000 chars")
            if block.get("accessory") is not None:
                errors += _element_problems(block["accessory"], where)
        elif kind == "header" and len(_text(block.get("text"))) > LIMITS["header_text"]:
            errors.append(f"{where} header over 150 chars")
        elif kind in ("context", "actions", "context_actions"):
            elements = block.get("elements") or []
            cap = {"context": 10, "actions": 25, "context_actions": 5}[kind]
            if not 1 <= len(elements) <= cap:
                errors.append(f"{where} {kind} needs 1-{cap} elements")
            for element in elements:
                errors += _element_problems(element, where)
            if kind == "context_actions" and any(
                e.get("type") not in ("feedback_buttons", "icon_button") for e in elements
            ):
                errors.append(f"{where} context_actions takes feedback_buttons or icon_button")
    return errors


def payload_error(method: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """`invalid_blocks` for a message or view whose blocks break the limits (None when ok)."""
    if method in ("views.publish", "views.open"):
        view = args.get("view")
        blocks, cap = (view or {}).get("blocks", []) if isinstance(view, dict) else None, 100
    elif "blocks" in args:
        blocks, cap = args["blocks"], LIMITS["message_blocks"]
    else:
        return None
    errors = block_errors(blocks, max_blocks=cap)
    if len(str(args.get("text", ""))) > 40_000:
        errors.append("text over 40000 chars")
    return {"ok": False, "error": "invalid_blocks", "errors": errors} if errors else None
