"""Wiring of the quiz service: subscribers, the idle-attempt sweeper, offline questions."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from services.quiz.attempts import QuizConfig, expire_idle_attempts
from services.quiz.bank_rpc import answer_bank_regenerate
from services.quiz.handlers import QuizHandlers
from services.quiz.offline import offline_plans
from services.quiz.ports import QuizStore
from services.quiz.stop import answer_stop
from services.quiz.topic_removed import drop_removed_banks
from services.quiz.week import answer_leaderboard, answer_status
from shared.bus import Event, KbUpdated, QuizAnswered, QuizRequested
from shared.bus.quiz_rpc import (
    LEADERBOARD_SUBJECT,
    QUIZ_BANK_SUBJECT,
    QUIZ_STATUS_SUBJECT,
    QUIZ_STOP_SUBJECT,
    BankRegenerateReply,
    BankRegenerateRequest,
    LeaderboardReply,
    LeaderboardRequest,
    QuizStatusReply,
    QuizStatusRequest,
    QuizStopReply,
    QuizStopRequest,
)
from shared.runtime.service import Rpc, ServiceContext, ServiceSpec, Subscription

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QuizDeps:
    """What the quiz service's handlers share."""

    handlers: QuizHandlers
    config: QuizConfig


def build(ctx: ServiceContext, *, config: QuizConfig | None = None) -> ServiceSpec[QuizDeps]:
    """quiz.* consumers, rpc.quiz.{status,leaderboard,stop,bank_regenerate}, the sweeper."""
    config = config or QuizConfig()

    async def publish(event: Event) -> None:
        await ctx.publish(event)

    handlers = QuizHandlers(store=ctx.store, publish=publish, config=config)

    async def status(request: QuizStatusRequest) -> QuizStatusReply:
        return await answer_status(request, store=ctx.store)

    async def board(request: LeaderboardRequest) -> LeaderboardReply:
        return await answer_leaderboard(request, store=ctx.store)

    async def stop(request: QuizStopRequest) -> QuizStopReply:
        return await answer_stop(request, store=ctx.store, now=config.clock())

    async def bank(request: BankRegenerateRequest) -> BankRegenerateReply:
        return await answer_bank_regenerate(
            request, store=ctx.store, admins=set(ctx.settings.admins)
        )

    async def on_kb(event: KbUpdated) -> None:
        await drop_removed_banks(ctx.store, event.removed_ids)

    async def sweep() -> None:
        await sweep_idle(ctx.store, config)

    return ServiceSpec(
        deps=QuizDeps(handlers=handlers, config=config),
        subscriptions=[
            Subscription(QuizRequested, "quiz-requested", handlers.on_requested, max_workers=2),
            Subscription(QuizAnswered, "quiz-answered", handlers.on_answered, max_workers=4),
            Subscription(KbUpdated, "quiz-kb", on_kb),
        ],
        rpc=[
            Rpc(QUIZ_STATUS_SUBJECT, QuizStatusRequest, status),
            Rpc(LEADERBOARD_SUBJECT, LeaderboardRequest, board),
            Rpc(QUIZ_STOP_SUBJECT, QuizStopRequest, stop),
            Rpc(QUIZ_BANK_SUBJECT, BankRegenerateRequest, bank),
        ],
        background=[sweep],
        offline_plans=offline_plans(),
    )


async def sweep_idle(store: QuizStore, config: QuizConfig) -> None:
    """Expire idle attempts every `expire_interval_s` until cancelled (reads also check)."""
    while True:
        await asyncio.sleep(config.expire_interval_s)
        try:
            await expire_idle_attempts(store=store, now=config.clock())
        except Exception:  # a store hiccup must not end the sweeper
            log.warning("expiring idle quiz attempts failed", exc_info=True)
