"""Request/reply under rpc.*: the handler answers (never a stream's publish ack)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from shared.bus import ns_subject, request, serve_rpc
from shared.errors import BadInputError, BusError, ConfigError, PermanentError, TransientError
from tests.shared.bus.conftest import WAIT, BusHarness


class Ask(BaseModel):
    question: str
    mode: str = "ok"


class Answer(BaseModel):
    text: str
    responder: str


def responder(name: str):
    async def answer(req: Ask) -> Answer:
        if req.mode == "bad":
            raise BadInputError("question is empty")
        if req.mode == "busy":
            raise TransientError("model overloaded")
        if req.mode == "bug":
            raise KeyError("secret internals")
        return Answer(text=f"re: {req.question}", responder=name)

    return answer


async def test_request_gets_the_handlers_reply(bus: BusHarness) -> None:
    await bus.start()
    await serve_rpc(
        bus.broker, "rpc.x", request_model=Ask, handler=responder("a"), namespace=bus.ns
    )  # the event streams exist too: none of them may answer rpc.x
    reply = await request(
        bus.broker, "rpc.x", Ask(question="hi"), response_model=Answer, namespace=bus.ns
    )
    assert reply == Answer(text="re: hi", responder="a")


async def test_errors_come_back_as_our_error_classes(bus: BusHarness) -> None:
    await bus.start()
    await serve_rpc(
        bus.broker, "rpc.x", request_model=Ask, handler=responder("a"), namespace=bus.ns
    )

    async def ask(mode: str) -> Answer:
        return await request(
            bus.broker, "rpc.x", Ask(question="q", mode=mode), response_model=Answer,
            namespace=bus.ns,
        )  # fmt: skip

    with pytest.raises(BadInputError, match="question is empty"):
        await ask("bad")
    with pytest.raises(TransientError, match="model overloaded"):
        await ask("busy")
    with pytest.raises(PermanentError, match=r"internal error in rpc\.x") as caught:
        await ask("bug")
    assert "secret internals" not in str(caught.value)


async def test_invalid_request_payload_is_a_bad_input_reply(bus: BusHarness) -> None:
    await bus.start()
    await serve_rpc(
        bus.broker, "rpc.x", request_model=Ask, handler=responder("a"), namespace=bus.ns
    )

    class Other(BaseModel):
        nope: int

    with pytest.raises(BadInputError, match="question"):
        await request(bus.broker, "rpc.x", Other(nope=1), response_model=Answer, namespace=bus.ns)


async def test_replicas_in_one_queue_group_answer_once(bus: BusHarness) -> None:
    second = bus.new_broker("replica")
    await bus.start()
    await second.start()
    await serve_rpc(
        bus.broker, "rpc.x", request_model=Ask, handler=responder("a"), namespace=bus.ns
    )
    await serve_rpc(second, "rpc.x", request_model=Ask, handler=responder("b"), namespace=bus.ns)
    # Each request gets exactly one reply (a queue group, not a fan-out); both may serve.
    answers = [
        await request(bus.broker, "rpc.x", Ask(question=str(i)), response_model=Answer,
                      namespace=bus.ns)
        for i in range(20)
    ]  # fmt: skip
    assert [a.text for a in answers] == [f"re: {i}" for i in range(20)]
    assert {a.responder for a in answers} <= {"a", "b"}


async def test_no_responder_and_unconnected_broker_raise_bus_errors(bus: BusHarness) -> None:
    with pytest.raises(BusError, match="not connected"):
        await request(bus.broker, "rpc.x", Ask(question="q"), response_model=Answer)
    await bus.start()
    with pytest.raises(BusError, match=r"no service is answering rpc\.nobody"):
        await request(
            bus.broker, "rpc.nobody", Ask(question="q"), response_model=Answer, namespace=bus.ns
        )


async def test_a_stream_capturing_a_request_subject_is_detected(bus: BusHarness) -> None:
    # Control for the design rule: a stream on a request subject answers with its publish
    # ack; request() refuses to mistake that for a reply.
    await bus.start()
    js = await bus.raw()
    rogue = f"ROGUE_{bus.ns}"
    await js.add_stream(name=rogue, subjects=[ns_subject("rpc.rogue", bus.ns)])
    try:
        with pytest.raises(PermanentError, match="reply is not a Answer"):
            await request(
                bus.broker, "rpc.rogue", Ask(question="q"), response_model=Answer,
                namespace=bus.ns,
            )  # fmt: skip
    finally:
        await js.delete_stream(rogue)


@pytest.mark.parametrize("subject", ["kb.updated", "rpc.", "rpc.*", "rpc.>", "rpc", "rpc..x"])
async def test_rpc_subjects_must_be_concrete_rpc_subjects(subject: str, bus: BusHarness) -> None:
    await bus.start()
    with pytest.raises(ConfigError):
        await serve_rpc(bus.broker, subject, request_model=Ask, handler=responder("a"))
    with pytest.raises(ConfigError):
        await request(bus.broker, subject, Ask(question="q"), response_model=Answer)


async def test_serving_needs_a_connected_broker(bus: BusHarness) -> None:
    with pytest.raises(BusError, match="not connected"):
        await serve_rpc(bus.broker, "rpc.x", request_model=Ask, handler=responder("a"))


async def test_slow_requests_do_not_block_others_and_stop_drains(bus: BusHarness) -> None:
    release, slow_started = asyncio.Event(), asyncio.Event()

    async def answer(req: Ask) -> Answer:
        if req.question == "slow":
            slow_started.set()
            await release.wait()
        return Answer(text=req.question, responder="a")

    await bus.start()
    server = await serve_rpc(
        bus.broker, "rpc.x", request_model=Ask, handler=answer, namespace=bus.ns
    )

    async def ask(q: str) -> Answer:
        return await request(
            bus.broker, "rpc.x", Ask(question=q), response_model=Answer, namespace=bus.ns
        )

    slow = asyncio.create_task(ask("slow"))
    await asyncio.wait_for(slow_started.wait(), WAIT)
    assert (await ask("fast")).text == "fast"  # answered while "slow" is still running
    stopping = asyncio.create_task(server.stop())
    release.set()
    assert (await slow).text == "slow"  # in-flight request finished during stop
    await stopping
    with pytest.raises(BusError, match="no service is answering"):
        await ask("after stop")
