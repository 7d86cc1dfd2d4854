"""Stream definitions: validated subjects (never rpc.*), namespacing, idempotent ensure_streams."""

from __future__ import annotations

import dataclasses

import pytest
from nats.js.api import DiscardPolicy, StorageType
from nats.js.errors import NotFoundError

from shared.bus import (
    DUPLICATE_WINDOW_S,
    REGISTRY,
    STREAMS,
    StreamSpec,
    ensure_streams,
    jetstream,
    ns_stream,
    ns_subject,
    stream_for_subject,
    subjects_overlap,
)
from shared.bus.subjects import strip_namespace, validate_namespace
from shared.errors import BadInputError, ConfigError
from tests.shared.bus.conftest import BusHarness


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("rpc.>", ">", True),
        ("rpc.>", "*.chat", True),
        ("rpc.>", "*.>", True),
        ("rpc.>", "rpc.r42.chat", True),
        ("rpc.>", "rpc", False),
        ("rpc.>", "*", False),
        ("rpc.>", "source.>", False),
        ("source.*", "source.uploaded", True),
        ("source.*", "source.a.b", False),
        ("a.*.c", "a.b.*", True),
        ("a.b", "a.b.c", False),
    ],
)
def test_subjects_overlap(a: str, b: str, overlap: bool) -> None:
    assert subjects_overlap(a, b) is overlap
    assert subjects_overlap(b, a) is overlap


@pytest.mark.parametrize("subject", [">", "rpc.>", "rpc.r42.chat", "*.chat", "*.>", "*.*"])
def test_stream_spec_refuses_subjects_that_capture_rpc(subject: str) -> None:
    with pytest.raises(ConfigError, match="request/reply"):
        StreamSpec("BAD", (subject,))


@pytest.mark.parametrize("subject", ["", "a..b", "a.>.b", "a b", "a.b>"])
def test_stream_spec_refuses_malformed_subjects(subject: str) -> None:
    with pytest.raises(BadInputError):
        StreamSpec("BAD", (subject,))


def test_stream_definitions_cover_every_subject_with_sane_limits() -> None:
    for subject in [*REGISTRY, "failed.kb.updated"]:
        assert stream_for_subject(subject) in STREAMS
    assert {s.name for s in STREAMS} == {
        "SOURCES",
        "CHUNKS",
        "KB",
        "CONTENT",
        "QUIZ",
        "LLM",
        "FAILED",
    }
    for spec in STREAMS:
        cfg = spec.config()
        assert cfg.storage is StorageType.FILE and cfg.discard is DiscardPolicy.OLD
        assert cfg.duplicate_window == DUPLICATE_WINDOW_S == 120.0
        assert cfg.max_age and cfg.max_bytes and cfg.max_msg_size and cfg.max_msg_size > 0
    with pytest.raises(BadInputError, match="no stream captures"):
        stream_for_subject("rpc.r42.chat")


def test_namespaces_prefix_subjects_and_suffix_streams() -> None:
    cfg = STREAMS[0].config(namespace="t42")
    assert cfg.name == "SOURCES_t42" and cfg.subjects == ["t42.source.>"]
    assert ns_subject("kb.updated", "t42") == "t42.kb.updated"
    assert strip_namespace("t42.kb.updated", "t42") == "kb.updated"
    assert ns_stream("KB") == "KB" and ns_subject("kb.updated") == "kb.updated"
    for bad in ("a.b", "a*", ">", "x" * 33, "rpc", "failed"):
        with pytest.raises(ConfigError):
            validate_namespace(bad)


async def test_ensure_streams_is_idempotent_and_updates_drift(bus: BusHarness) -> None:
    await bus.broker.connect()
    js = jetstream(bus.broker)
    first = await ensure_streams(js, namespace=bus.ns)
    assert first == {bus.stream(s.name): "created" for s in STREAMS}
    assert await ensure_streams(js, namespace=bus.ns) == {
        bus.stream(s.name): "unchanged" for s in STREAMS
    }
    info = await js.stream_info(bus.stream("KB"))
    assert info.config.subjects == [f"{bus.ns}.kb.>"]
    assert info.config.duplicate_window == DUPLICATE_WINDOW_S

    kb = next(s for s in STREAMS if s.name == "KB")
    changed = [dataclasses.replace(kb, max_age_s=kb.max_age_s / 2)] + [
        s for s in STREAMS if s is not kb
    ]
    result = await ensure_streams(js, namespace=bus.ns, streams=changed)
    assert result[bus.stream("KB")] == "updated"
    assert [v for k, v in result.items() if k != bus.stream("KB")] == ["unchanged"] * 6
    assert (await js.stream_info(bus.stream("KB"))).config.max_age == pytest.approx(
        kb.max_age_s / 2
    )


async def test_ensure_streams_reports_a_subject_owned_by_another_stream(bus: BusHarness) -> None:
    await bus.broker.connect()
    js = jetstream(bus.broker)
    await ensure_streams(js, namespace=bus.ns)
    squatter = StreamSpec("SQUAT", ("kb.updated",))
    with pytest.raises(ConfigError, match="SQUAT_"):
        await ensure_streams(js, namespace=bus.ns, streams=[squatter])
    with pytest.raises(NotFoundError):
        await js.stream_info(bus.stream("SQUAT"))


async def test_no_stream_on_the_server_captures_rpc_subjects(bus: BusHarness) -> None:
    await bus.start()
    js = await bus.raw()
    # The server itself says no stream listens on this namespace's request subjects.
    for subject in ("rpc.r42.chat", "rpc.x"):
        with pytest.raises(NotFoundError):
            await js.find_stream_name_by_subject(ns_subject(subject, bus.ns))
    # Control: an event subject of the same namespace is captured.
    assert await js.find_stream_name_by_subject(ns_subject("kb.updated", bus.ns)) == bus.stream(
        "KB"
    )
