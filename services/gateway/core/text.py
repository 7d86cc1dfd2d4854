"""Text helpers every surface shares."""

from __future__ import annotations


def number(n: int) -> str:
    """An integer with Dutch thousands separators (5.242.880)."""
    return f"{n:,}".replace(",", ".")


# Dutch words for the stored enums every surface shows (one language per surface: the
# values themselves are English identifiers and never reach a Slack or Teams reader).
TOPIC_TYPES_NL = {"concept": "begrip", "role": "rol", "process": "proces"}
RELEVANCE_NL = {
    "core": "kern",
    "standard": "standaard",
    "peripheral": "rand",
    "exclude": "uitgesloten",
}
RELATION_TYPES_NL = {
    "related_to": "hangt samen met",
    "depends_on": "hangt af van",
    "part_of": "is onderdeel van",
    "executed_by": "wordt uitgevoerd door",
}
SOURCE_STATUS_NL = {
    "pending": "in de wachtrij",
    "processing": "bezig",
    "completed": "klaar",
    "failed": "mislukt",
    "cancelled": "geannuleerd",
}
PROPOSAL_STATUS_NL = {
    "applied": "toegevoegd",
    "pending_review": "wacht op een beheerder",
    "declined": "niet toegevoegd",
    "not_found": "niet gevonden",
    "already_decided": "al besloten",
}
PLAN_KINDS_NL = {
    "merge": "samenvoegen",
    "delete": "verwijderen",
    "relation": "nieuwe relatie",
    "relevance": "relevantie",
}
CONTENT_KINDS_NL = {"article": "artikel", "slides": "slides", "infographic": "infographic"}
STALE_REASONS_NL = (
    ("made with prompt", "gemaakt met een oudere prompt"),
    ("the topic changed since generation", "het onderwerp is sindsdien veranderd"),
    ("the topic no longer exists", "het onderwerp bestaat niet meer"),
    ("marked stale", "als verouderd gemarkeerd"),
)
UNKNOWN_NL = "onbekende status"


def dutch(value: str, words: dict[str, str]) -> str:
    """The Dutch word for an enum value ('onbekende status' rather than English)."""
    return words.get(value, UNKNOWN_NL)


def stale_reason_nl(reason: str) -> str:
    """A content service reason in Dutch (the service words them in English)."""
    return next((nl for en, nl in STALE_REASONS_NL if reason.startswith(en)), reason)
