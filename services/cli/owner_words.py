"""English words for the KG owner's typed refusals (chat surfaces show its Dutch message)."""

from __future__ import annotations

from shared.errors import BadInputError, R42Error

ENGLISH: dict[str, str] = {
    "not_admin": "only admins may analyse or change the knowledge graph (see R42_ADMINS)",
    "analysis_running": "an analysis is already running; try again shortly",
    "plan_unknown": "this plan is unknown or expired (plans are kept a day); analyse again",
    "nothing_to_apply": "the chosen actions change nothing (any more); nothing was applied",
    "over_bound": (
        "this selection deletes {deleting} of {size} topics; the bound is {bound} (10 % of the "
        "graph, at least 5, at most 20). Nothing was applied: choose fewer deletions or merges, "
        "or raise the bound with --max-deletions"
    ),
    "graph_changed": (
        "the knowledge graph changed since this analysis; nothing was applied. Analyse again"
    ),
    "no_such_change": "there is no change {undo_id} to undo (see `r42 graph undo --list`)",
}
"""Keyed by shared.bus.graph_rpc.GraphErrorCode, like the owner's Dutch table."""


def in_english(exc: R42Error) -> R42Error:
    """The error worded for the CLI when the owner tagged it with a known code."""
    template = ENGLISH.get(exc.code or "")
    if template is None:
        return exc
    try:
        message = template.format(**exc.params)
    except (KeyError, IndexError, ValueError):
        message = template.split("{")[0].rstrip(" (") or template
    worded = (BadInputError if isinstance(exc, BadInputError) else type(exc))(message)
    return worded.with_code(exc.code or "", **exc.params)
