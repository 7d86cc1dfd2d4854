"""Streamed rpc replies, the caller's side: text chunks in order, then the typed reply.

The request goes out with the `R42-Stream` header and a reply inbox of this call only; the
responder (shared.bus.rpc_chunks) sends numbered chunks there and then its final reply. Chunks
reach `on_chunk` strictly in sequence: after a gap (a slow consumer dropped one) no further
chunk is passed on, and the caller relies on the final reply, which carries the whole result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from faststream.nats import NatsBroker
from nats.errors import Error as NatsError
from pydantic import BaseModel

from shared.bus.rpc import (
    NoResponderError,
    RpcTimeoutError,
    _connection,
    _typed_reply,
    check_rpc_subject,
)
from shared.bus.rpc_chunks import CHUNK_HEADER, MAX_CHUNKS, STREAM_HEADER
from shared.bus.subjects import ns_subject
from shared.errors import BadInputError, BusError
from shared.obs.rpc import observe_rpc_client

log = logging.getLogger(__name__)


async def request_stream[Resp: BaseModel](
    broker: NatsBroker,
    subject: str,
    payload: BaseModel,
    *,
    response_model: type[Resp],
    on_chunk: Callable[[str], Awaitable[None]],
    timeout: float = 5.0,  # noqa: ASYNC109 - the whole call's bound, like request()'s
    namespace: str = "",
    idle_timeout: float | None = None,
) -> Resp:
    """Send a request, pass its interim text chunks to `on_chunk`, return the typed reply.

    With `idle_timeout` the call also ends (BusError) when nothing arrived for that long: a
    responder that streams is alive, one that died mid-answer goes quiet.
    """
    check_rpc_subject(subject)
    if not isinstance(payload, BaseModel):
        raise BadInputError(
            f"request payload must be a pydantic model, got {type(payload).__name__}"
        )
    nc = _connection(broker, f"request {subject}")
    inbox = nc.new_inbox()
    # Room for every chunk plus the reply, so nats-py never drops one of ours as "slow".
    sub = await nc.subscribe(inbox, max_msgs=MAX_CHUNKS + 1, pending_msgs_limit=MAX_CHUNKS + 8)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    expected = 1
    try:
        with observe_rpc_client(subject) as seen:
            headers = {**(seen.headers or {}), STREAM_HEADER: "1"}
            await nc.publish(
                ns_subject(subject, namespace),
                payload.model_dump_json().encode(),
                reply=inbox,
                headers=headers,
            )
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise TimeoutError
                if idle_timeout is not None and idle_timeout < remaining:
                    try:
                        msg = await sub.next_msg(timeout=idle_timeout)
                    except TimeoutError:
                        raise RpcTimeoutError(
                            f"{subject} sent nothing for {idle_timeout:g} s"
                        ) from None
                else:
                    msg = await sub.next_msg(timeout=remaining)
                msg_headers = msg.headers or {}
                if msg_headers.get("Status") == "503":
                    raise NoResponderError(f"no service is answering {subject}")
                seq = msg_headers.get(CHUNK_HEADER)
                if seq is None:
                    seen.outcome = msg_headers.get("R42-Error", "ok")
                    return _typed_reply(subject, msg, response_model)
                if seq != str(expected):
                    if expected > 0:
                        log.info("%s: chunk %s where %d was due; rest from the reply",
                                 subject, seq, expected)  # fmt: skip
                    expected = 0  # never again: chunks stay in order or stop
                    continue
                expected += 1
                await on_chunk(msg.data.decode(errors="replace"))
    except TimeoutError:
        raise RpcTimeoutError(f"{subject} did not answer within {timeout:g} s") from None
    except NatsError as exc:
        raise BusError(f"request to {subject} failed: {type(exc).__name__} {exc}") from exc
    finally:
        with contextlib.suppress(NatsError):
            await sub.unsubscribe()
