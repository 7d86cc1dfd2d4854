"""Block Kit for App Home: the week's topic, quiz state and score, rankings; admin overview."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock

from services.gateway.core.models import HomeData
from services.gateway.slack import ids
from services.gateway.slack.blocks.admin import STATUS_ICONS
from services.gateway.slack.blocks.audit import audit_home_blocks
from services.gateway.slack.blocks.feedback import feedback_home_blocks
from services.gateway.slack.blocks.kit import (
    MAX_VIEW_BLOCKS,
    Blocks,
    button,
    context,
    divider,
    escape,
    header,
    mention,
    section,
    truncate,
)
from services.gateway.slack.blocks.quiz import ranking_text


def home_view(data: HomeData, *, user_id: str) -> dict[str, Any]:
    """The App Home view of one user."""
    blocks: Blocks = [header("R42 — leren bij Respellion")]
    if data.weekly is None:
        blocks.append(section("Er is nog geen onderwerp: de kennisgraaf is nog leeg."))
    else:
        w = data.weekly
        blocks.append(section(f"*Onderwerp van week {escape(w.week)}:* {escape(w.label)}"))
        blocks.append(
            ActionsBlock(
                elements=[
                    button("Artikel", f"{ids.LEARN_PREFIX}article", w.topic_id),
                    button("Slides", f"{ids.LEARN_PREFIX}slides", w.topic_id),
                    button("Infographic", f"{ids.LEARN_PREFIX}infographic", w.topic_id),
                    button("Start de quiz", ids.QUIZ_START, w.week, style="primary"),
                ]
            ).to_dict()
        )
    if data.attempt is not None:
        done, total = len(data.attempt.answers), len(data.attempt.question_keys)
        blocks.append(section(f":pencil: Je quiz loopt: {done}/{total} vragen beantwoord."))
    blocks.append(context(f"Jouw punten deze week: *{data.week_points}*"))
    blocks.append(divider())
    boards = data.leaderboards
    blocks.append(
        section(
            f"*Ranglijst week {escape(boards.week)}*\n{ranking_text(boards.weekly, me=user_id)}"
        )
    )
    blocks.append(section(f"*Aller tijden*\n{ranking_text(boards.all_time, me=user_id)}"))
    if data.pending is not None:
        blocks += _admin_blocks(data)
    return {"type": "home", "blocks": blocks[:MAX_VIEW_BLOCKS]}


def _admin_blocks(data: HomeData) -> Blocks:
    blocks: Blocks = [divider(), header("Beheer")]
    pending = data.pending or []
    if pending:
        lines = [
            f"• {escape(truncate(str(s.delta.get('reason', s.id)), 200))} "
            f"(door {mention(s.proposed_by)})"
            for s in pending[:10]
        ]
        blocks.append(
            section(
                truncate(f"*Openstaande voorstellen ({len(pending)})*\n" + "\n".join(lines), 2900)
            )
        )
        blocks.append(context("Beoordeel ze met `/r42 suggestions`."))
    else:
        blocks.append(section("*Openstaande voorstellen:* geen"))
    running = data.running or []
    if running:
        lines = [
            f"{STATUS_ICONS.get(s.status, '')} {escape(truncate(s.name, 150))} · "
            f"{s.chunks_done}/{s.chunks_total or '?'}"
            for s in running[:10]
        ]
        blocks.append(section(truncate("*Lopende bronnen*\n" + "\n".join(lines), 2900)))
    else:
        blocks.append(section("*Lopende bronnen:* geen"))
    cost = data.week_cost_usd or 0.0
    blocks.append(section(f"*LLM-kosten deze week:* ${cost:.4f}"))
    return blocks + feedback_home_blocks(data.feedback) + audit_home_blocks(data.audit)
