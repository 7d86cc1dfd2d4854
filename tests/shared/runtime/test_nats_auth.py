"""NATS users against a real, authenticated nats-server: each user can do its part, nothing else."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client
from nats.errors import Error as NatsError
from nats.errors import TimeoutError as NatsTimeoutError

from shared.bus import MAX_CHUNKS, ensure_streams, subscriptions_settled
from shared.errors import BadInputError
from shared.runtime import EmbeddedNatsServer
from shared.runtime.nats_auth import (
    SERVICE_GRANTS,
    SOURCES_BUCKET,
    NatsUser,
    add_client,
    all_users,
    authorization_block,
)

SERVICES = tuple(SERVICE_GRANTS)


@pytest.fixture(scope="module")
def authed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedNatsServer, Path]]:
    root = tmp_path_factory.mktemp("authed")
    users_dir = root / "users"
    add_client(users_dir, "ops-board", "reader")
    add_client(users_dir, "wiki-sync", "uploader")
    block = authorization_block(all_users(users_dir, SERVICES))
    server = EmbeddedNatsServer(root / "nats", authorization=block).start()
    yield server, users_dir
    server.stop()


class Conn:
    """A connection that records the server's permission errors."""

    def __init__(self, nc: Client, errors: list[str]) -> None:
        self.nc, self.errors = nc, errors

    async def violation(self, what: str) -> bool:
        deadline = asyncio.get_running_loop().time() + 3.0
        while asyncio.get_running_loop().time() < deadline:
            if any(what.lower() in e.lower() for e in self.errors):
                return True
            await asyncio.sleep(0.02)
        return False


@pytest.fixture
async def connect(authed: tuple[EmbeddedNatsServer, Path]) -> AsyncIterator:
    server, users_dir = authed
    opened: list[Client] = []

    async def open_as(name: str) -> Conn:
        errors: list[str] = []

        async def on_error(exc: Exception) -> None:
            errors.append(str(exc))

        nc = await nats.connect(
            server.url, nkeys_seed=str(users_dir / f"{name}.nk"), inbox_prefix=f"_INBOX_{name}",
            error_cb=on_error, allow_reconnect=False, max_reconnect_attempts=1,
        )  # fmt: skip
        opened.append(nc)
        return Conn(nc, errors)

    yield open_as
    for nc in opened:
        await nc.close()


async def test_anonymous_connect_is_refused(authed: tuple[EmbeddedNatsServer, Path]) -> None:
    server, _ = authed
    with pytest.raises((NatsError, OSError, TimeoutError)):
        await nats.connect(server.url, allow_reconnect=False, max_reconnect_attempts=1,
                           connect_timeout=2)  # fmt: skip


async def test_forged_key_is_refused(
    authed: tuple[EmbeddedNatsServer, Path], tmp_path: Path
) -> None:
    import os

    import nkeys

    server, _ = authed
    forged = tmp_path / "forged.nk"
    forged.write_bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER))
    with pytest.raises((NatsError, OSError, TimeoutError)):
        await nats.connect(server.url, nkeys_seed=str(forged), allow_reconnect=False,
                           max_reconnect_attempts=1, connect_timeout=2)  # fmt: skip


def test_seed_files_are_owner_only(authed: tuple[EmbeddedNatsServer, Path]) -> None:
    _, users_dir = authed
    seeds = list(users_dir.glob("*.nk"))
    assert len(seeds) == len(SERVICES) + 5  # runtime, cli, tail, two clients
    for seed in seeds:
        assert stat.S_IMODE(seed.stat().st_mode) == 0o600


async def test_runtime_sets_up_streams_and_services_bind(connect) -> None:
    runtime = await connect("runtime")
    await ensure_streams(runtime.nc.jetstream())
    await runtime.nc.jetstream().create_object_store(SOURCES_BUCKET)
    ext = await connect("extractor")
    js = ext.nc.jetstream()
    ack = await js.publish("source.progress", b"{}")
    assert ack.stream == "SOURCES"
    sub = await js.pull_subscribe("source.uploaded", durable="extractor-sources-t")
    await js.publish("source.uploaded", b"{}")
    [msg] = await sub.fetch(1, timeout=3)
    await msg.ack()
    assert not ext.errors


@pytest.mark.parametrize(
    ("user", "subject"),
    [("r42", "source.uploaded"), ("quiz", "kb.updated"), ("telemetry", "quiz.scored"),
     ("content", "rpc.r42.chat"), ("gateway", "kb.updated"), ("extractor", "content.ready")],
)  # fmt: skip
async def test_service_cannot_publish_what_it_does_not_own(
    connect, user: str, subject: str
) -> None:
    conn = await connect(user)
    await conn.nc.publish(subject, b"{}")
    await conn.nc.flush()
    assert await conn.violation(f'Permissions Violation for Publish to "{subject}"'), conn.errors


