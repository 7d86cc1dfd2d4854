"""Block Kit for what the votes teach: the admins' feedback digest and gap list in App Home."""

from __future__ import annotations

from services.gateway.core.insights import FeedbackReport
from services.gateway.slack.blocks.kit import (
    SAFE_SECTION_TEXT,
    Blocks,
    context,
    escape,
    section,
    truncate,
)

WORST_TOPICS = 3
WHY = {"down": ":thumbsdown:", "unanswered": ":grey_question: onbeantwoord"}


def _percent(up: int, down: int) -> str:
    return f"{round(100 * up / (up + down))}%" if up + down else "–"


def feedback_home_blocks(report: FeedbackReport | None) -> Blocks:
    """Approval per week, the topics with most 👎, and the questions without a good answer."""
    if report is None:
        return []
    if not report.weeks and not report.gaps:
        return [section("*Feedback op antwoorden:* nog geen stemmen")]
    weeks = " · ".join(
        f"week {escape(w.week)}: {_percent(w.up, w.down)} positief ({w.up}👍 {w.down}👎)"
        for w in report.weeks
    )
    blocks: Blocks = [section(f"*Feedback op antwoorden*\n{weeks or 'nog geen stemmen'}")]
    worst = sorted(
        (t for t in report.topics if t.down and t.topic_id),
        key=lambda t: (-t.down, t.label),
    )[:WORST_TOPICS]
    if worst:
        lines = "\n".join(f"• {escape(truncate(t.label, 80))}: {t.down}👎 {t.up}👍" for t in worst)
        blocks.append(section(f"*Meeste 👎 (per onderwerp)*\n{lines}"))
    if report.gaps:
        lines = "\n".join(
            f"• {escape(truncate(g.question, 200))} ({g.count}×, "
            f"{', '.join(WHY[r] for r in sorted(g.reasons))})"
            for g in report.gaps
        )
        text = f"*Wat het handboek nog niet beantwoordt*\n{lines}"
        blocks.append(section(truncate(text, SAFE_SECTION_TEXT)))
    blocks.append(context("Alles zien: `r42 ops feedback` en `r42 ops gaps` op de server."))
    return blocks
