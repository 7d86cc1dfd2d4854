"""Block Kit for deleting a source: the Verwijderen button, the confirmation, the result."""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, ButtonElement

from services.gateway.core.source_delete import outcome_text, over_bound_text, preview_text
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    SAFE_SECTION_TEXT,
    Blocks,
    button,
    context,
    escape,
    section,
    truncate,
)
from shared.bus.source_rpc import SourceDeleteReply

DELETE_PREFIX = "r42_source_delete_"
DELETE_RE = ids.matching(DELETE_PREFIX, tail=r"\d+")  # one per listed source
DELETE_YES = "r42_source_delete_yes"
DELETE_RAISE = "r42_source_delete_raise"
DELETE_NO = "r42_source_delete_no"
UNDO = "r42_source_undo"
SEPARATOR = "|"  # value of the raise button: source id | the explicitly raised bound


def delete_button(index: int, source_id: str) -> ButtonElement:
    """The Verwijderen button of the index-th listed source (admins only)."""
    return button("Verwijderen", f"{DELETE_PREFIX}{index}", source_id, style="danger")


def confirm_blocks(source_id: str, reply: SourceDeleteReply) -> Blocks:
    """What goes and the bound; over the bound only an explicit raise deletes."""
    if reply.over_bound:
        raised = f"{source_id}{SEPARATOR}{reply.removed_count}"
        text = f":warning: {escape(over_bound_text(reply, source_id))}"
        yes = button(f"Toch verwijderen (grens {reply.removed_count})", DELETE_RAISE, raised,
                     style="danger")  # fmt: skip
    else:
        text = f":wastebasket: {escape(preview_text(reply))}"
        yes = button("Ja, verwijderen", DELETE_YES, source_id, style="danger")
    return [
        section(truncate(text, SAFE_SECTION_TEXT)),
        ActionsBlock(
            block_id="source_delete", elements=[yes, button("Annuleren", DELETE_NO, source_id)]
        ).to_dict(),
    ]


def done_blocks(source_id: str, reply: SourceDeleteReply) -> Blocks:
    """The result line, with Undo (`rpc.extractor.graph_undo`: the same change log)."""
    text = f":white_check_mark: {escape(outcome_text(reply, source_id))}"
    blocks: Blocks = [section(truncate(text, SAFE_SECTION_TEXT))]
    if reply.undo_id:
        blocks.append(ActionsBlock(block_id="source_undo", elements=[
            button("Ongedaan maken", UNDO, reply.undo_id, style="danger")
        ]).to_dict())  # fmt: skip
        blocks.append(context(f"Wijziging `{escape(reply.undo_id)}`"))
    return blocks


def undone_blocks(undo_id: str, topics: int) -> Blocks:
    """After Undo: the graph as before the delete (the source itself stays deleted)."""
    text = (
        f":leftwards_arrow_with_hook: Verwijderen ongedaan gemaakt ({escape(undo_id)}): "
        f"{topics} onderwerp(en) hersteld. De bron zelf blijft weg; lees hem opnieuw in om "
        "hem weer te volgen."
    )
    return [section(text)]
