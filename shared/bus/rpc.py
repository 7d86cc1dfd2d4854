"""Core-NATS request/reply under `rpc.`: queue-group responders and a typed client call.

Both sides use the broker's own nats-py connection rather than FastStream's subscriber
and request pipeline: bench/bench_bus_rpc.py measured that pipeline (middlewares,
dependency injection, context scopes, response publisher) at 2.2-2.9× a raw nats-py round
trip, over the ≤ 2× budget for what a person waits on; this path measures ~1.3×. nats-py's
`request` already uses one shared, muxed reply inbox. Successful requests and replies
carry no headers (bodies are always JSON), which saves header parsing on both sides.
FastStream still owns the connection and its reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from faststream.exceptions import IncorrectState
from faststream.nats import NatsBroker
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from pydantic import BaseModel, ValidationError

from shared.bus.barrier import subscriptions_settled
from shared.bus.rpc_chunks import streamed_reply
from shared.bus.subjects import RPC_PREFIX, check_async_handler, ns_subject, validate_subject
from shared.errors import (
    BadInputError,
    BusError,
    ConfigError,
    PermanentError,
    R42Error,
    TransientError,
    is_transient,
)
from shared.obs.rpc import observe_rpc_client, observe_rpc_server
from shared.validation import describe_validation

log = logging.getLogger(__name__)

Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp", bound=BaseModel)
RpcHandler = Callable[[Req], Awaitable[BaseModel]]

ERROR_HEADER = "R42-Error"
"""Set on an error reply; its value is the error kind."""
ErrorKind = Literal["bad_input", "transient", "permanent"]
_ERROR_CLASSES: dict[str, type[R42Error]] = {
    "bad_input": BadInputError,
    "transient": TransientError,
    "permanent": PermanentError,
}
_JSON = {"content-type": "application/json"}


class RpcTimeoutError(BusError):
    """No reply came in time (the responder may have died: a caller may ask again)."""


class NoResponderError(BusError):
    """No responder was subscribed to the subject (none running, or one restarting)."""


def check_rpc_subject(subject: str) -> str:
    """Accept only a concrete `rpc.` subject (streams never capture those)."""
    try:
        validate_subject(subject)
    except BadInputError as exc:
        raise ConfigError(str(exc)) from None
    if not subject.startswith(RPC_PREFIX) or subject == RPC_PREFIX:
        raise ConfigError(f"request/reply subject {subject!r} must start with {RPC_PREFIX!r}")
    return subject


def _connection(broker: NatsBroker, what: str) -> Client:
    try:
        return broker.connection
    except IncorrectState:
        raise BusError(f"cannot {what}: the broker is not connected") from None


def _error_body(kind: ErrorKind, message: str, exc: BaseException | None = None) -> bytes:
    body: dict[str, Any] = {"error": message[:4000], "kind": kind}
    if isinstance(exc, R42Error) and exc.code:
        body |= {"code": exc.code, "params": exc.params}  # a typed reason, worded per surface
    return json.dumps(body).encode()


class RpcServer[Req: BaseModel]:
    """A running responder: one queue-group subscription, requests handled concurrently."""

    def __init__(
        self, subject: str, request_model: type[Req], handler: RpcHandler[Req], limit: int
    ) -> None:
        self.subject = subject
        self._model = request_model
        self._handler = handler
        self._slots = asyncio.Semaphore(limit)
        self._tasks: set[asyncio.Task[None]] = set()
        self._sub: Subscription | None = None
        self._nc: Client | None = None

    async def _start(self, nc: Client, wire_subject: str, queue: str) -> None:
        self._nc = nc
        self._sub = await nc.subscribe(wire_subject, queue=queue, cb=self._on_request)

    async def _on_request(self, msg: Msg) -> None:
        # Waiting for a slot here applies backpressure through nats-py's pending limits.
        await self._slots.acquire()
        task = asyncio.create_task(self._answer(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: Msg) -> None:
        try:
            with observe_rpc_server(self.subject, msg.headers) as seen:
                # A caller that asked for chunks gets them before this reply (rpc_chunks).
                async with streamed_reply(self._nc, msg.reply, msg.headers):
                    body, headers = await self._reply_for(msg.data)
                seen.outcome = (headers or {}).get(ERROR_HEADER, "ok")
            if msg.reply and self._nc is not None:
                await self._nc.publish(msg.reply, body, headers=headers)
        except Exception:  # a failed reply times out at the caller; this task must not crash
            log.warning("%s: could not send the reply", self.subject, exc_info=True)
        finally:
            self._slots.release()

    async def _reply_for(self, data: bytes) -> tuple[bytes, dict[str, str] | None]:
        kind: ErrorKind
        error: BaseException | None = None
        try:
            req = self._model.model_validate_json(data)
        except ValidationError as exc:
            kind, message = "bad_input", f"{self.subject}: {describe_validation(exc)}"
        else:
            try:
                reply = await self._handler(req)
                # No headers on success: bodies are always JSON here, and header parsing
                # is a measurable share of a sub-millisecond round trip.
                return reply.model_dump_json().encode(), None
            except BadInputError as exc:
                kind, message, error = "bad_input", str(exc), exc
            except Exception as exc:  # the caller gets an answer, not a timeout
                kind, error = ("transient" if is_transient(exc) else "permanent"), exc
                if isinstance(exc, R42Error):
                    log.warning("%s failed (%s): %s", self.subject, kind, exc)
                    message = str(exc)
                else:
                    log.exception("%s handler crashed", self.subject)
                    message = f"internal error in {self.subject} ({type(exc).__name__})"
        return _error_body(kind, message, error), {**_JSON, ERROR_HEADER: kind}

    async def stop(self, *, grace: float = 10.0) -> None:
        """Stop taking requests and let the ones in flight finish (up to `grace` seconds)."""
        if self._sub is not None:
            with contextlib.suppress(NatsError):
                await self._sub.unsubscribe()
            self._sub = None
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
            for task in pending:
                task.cancel()


async def serve_rpc[Req: BaseModel](
    broker: NatsBroker,
    subject: str,
    *,
    request_model: type[Req],
    handler: RpcHandler[Req],
    namespace: str = "",
    queue: str | None = None,
    max_concurrency: int = 16,
) -> RpcServer[Req]:
    """Answer `subject` in a queue group (replicas share requests); errors become error replies.

    Needs a connected broker (call after start_broker); the subscription lives on the
    broker's connection, so it survives reconnects and ends when the broker stops.
    """
    check_rpc_subject(subject)
    check_async_handler(handler, subject)
    if max_concurrency < 1:
        raise ConfigError("max_concurrency must be >= 1")
    nc = _connection(broker, f"serve {subject}")
    server: RpcServer[Req] = RpcServer(subject, request_model, handler, max_concurrency)
    await server._start(nc, ns_subject(subject, namespace), queue or subject)
    await subscriptions_settled(nc)
    return server


async def request[Resp: BaseModel](
    broker: NatsBroker,
    subject: str,
    payload: BaseModel,
    *,
    response_model: type[Resp],
    timeout: float = 5.0,  # noqa: ASYNC109 - the request timeout, passed to nats-py
    namespace: str = "",
) -> Resp:
    """Send a request and return the typed reply; remote errors re-raise as our error classes."""
    check_rpc_subject(subject)
    if not isinstance(payload, BaseModel):
        raise BadInputError(
            f"request payload must be a pydantic model, got {type(payload).__name__}"
        )
    nc = _connection(broker, f"request {subject}")
    try:
        with observe_rpc_client(subject) as seen:
            reply = await nc.request(
                ns_subject(subject, namespace),
                payload.model_dump_json().encode(),
                timeout=timeout,
                headers=seen.headers,  # trace context, only when tracing is on
            )
            seen.outcome = (reply.headers or {}).get(ERROR_HEADER, "ok")
    except NoRespondersError:
        raise NoResponderError(f"no service is answering {subject}") from None
    except TimeoutError:
        raise RpcTimeoutError(f"{subject} did not answer within {timeout:g} s") from None
    except NatsError as exc:
        raise BusError(f"request to {subject} failed: {type(exc).__name__} {exc}") from exc
    return _typed_reply(subject, reply, response_model)


def _typed_reply[Resp: BaseModel](subject: str, reply: Any, response_model: type[Resp]) -> Resp:
    kind = (reply.headers or {}).get(ERROR_HEADER)
    if kind:
        try:
            body = json.loads(reply.data)
            message = str(body.get("error", ""))
        except (ValueError, AttributeError):
            body, message = {}, "unreadable error reply"
        error = _ERROR_CLASSES.get(kind, PermanentError)(message or f"{subject} failed")
        code, params = body.get("code"), body.get("params")
        if isinstance(code, str) and code:
            clean = params if isinstance(params, dict) else {}
            error.with_code(code, **{str(k): v for k, v in clean.items()
                                     if isinstance(v, str | int)})  # fmt: skip
        raise error
    try:
        return response_model.model_validate_json(reply.data)
    except ValidationError as exc:
        raise PermanentError(
            f"{subject}: reply is not a {response_model.__name__}: {describe_validation(exc)}"
        ) from None
