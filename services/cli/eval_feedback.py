"""`r42 eval --from-feedback DIR`: answers voted 👎 become chat eval cases in DIR/chat/.

Each down-voted turn (its question, the answer that was rated, the topics it used, model and
prompt version) becomes a one-turn script whose reply must not repeat the rated answer; the
golden file reads the KB from the same store, so `r42 eval --suite chat --golden-dir DIR`
replays the questions against today's knowledge graph and prompts. A reviewer adds anchors
and sources once the right answer is known.
"""

from __future__ import annotations

import re
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml

from evals.golden import EVALS_DIR, THRESHOLDS_FILE, read_yaml
from shared.store import FeedbackVote, Store, utcnow

MAX_CASES = 500
_SLUG = re.compile(r"[^a-z0-9]+")


def case_id(vote: FeedbackVote) -> str:
    """A stable script id for a vote's turn."""
    slug = _SLUG.sub("-", vote.turn_id.lower()).strip("-")[:60]
    return f"feedback-{slug or 'turn'}"


def script_for(vote: FeedbackVote) -> dict[str, Any]:
    """One eval script: the question; the reply must not repeat the answer voted down."""
    return {
        "id": case_id(vote),
        "turns": [{"say": vote.question, "unlike": vote.answer}],
    }


def origin_comment(vote: FeedbackVote) -> str:
    """Where a case came from, as YAML comment lines."""
    when = f"{vote.created_at:%Y-%m-%d}" if vote.created_at else "?"
    lines = [
        f"{case_id(vote)}: voted down on {when} ({vote.surface or '?'}); model "
        f"{vote.model or '?'}, prompt {vote.prompt_version or '?'}; "
        f"topics {', '.join(vote.topic_ids) or '(none)'}",
    ]
    if vote.reason:
        lines.append(f"  what was wrong: {' '.join(vote.reason.split())[:300]}")
    return "\n".join(f"# {line}" for line in lines)


async def down_votes(store: Store, *, weeks: int) -> list[FeedbackVote]:
    """Down votes of the last `weeks` weeks whose turn is known, one per question (newest)."""
    since = utcnow() - timedelta(weeks=weeks)
    kept: dict[str, FeedbackVote] = {}
    for vote in await store.feedback.list(since=since, value="down", limit=MAX_CASES * 4):
        key = " ".join(vote.question.lower().split())
        if not key:
            continue  # the turn had expired when the vote came: no question to replay
        first = kept.get(key)
        if first is None:
            kept[key] = vote
        elif vote.reason and not first.reason:  # keep what a person said was wrong
            kept[key] = first.model_copy(update={"reason": vote.reason})
    return list(kept.values())[:MAX_CASES]


def write_cases(out: Path, votes: list[FeedbackVote], *, store_url: str) -> Path:
    """DIR/chat/golden.yaml (and the chat thresholds) for the votes; returns the golden file."""
    chat = out / "chat"
    chat.mkdir(parents=True, exist_ok=True)
    shipped = read_yaml(EVALS_DIR / "chat" / "golden.yaml")
    doc = {
        "refusal_phrases": shipped["refusal_phrases"],
        "kb_store": store_url,
        "scripts": [script_for(v) for v in votes],
    }
    header = [
        "# Chat cases from answers voted down (r42 eval --from-feedback).",
        f"# Run: r42 eval --suite chat --golden-dir {out}",
        *(origin_comment(v) for v in votes),
    ]
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    golden = chat / "golden.yaml"
    golden.write_text("\n".join(header) + "\n" + body, encoding="utf-8")
    shutil.copyfile(EVALS_DIR / "chat" / THRESHOLDS_FILE, chat / THRESHOLDS_FILE)
    return golden
