"""The host every service runs in: settings, bus, store, LLM runtime, then its handlers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from faststream.nats import NatsBroker
from pydantic import ValidationError

from shared.config import Settings, build_settings, redact_url
from shared.errors import ConfigError, R42Error
from shared.llm import Limiter, LimiterConfig, configure_llm, open_limiter, reset_llm
from shared.store import Store, open_store

log = logging.getLogger(__name__)


@dataclass
class ServiceContext:
    """What a service's handlers get: its name, settings, broker, store and LLM limiter."""

    name: str
    settings: Settings
    broker: NatsBroker
    store: Store
    nats_url: str
    namespace: str = ""
    limiter: Limiter | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


Register = Callable[[ServiceContext], Awaitable[None]]


def resolve_nats_url(settings: Settings) -> str:
    """NATS_URL, else the embedded server recorded by a running `r42 up` in the data dir."""
    if settings.nats_url:
        return settings.nats_url
    from shared.runtime.state import read_state

    state = read_state(settings.data_dir)
    if state is None:
        raise ConfigError(
            f"no NATS server: set NATS_URL or start the stack with `r42 up` "
            f"(no runtime state in {settings.data_dir})"
        )
    return state.nats_url


async def start_service(
    name: str,
    *,
    register: Register,
    on_started: Register | None = None,
    settings: Settings | None = None,
    namespace: str = "",
) -> ServiceContext:
    """Connect everything, let `register` add subscribers, start the broker, then `on_started`."""
    from shared.bus import BusTelemetrySink, build_broker, start_broker
    from shared.obs.host import prepare_obs

    settings = settings or build_settings()
    url = resolve_nats_url(settings)
    obs = prepare_obs(name, settings)  # metrics, tracing; /metrics, /healthz, /readyz below
    broker = build_broker(url, name=f"r42-{name}", middlewares=obs.middlewares)
    store = await open_store(settings.store_url)
    limiter = obs.observe_limiter(await open_limiter(
        mode=settings.limiter,
        nats_url=url,
        config=LimiterConfig.model_validate(settings.limits) if settings.limits else None,
        bucket=settings.limiter_bucket,
    ))  # fmt: skip
    sink = BusTelemetrySink(broker, actor=name, namespace=namespace)
    runtime = configure_llm(settings, sink=obs.observe_sink(sink), limiter=limiter)
    ctx = ServiceContext(
        name=name, settings=settings, broker=broker, store=store, nats_url=url,
        namespace=namespace, limiter=limiter,
    )  # fmt: skip
    ctx.extras["telemetry_sink"] = sink
    ctx.extras["llm_runtime"] = runtime
    ctx.extras["obs"] = obs
    try:
        await obs.start(broker=broker, store=store)
        await register(ctx)
        await start_broker(broker, namespace=namespace)
        if on_started is not None:
            await on_started(ctx)
        obs.mark_started()
    except BaseException:
        await stop_service(ctx)
        raise
    log.info("%s started (nats %s)", name, redact_url(url))
    return ctx


async def stop_service(ctx: ServiceContext) -> None:
    """Stop in reverse order; telemetry is flushed before the broker goes."""
    for closer in reversed(ctx.closers):
        with contextlib.suppress(Exception):
            await closer()
    sink = ctx.extras.get("telemetry_sink")
    if sink is not None:
        with contextlib.suppress(Exception):
            await sink.aclose()
    with contextlib.suppress(Exception):
        await ctx.broker.stop()
    if ctx.limiter is not None and hasattr(ctx.limiter, "aclose"):
        with contextlib.suppress(Exception):
            await ctx.limiter.aclose()  # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        await ctx.store.close()
    runtime = ctx.extras.get("llm_runtime")
    if runtime is not None:
        with contextlib.suppress(Exception):
            await runtime.aclose()  # close the HTTP pool on this loop, before it ends
    reset_llm()
    obs = ctx.extras.get("obs")
    if obs is not None:
        await obs.aclose()


async def serve_until_stopped(
    name: str,
    *,
    register: Register,
    on_started: Register | None = None,
    settings: Settings | None = None,
    namespace: str = "",
) -> None:
    """Run a service until SIGTERM / SIGINT, then stop it cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ctx = await start_service(
        name, register=register, on_started=on_started, settings=settings, namespace=namespace
    )
    try:
        await stop.wait()
    finally:
        log.info("%s stopping", name)
        await stop_service(ctx)


def service_main(
    name: str, *, register: Register, on_started: Register | None = None, namespace: str = ""
) -> None:
    """Entry point of `python -m services.<name>`: logging, then serve until stopped."""
    try:
        settings = build_settings()
    except ValidationError as exc:  # locations and messages only: inputs may be secrets
        from shared.store import describe_validation

        print(f"{name}: invalid settings: {describe_validation(exc)}", file=sys.stderr)
        sys.exit(2)
    logging.basicConfig(
        level=settings.log_level.upper(),
        format=f"%(asctime)s %(levelname)s [{name}] %(name)s: %(message)s",
    )
    try:
        asyncio.run(
            serve_until_stopped(
                name,
                register=register,
                on_started=on_started,
                settings=settings,
                namespace=namespace,
            )
        )
    except R42Error as exc:
        # A clear one-line reason for the supervisor's log instead of a traceback.
        print(f"{name}: {exc}", file=sys.stderr)
        sys.exit(2)
