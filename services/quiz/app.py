"""Wiring of the quiz service: offline questions, subscribers, the idle-attempt sweeper."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from services.quiz.attempts import QuizConfig, expire_idle_attempts
from services.quiz.handlers import ACTOR, QuizHandlers
from services.quiz.offline import register_offline_questions
from shared.bus import Event, QuizAnswered, QuizRequested, publish_event, subscribe_event
from shared.runtime.service import Register, ServiceContext
from shared.store import Store

log = logging.getLogger(__name__)

CONFIG_KEY = "quiz_config"


def _config(ctx: ServiceContext) -> QuizConfig:
    config = ctx.extras.get(CONFIG_KEY)
    if config is None:
        config = ctx.extras[CONFIG_KEY] = QuizConfig()
    return config


async def register(ctx: ServiceContext) -> None:
    """Register the offline tool handler and the quiz.requested / quiz.answered consumers."""
    register_offline_questions()
    config = _config(ctx)

    async def publish(event: Event) -> None:
        await publish_event(ctx.broker, event, namespace=ctx.namespace)

    handlers = QuizHandlers(store=ctx.store, publish=publish, config=config)
    subscribe_event(
        ctx.broker, QuizRequested, durable="quiz-requested", handler=handlers.on_requested,
        namespace=ctx.namespace, actor=ACTOR, max_deliver=5, max_workers=2,
    )  # fmt: skip
    subscribe_event(
        ctx.broker, QuizAnswered, durable="quiz-answered", handler=handlers.on_answered,
        namespace=ctx.namespace, actor=ACTOR, max_deliver=5, max_workers=4,
    )  # fmt: skip


async def sweep_idle(store: Store, config: QuizConfig) -> None:
    """Expire idle attempts every `expire_interval_s` until cancelled (reads also check)."""
    while True:
        await asyncio.sleep(config.expire_interval_s)
        try:
            await expire_idle_attempts(store=store, now=config.clock())
        except Exception:  # a store hiccup must not end the sweeper
            log.warning("expiring idle quiz attempts failed", exc_info=True)


async def on_started(ctx: ServiceContext) -> None:
    """Start the sweeper that clears quiz-active flags of idle attempts."""
    task = asyncio.create_task(sweep_idle(ctx.store, _config(ctx)), name="quiz-idle-sweeper")

    async def stop() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    ctx.closers.append(stop)


def with_config(config: QuizConfig) -> tuple[Register, Register]:
    """(register, on_started) using the given config (tests inject a clock and a seeded rng)."""

    async def configured_register(ctx: ServiceContext) -> None:
        ctx.extras[CONFIG_KEY] = config
        await register(ctx)

    async def configured_on_started(ctx: ServiceContext) -> None:
        ctx.extras[CONFIG_KEY] = config
        await on_started(ctx)

    return configured_register, configured_on_started
