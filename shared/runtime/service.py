"""The host every service runs in: settings, bus, store, LLM runtime, then its handlers.

One convention for every service (gateway, extractor, content, quiz, r42, telemetry):

- `services/<name>/app.py` defines `build(ctx: ServiceContext) -> ServiceSpec`. It reads the
  typed context the host made (settings, broker, store, limiter, telemetry sink), builds the
  service's own typed dependencies (`spec.deps`: narrow store ports, a publisher, its
  settings) and returns what the service serves: durable JetStream `subscriptions`, `rpc`
  servers, core-NATS `broadcasts` every replica hears, `offline_plans` (the offline LLM
  provider's stand-ins, injected when the host builds the LLM runtime), `on_started` steps,
  `background` loops and `closers`. `build` does no I/O: the host connects, subscribes,
  starts the broker, serves, then runs the steps.
- `handlers.py` is thin (parse, call the domain, publish); domain modules are plain
  keyword-only async functions that get the ports they use, never the context.

`python -m services.<name>` calls `service_main(name, build=build)`. Tests start the same
service in-process with `start_service(name, build=build, settings=..., namespace=...)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from faststream.nats import NatsBroker
from pydantic import BaseModel, ValidationError

from shared.config import Settings, build_settings, redact_url
from shared.errors import ConfigError, R42Error
from shared.llm import (
    Limiter,
    LimiterConfig,
    LLMRuntime,
    OfflinePlans,
    configure_llm,
    open_limiter,
    reset_llm,
    use_runtime,
)
from shared.store import Store, open_store

if TYPE_CHECKING:
    from shared.bus import BusTelemetrySink, Event
    from shared.obs.host import Observability

log = logging.getLogger(__name__)

Step = Callable[[], Awaitable[object]]
Closer = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Subscription:
    """A durable JetStream consumer of one event type (replicas share `durable`)."""

    event: type[Event]
    durable: str
    handler: Callable[[Any], Awaitable[None]]
    max_deliver: int = 5
    ack_wait: float = 30.0
    nack_delay: float = 1.0
    max_nack_delay: float = 60.0
    max_workers: int = 1
    on_failure: Callable[[Any, str], Event | None] | None = None


@dataclass(frozen=True)
class Rpc:
    """A request/reply server on an `rpc.` subject, in a queue group shared by replicas."""

    subject: str
    request_model: type[BaseModel]
    handler: Callable[[Any], Awaitable[BaseModel]]
    max_concurrency: int = 16


@dataclass(frozen=True)
class Broadcast:
    """A core-NATS subscription without a queue group: every replica hears every event."""

    event: type[Event]
    handler: Callable[[Any], Awaitable[None]]


@dataclass
class ServiceSpec[D]:
    """What a service's `build` returns: its dependencies and everything it serves."""

    deps: D
    subscriptions: Sequence[Subscription] = ()
    rpc: Sequence[Rpc] = ()
    broadcasts: Sequence[Broadcast] = ()
    offline_plans: OfflinePlans | None = None
    on_started: Sequence[Step] = ()
    background: Sequence[Callable[[], Coroutine[Any, Any, None]]] = ()
    closers: Sequence[Closer] = ()


@dataclass
class ServiceContext:
    """The typed context the host builds once per process and hands to `build`."""

    name: str
    settings: Settings
    broker: NatsBroker
    store: Store
    nats_url: str
    telemetry: BusTelemetrySink
    namespace: str = ""
    limiter: Limiter | None = None
    llm: LLMRuntime | None = None
    spec: ServiceSpec[Any] | None = None
    closers: list[Closer] = field(default_factory=list)
    # The service's /metrics, /healthz and /readyz server and tracing (set by the host).
    obs: Observability | None = None

    async def publish(self, event: Event) -> None:
        """Publish an event in this service's bus namespace (JetStream ack awaited)."""
        from shared.bus import publish_event

        await publish_event(self.broker, event, namespace=self.namespace)


Build = Callable[[ServiceContext], ServiceSpec[Any]]


def resolve_nats_url(settings: Settings) -> str:
    """NATS_URL, else the embedded server recorded by a running `r42 up` in the data dir."""
    url = live_nats_url(settings)
    if url is None:
        raise ConfigError(
            f"no NATS server: set NATS_URL or start the stack with `r42 up` "
            f"(no runtime state in {settings.data_dir})"
        )
    return url