@pytest.mark.parametrize(
    ("user", "subject"),
    [("r42", "source.uploaded"), ("quiz", "rpc.r42.chat"), ("telemetry", "kb.updated"),
     ("extractor", "quiz.answered"), ("content", "_INBOX_gateway.>")],
)  # fmt: skip
async def test_service_cannot_subscribe_to_what_it_does_not_own(
    connect, user: str, subject: str
) -> None:
    conn = await connect(user)
    await conn.nc.subscribe(subject)
    await conn.nc.flush()
    assert await conn.violation(f'Permissions Violation for Subscription to "{subject}"'), (
        conn.errors
    )


async def test_service_cannot_touch_another_services_consumers(connect) -> None:
    conn = await connect("quiz")
    with pytest.raises((NatsError, TimeoutError)):
        await conn.nc.jetstream().pull_subscribe(
            "source.uploaded", durable="stolen", stream="SOURCES"
        )


async def test_rpc_round_trip_between_gateway_and_r42(connect) -> None:
    r42, gateway = await connect("r42"), await connect("gateway")

    async def answer(msg) -> None:
        await msg.respond(b"pong")

    await r42.nc.subscribe("rpc.r42.chat", queue="r42", cb=answer)
    await subscriptions_settled(r42.nc)
    reply = await gateway.nc.request("rpc.r42.chat", b"ping", timeout=3)
    assert reply.data == b"pong"
    assert not r42.errors and not gateway.errors


async def test_a_streamed_reply_fits_r42s_response_allowance_and_no_more(connect) -> None:
    r42, gateway = await connect("r42"), await connect("gateway")

    async def answer(msg) -> None:
        for seq in range(1, MAX_CHUNKS + 3):  # the allowance is MAX_CHUNKS chunks + the reply
            await r42.nc.publish(msg.reply, str(seq).encode())

    await r42.nc.subscribe("rpc.r42.chat", queue="r42", cb=answer)
    await subscriptions_settled(r42.nc)
    inbox = gateway.nc.new_inbox()
    sub = await gateway.nc.subscribe(inbox)
    await gateway.nc.publish("rpc.r42.chat", b"ping", reply=inbox)
    got = [int((await sub.next_msg(timeout=3)).data) for _ in range(MAX_CHUNKS + 1)]
    assert got == list(range(1, MAX_CHUNKS + 2))
    with pytest.raises(NatsTimeoutError):
        await sub.next_msg(timeout=0.5)
    assert await r42.violation("publish")


async def test_reader_sees_events_and_cannot_publish(connect) -> None:
    reader, ext = await connect("ops-board"), await connect("extractor")
    got: asyncio.Queue = asyncio.Queue()
    for root in ("source.>", "kb.>", "failed.>", "llm.>"):
        await reader.nc.subscribe(root, cb=got.put)
    await subscriptions_settled(reader.nc)
    await ext.nc.jetstream().publish("kb.updated", b"{}")
    msg = await asyncio.wait_for(got.get(), 3)
    assert msg.subject == "kb.updated"
    await reader.nc.publish("source.uploaded", b"{}")
    await reader.nc.flush()
    assert await reader.violation('Publish to "source.uploaded"')
    await reader.nc.subscribe("rpc.>")
    await reader.nc.flush()
    assert await reader.violation('Subscription to "rpc.>"')


async def test_uploader_does_exactly_its_part(connect) -> None:
    up = await connect("wiki-sync")
    js = up.nc.jetstream()
    store = await js.object_store(SOURCES_BUCKET)
    info = await store.put("handbook/intro.md", b"# Intro\n")
    assert info.size == 8
    outcomes: asyncio.Queue = asyncio.Queue()
    await up.nc.subscribe("source.completed", cb=outcomes.put)
    ack = await js.publish("source.uploaded", b"{}")
    assert ack.stream == "SOURCES"
    ext = await connect("extractor")
    await ext.nc.jetstream().publish("source.completed", b"{}")
    assert (await asyncio.wait_for(outcomes.get(), 3)).subject == "source.completed"
    assert not up.errors
    for subject in ("source.cancelled", "kb.delta.decided", "rpc.r42.chat"):
        await up.nc.publish(subject, b"{}")
    await up.nc.subscribe("kb.updated")
    await up.nc.flush()
    for subject in ("source.cancelled", "kb.delta.decided", "rpc.r42.chat"):
        assert await up.violation(f'Publish to "{subject}"'), up.errors
    assert await up.violation('Subscription to "kb.updated"')


def test_creds_refuse_bad_names_and_role_changes(tmp_path: Path) -> None:
    add_client(tmp_path, "board", "reader")
    with pytest.raises(BadInputError, match="exists with role reader"):
        add_client(tmp_path, "board", "uploader")
    for bad in ("extractor", "cli", "Bad Name", "../x"):
        with pytest.raises(BadInputError):
            add_client(tmp_path, bad, "reader")
    with pytest.raises(BadInputError):
        add_client(tmp_path, "x", "admin")  # type: ignore[arg-type]


def test_every_service_user_is_distinct(authed: tuple[EmbeddedNatsServer, Path]) -> None:
    _, users_dir = authed
    users: list[NatsUser] = all_users(users_dir, SERVICES)
    assert len({u.public_key for u in users}) == len(users)
