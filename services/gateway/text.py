"""Text helpers for Slack: escaping, markdown → mrkdwn, mention stripping."""

from __future__ import annotations

import re

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


def number(n: int) -> str:
    """An integer with Dutch thousands separators (5.242.880)."""
    return f"{n:,}".replace(",", ".")