def live_nats_url(settings: Settings) -> str | None:
    """NATS_URL, else the running stack's server, else None (callers may work in-process)."""
    if settings.nats_url:
        return settings.nats_url
    from shared.runtime.state import find_running

    state = find_running(settings.data_dir)
    return state.nats_url if state is not None else None


def _offline_plans(settings: Settings, spec: ServiceSpec[Any] | None) -> OfflinePlans | None:
    if spec is None or settings.llm_provider != "offline":
        return None
    return spec.offline_plans


async def _serve(ctx: ServiceContext, spec: ServiceSpec[Any]) -> None:
    """Broadcasts, then on_started steps, rpc servers and background loops of `spec`."""
    from shared.bus import serve_rpc

    for broadcast in spec.broadcasts:
        await _listen(ctx, broadcast)
    for step in spec.on_started:
        await step()
    for rpc in spec.rpc:
        server = await serve_rpc(
            ctx.broker,
            rpc.subject,
            request_model=rpc.request_model,
            handler=rpc.handler,
            namespace=ctx.namespace,
            max_concurrency=rpc.max_concurrency,
        )
        ctx.closers.append(server.stop)
    for loop in spec.background:
        task: asyncio.Task[None] = asyncio.create_task(loop(), name=f"{ctx.name}-background")
        ctx.closers.append(_canceller(task))


def _canceller(task: asyncio.Task[None]) -> Closer:
    async def cancel() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task

    return cancel


async def _listen(ctx: ServiceContext, broadcast: Broadcast) -> None:
    from shared.bus import ns_subject, parse_event, subscriptions_settled

    async def on_message(msg: Any) -> None:
        try:
            event = parse_event(msg.subject, msg.data, namespace=ctx.namespace)
        except R42Error as exc:
            log.warning("ignoring a malformed %s broadcast: %s", broadcast.event.SUBJECT, exc)
            return
        if isinstance(event, broadcast.event):
            try:
                await broadcast.handler(event)
            except Exception:  # one bad broadcast must not end the subscription
                log.exception("%s broadcast handler failed", broadcast.event.SUBJECT)

    subject = ns_subject(broadcast.event.SUBJECT, ctx.namespace)
    sub = await ctx.broker.connection.subscribe(subject, cb=on_message)
    await subscriptions_settled(ctx.broker.connection)

    async def unsubscribe() -> None:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()

    ctx.closers.append(unsubscribe)


def _subscribe(ctx: ServiceContext, spec: ServiceSpec[Any]) -> None:
    from shared.bus import subscribe_event

    for sub in spec.subscriptions:
        subscribe_event(
            ctx.broker,
            sub.event,
            durable=sub.durable,
            handler=sub.handler,
            namespace=ctx.namespace,
            actor=ctx.name,
            max_deliver=sub.max_deliver,
            ack_wait=sub.ack_wait,
            nack_delay=sub.nack_delay,
            max_nack_delay=sub.max_nack_delay,
            max_workers=sub.max_workers,
            on_failure=sub.on_failure,
        )


async def start_service(
    name: str,
    *,
    build: Build,
    settings: Settings | None = None,
    namespace: str = "",
) -> ServiceContext:
    """Connect everything, build the service, subscribe, start the broker, then serve.

    Runs in a copy of the caller's context: the service's LLM runtime (with its offline
    plans and telemetry sink) belongs to the tasks started here, so services sharing a
    process never answer with each other's plans.
    """
    starting = _start(name, build=build, settings=settings or build_settings(), namespace=namespace)
    return await asyncio.create_task(starting, context=contextvars.copy_context())


