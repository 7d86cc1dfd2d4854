"""The source delete messages stay within Block Kit's limits however much a source asserts."""

from __future__ import annotations

import json

from services.gateway.slack.blocks import admin as ba
from services.gateway.slack.blocks import sources as bs
from services.gateway.slack.blocks.kit import block_problems
from shared.bus.source_rpc import SourceDeleteReply
from shared.store import Source


def big(outcome: str, *, bound: int = 20) -> SourceDeleteReply:
    ids = [f"{'onderwerp-' * 11}{i:04d}" for i in range(500)]
    return SourceDeleteReply.model_validate({
        "outcome": outcome, "source_name": "map/" * 100 + "x.md", "removed": ids,
        "removed_count": 900, "flagged": ids, "relations": 1200, "graph_size": 50_000,
        "bound": bound, "undo_id": "undo-0123456789ab",
    })  # fmt: skip


def test_confirmation_and_result_fit_and_name_the_counts() -> None:
    over = bs.confirm_blocks("src-1", big("preview"))
    within = bs.confirm_blocks("src-1", big("preview", bound=1000))
    done = bs.done_blocks("src-1", big("done", bound=1000))
    for blocks in (over, within, done):
        assert block_problems(blocks) == []
    shown = json.dumps(over, ensure_ascii=False)
    assert bs.DELETE_RAISE in shown and '"src-1|900"' in shown and bs.DELETE_YES not in shown
    assert "--max-deletions 900" in shown and "x.md" in shown
    assert "en nog 892" in json.dumps(within, ensure_ascii=False)
    assert bs.DELETE_YES in json.dumps(within) and bs.UNDO in json.dumps(done)


def test_admins_get_cancel_or_delete_and_others_neither() -> None:
    rows = [Source(id="src-run", name="a.md", sha256="a" * 64, status="processing"),
            Source(id="src-done", name="b.md", sha256="b" * 64, status="completed")]  # fmt: skip
    admin = json.dumps(ba.sources_blocks(rows, admin=True))
    assert '"r42_source_cancel_0"' in admin and f'"{bs.DELETE_PREFIX}1"' in admin
    assert bs.DELETE_RE.match(f"{bs.DELETE_PREFIX}1") and not bs.DELETE_RE.match(bs.DELETE_YES)
    member = json.dumps(ba.sources_blocks(rows, admin=False))
    assert "r42_source_cancel" not in member and bs.DELETE_PREFIX not in member
