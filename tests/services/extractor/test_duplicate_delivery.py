"""A redelivery that reaches the process still extracting a source waits for that run."""

from __future__ import annotations

import asyncio

import pytest

from services.extractor.cancel import AlreadyRunningError, SourceTasks
from shared.errors import TransientError


async def test_a_duplicate_returns_only_after_the_running_work_and_says_how_it_ended() -> None:
    tasks, release = SourceTasks(), asyncio.Event()

    async def work() -> str:
        await release.wait()
        raise TransientError("the model went away")

    first = asyncio.create_task(tasks.run("src-1", work()))
    await asyncio.sleep(0)
    duplicate = asyncio.create_task(tasks.run("src-1", work()))
    await asyncio.sleep(0.05)
    # Returning now would ack the one JetStream message while the work is half done.
    assert not duplicate.done()
    release.set()
    with pytest.raises(TransientError):
        await first
    with pytest.raises(AlreadyRunningError) as caught:
        await duplicate
    assert isinstance(caught.value.failure, TransientError)
    assert tasks.running() == []