async def _start(name: str, *, build: Build, settings: Settings, namespace: str) -> ServiceContext:
    from shared.bus import BusTelemetrySink, build_broker, start_broker
    from shared.obs.host import prepare_obs
    from shared.runtime.session import client_auth

    url = resolve_nats_url(settings)
    obs = prepare_obs(name, settings)  # metrics, tracing; /metrics, /healthz, /readyz below
    auth = client_auth(settings, user=name)  # its own NATS user, handed over by `r42 up`
    # A replica names its connection after its instance (`r42-r42.2`): readiness tells them apart.
    conn_name = f"r42-{obs.settings.instance or name}"
    broker = build_broker(url, name=conn_name, middlewares=obs.middlewares, auth=auth)
    store = await open_store(settings.store_url)
    ctx: ServiceContext | None = None
    try:
        limiter = obs.observe_limiter(await open_limiter(
            mode=settings.limiter,
            nats_url=url,
            connect_options=auth.options() if auth else None,
            config=LimiterConfig.model_validate(settings.limits) if settings.limits else None,
            bucket=settings.limiter_bucket,
            replicas=settings.nats_replicas,
        ))  # fmt: skip
        sink = BusTelemetrySink(broker, actor=name, namespace=namespace)
        ctx = ServiceContext(
            name=name,
            settings=settings,
            broker=broker,
            store=store,
            nats_url=url,
            telemetry=sink,
            namespace=namespace,
            limiter=limiter,
            obs=obs,
        )
        await obs.start(broker=broker, store=store)
        spec = ctx.spec = build(ctx)
        ctx.llm = configure_llm(
            settings,
            sink=obs.observe_sink(sink),
            limiter=limiter,
            offline_plans=_offline_plans(settings, spec),
        )
        use_runtime(ctx.llm)
        ctx.closers.extend(spec.closers)
        _subscribe(ctx, spec)
        await start_broker(broker, namespace=namespace, replicas=settings.nats_replicas)
        await _serve(ctx, spec)
        obs.mark_started()
    except BaseException:
        if ctx is not None:
            await stop_service(ctx)
        else:
            with contextlib.suppress(Exception):
                await store.close()
            await obs.aclose()
        raise
    log.info("%s started (nats %s)", name, redact_url(url))
    return ctx


async def stop_consumers(broker: Any, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Stop every subscriber and wait (up to `timeout`) for its cancelled handlers to end.

    FastStream's stop cancels a subscriber's tasks without awaiting them; awaiting them here
    lets an in-flight handler finish its cancellation (an LLM call records its telemetry)
    while the process still publishes. The broker stays connected.
    """
    subscribers = list(getattr(broker, "subscribers", ()))
    tasks = [t for sub in subscribers for t in getattr(sub, "tasks", ()) if not t.done()]
    results = await asyncio.gather(*(sub.stop() for sub in subscribers), return_exceptions=True)
    for sub, result in zip(subscribers, results, strict=True):
        if isinstance(result, Exception):
            log.warning("stopping subscriber %s failed: %s", sub, result)
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        if pending:
            log.warning("%d consumer task(s) still running after %.0f s", len(pending), timeout)


async def stop_service(ctx: ServiceContext) -> None:
    """Stop in reverse order: work first, then telemetry is drained before the broker goes."""
    for closer in reversed(ctx.closers):
        with contextlib.suppress(Exception):
            await closer()
    # Consumers stop (their in-flight handlers end) while the sink still takes records: an
    # LLM call that ends during shutdown is logged, then the queue is drained, then the
    # broker closes.
    await stop_consumers(ctx.broker)
    with contextlib.suppress(Exception):
        await ctx.telemetry.aclose()
    with contextlib.suppress(Exception):
        await ctx.broker.stop()
    aclose = getattr(ctx.limiter, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
    with contextlib.suppress(Exception):
        await ctx.store.close()
    if ctx.llm is not None:
        with contextlib.suppress(Exception):
            await ctx.llm.aclose()  # close the HTTP pool on this loop, before it ends
    reset_llm()
    if ctx.obs is not None:
        await ctx.obs.aclose()


async def serve_until_stopped(
    name: str, *, build: Build, settings: Settings | None = None, namespace: str = ""
) -> None:
    """Run a service until SIGTERM / SIGINT, then stop it cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ctx = await start_service(name, build=build, settings=settings, namespace=namespace)
    try:
        await stop.wait()
    finally:
        log.info("%s stopping", name)
        await stop_service(ctx)


def service_main(name: str, *, build: Build, namespace: str = "") -> None:
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
        serving = serve_until_stopped(name, build=build, settings=settings, namespace=namespace)
        asyncio.run(serving)
    except R42Error as exc:
        # A clear one-line reason for the supervisor's log instead of a traceback.
        print(f"{name}: {exc}", file=sys.stderr)
        sys.exit(2)
