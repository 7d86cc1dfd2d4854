"""Core-NATS request/reply records r42_rpc_{server,client}_duration_seconds by subject, outcome."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable
from typing import Literal

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from shared.bus import (
    NoResponderError,
    RpcTimeoutError,
    build_broker,
    chunk_sink,
    request,
    request_stream,
    serve_rpc,
)
from shared.errors import BadInputError, PermanentError, TransientError
from shared.obs.metrics import ObsMetrics
from shared.obs.state import install_metrics, uninstall_metrics
from shared.runtime.service import Rpc, ServiceContext, ServiceSpec
from tests.fakes.anthropic_server import FakeAnthropic
from tests.shared.obs.scrape import Samples, hosted, label_sets, scrape, value

BACK, FRONT, GONE = "rpc.obs.back", "rpc.obs.front", "rpc.obs.gone"
SLOW_S = 0.15
SERVER, CLIENT = "r42_rpc_server_duration_seconds", "r42_rpc_client_duration_seconds"


How = Literal["request", "stream", "nobody"]


class Ask(BaseModel):
    text: str
    how: How = "request"


class Said(BaseModel):
    text: str
    chunks: list[str] = []


async def answer(req: Ask) -> Said:
    """The back service: answers, streams a chunk when asked to, fails on cue."""
    if req.text == "bad":
        raise BadInputError("text: not this one")
    if req.text == "boom":
        raise RuntimeError("the handler crashed")
    if req.text == "slow":
        await asyncio.sleep(SLOW_S)
    sink = chunk_sink()
    if sink is not None:
        await sink(req.text[:3])
    return Said(text=req.text.upper())


def back(ctx: ServiceContext) -> ServiceSpec[None]:
    del ctx
    return ServiceSpec(deps=None, rpc=[Rpc(BACK, Ask, answer)])


def front(ctx: ServiceContext) -> ServiceSpec[None]:
    """The front service relays to the back one, as the gateway asks r42 for a chat turn."""

    async def relay(req: Ask) -> Said:
        ns = ctx.namespace
        if req.how == "nobody":
            return await request(ctx.broker, GONE, req, response_model=Said, namespace=ns)
        if req.how == "request":
            return await request(ctx.broker, BACK, req, response_model=Said, namespace=ns)
        chunks: list[str] = []

        async def on_chunk(text: str) -> None:
            chunks.append(text)

        said = await request_stream(ctx.broker, BACK, req, response_model=Said,
                                    on_chunk=on_chunk, namespace=ns)  # fmt: skip
        return said.model_copy(update={"chunks": chunks})

    return ServiceSpec(deps=None, rpc=[Rpc(FRONT, Ask, relay)])


def _own(metrics: ObsMetrics) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(generate_latest(metrics.registry).decode()):
        for s in family.samples:
            found.setdefault(s.name, []).append(s)
    return found


async def test_request_reply_is_timed_on_both_sides_by_outcome(
    hosted_env: FakeAnthropic, unique: str
) -> None:
    ns = f"n{unique}"
    caller = ObsMetrics("caller")  # the test's own calls, kept out of both services' registries

    async def as_caller[T](call: Awaitable[T]) -> T:
        async def run() -> T:
            install_metrics(caller)
            try:
                return await call
            finally:
                uninstall_metrics(caller)

        return await asyncio.create_task(run(), context=contextvars.copy_context())

    def ask(text: str, how: How = "request") -> Awaitable[Said]:
        return as_caller(request(front_ctx.broker, FRONT, Ask(text=text, how=how),
                                 response_model=Said, namespace=ns))  # fmt: skip

    async with hosted("back", back, namespace=ns) as back_ctx, \
            hosted("front", front, namespace=ns) as front_ctx:  # fmt: skip
        assert (await ask("hallo")).text == "HALLO"
        streamed = await ask("salaris", "stream")
        assert streamed.text == "SALARIS" and streamed.chunks == ["sal"]
        with pytest.raises(BadInputError, match="not this one"):
            await ask("bad")
        with pytest.raises(PermanentError, match=r"internal error in rpc\.obs\.back"):
            await ask("boom", "stream")
        with pytest.raises(TransientError, match=r"no service is answering rpc\.obs\.gone"):
            await ask("hallo", "nobody")
        # The caller's own failures without a reply: the same outcome from either call.
        with pytest.raises(RpcTimeoutError):
            await as_caller(request(front_ctx.broker, BACK, Ask(text="slow"), response_model=Said,
                                    namespace=ns, timeout=0.05))  # fmt: skip
        with pytest.raises(NoResponderError):
            await as_caller(
                request_stream(
                    front_ctx.broker,
                    GONE,
                    Ask(text="x"),
                    response_model=Said,
                    on_chunk=_ignore,
                    namespace=ns,
                )
            )
        sent = await scrape(front_ctx)
        for _ in range(100):  # the slow answer is recorded once it is sent, after the timeout
            answered = await scrape(back_ctx)
            if value(answered, f"{SERVER}_count") == 5:
                break
            await asyncio.sleep(0.02)

    # The back service answered five requests: three ok, one bad input, one crash.
    assert value(answered, f"{SERVER}_count", subject=BACK, outcome="ok") == 3
    assert value(answered, f"{SERVER}_count", subject=BACK, outcome="bad_input") == 1
    assert value(answered, f"{SERVER}_count", subject=BACK, outcome="permanent") == 1
    assert label_sets(answered, f"{SERVER}_count", "subject") == {(BACK,)}
    assert value(answered, f"{SERVER}_sum", subject=BACK, outcome="ok") >= SLOW_S
    assert value(answered, f"{SERVER}_bucket", subject=BACK, outcome="ok", le="+Inf") == 3
    assert f"{CLIENT}_count" not in answered  # it asked nobody

    # The front service waited for four of them (request and request_stream alike) and one
    # that nobody answers; it answered five itself, errors passed on as its callers get them.
    assert value(sent, f"{CLIENT}_count", subject=BACK, outcome="ok") == 2
    assert value(sent, f"{CLIENT}_count", subject=BACK, outcome="bad_input") == 1
    assert value(sent, f"{CLIENT}_count", subject=BACK, outcome="permanent") == 1
    assert value(sent, f"{CLIENT}_count", subject=GONE, outcome="no_responder") == 1
    assert label_sets(sent, f"{CLIENT}_count", "subject") == {(BACK,), (GONE,)}
    assert value(sent, f"{SERVER}_count", subject=FRONT, outcome="ok") == 2
    assert value(sent, f"{SERVER}_count", subject=FRONT, outcome="bad_input") == 1
    assert value(sent, f"{SERVER}_count", subject=FRONT, outcome="permanent") == 1
    assert value(sent, f"{SERVER}_count", subject=FRONT, outcome="transient") == 1
    assert value(sent, f"{SERVER}_count") == 5
    # A relay waits at least as long as the answer it relays.
    assert value(sent, f"{SERVER}_sum", subject=FRONT) >= value(sent, f"{CLIENT}_sum")

    mine = _own(caller)
    assert value(mine, f"{CLIENT}_count", subject=FRONT) == 5
    assert value(mine, f"{CLIENT}_count", subject=BACK, outcome="timeout") == 1
    assert value(mine, f"{CLIENT}_count", subject=GONE, outcome="no_responder") == 1
    assert f"{SERVER}_count" not in mine


async def _ignore(text: str) -> None:
    del text


async def test_a_cancelled_request_is_not_counted_as_ok(nats_url: str, unique: str) -> None:
    ns, responder, caller = f"n{unique}", ObsMetrics("responder"), ObsMetrics("caller")
    entered = asyncio.Event()

    async def hang(req: Ask) -> Said:
        entered.set()
        await asyncio.Event().wait()  # until the server stops and cancels it
        return Said(text=req.text)

    async def recorded[T](metrics: ObsMetrics, call: Awaitable[T]) -> T:
        install_metrics(metrics)
        try:
            return await call
        finally:
            uninstall_metrics(metrics)

    def within[T](metrics: ObsMetrics, call: Awaitable[T]) -> asyncio.Task[T]:
        return asyncio.create_task(recorded(metrics, call), context=contextvars.copy_context())

    broker = build_broker(nats_url, name=f"obs-{unique}")
    await broker.start()
    try:
        server = await within(responder, serve_rpc(broker, BACK, request_model=Ask, handler=hang,
                                                   namespace=ns))  # fmt: skip
        asking = within(caller, request(broker, BACK, Ask(text="x"), response_model=Said,
                                        namespace=ns))  # fmt: skip
        await asyncio.wait_for(entered.wait(), 5)
        asking.cancel()  # the caller gives up (asyncio.timeout around a chat turn does this)
        with pytest.raises(asyncio.CancelledError):
            await asking
        await server.stop(grace=0.01)  # shutdown cancels the handler still running
    finally:
        await broker.stop()
    assert value(_own(caller), f"{CLIENT}_count", subject=BACK, outcome="cancelled") == 1
    answered = _own(responder)
    assert value(answered, f"{SERVER}_count", subject=BACK, outcome="cancelled") == 1
    assert value(answered, f"{SERVER}_count", subject=BACK, outcome="ok") == 0
