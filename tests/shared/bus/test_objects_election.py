"""Uploads into r42-sources ride out a stream's leader election instead of failing at once."""

from __future__ import annotations

from typing import Any

import pytest
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import BadRequestError

from shared.bus.objects import put_source_object
from shared.errors import BusError


class _Bucket:
    """An object bucket whose first `fails` puts time out, as during a leader election."""

    def __init__(self, fails: int, error: Exception) -> None:
        self.fails, self.error, self.puts = fails, error, 0
        self.stored: dict[str, bytes] = {}

    async def put(self, name: str, data: bytes) -> None:
        self.puts += 1
        if self.puts <= self.fails:
            raise self.error
        self.stored[name] = data


class _Connection:
    def __init__(self, bucket: _Bucket) -> None:
        self.bucket = bucket

    def jetstream(self) -> Any:
        return self

    async def object_store(self, name: str) -> _Bucket:
        assert name == "r42-sources"
        return self.bucket


async def test_a_put_during_an_election_is_repeated_until_a_leader_answers() -> None:
    bucket = _Bucket(fails=2, error=NatsTimeoutError())
    await put_source_object(_Connection(bucket), "handbook.md", b"tekst", leaderless_for=5)
    assert bucket.puts == 3 and bucket.stored == {"handbook.md": b"tekst"}


async def test_a_put_that_stays_leaderless_is_reported_after_the_window() -> None:
    bucket = _Bucket(fails=100, error=NatsTimeoutError())
    with pytest.raises(BusError, match=r"storing object 'handbook\.md' in r42-sources"):
        await put_source_object(_Connection(bucket), "handbook.md", b"x", leaderless_for=0.6)
    assert 2 <= bucket.puts <= 4


async def test_a_refusal_is_not_repeated() -> None:
    bucket = _Bucket(fails=1, error=BadRequestError(code=400, description="bad"))
    with pytest.raises(BusError, match="bad"):
        await put_source_object(_Connection(bucket), "handbook.md", b"x", leaderless_for=5)
    assert bucket.puts == 1
