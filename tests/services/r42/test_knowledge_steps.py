"""Updates run in steps beside the turns: Python slices on the loop, numpy passes in a thread."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from services.r42.knowledge import sliced
from shared.kb.steps import Steps, run_steps


def _steps(log: list[int], slices: int) -> Steps[int]:
    for _ in range(slices):
        time.sleep(0.001)  # a 1 ms Python slice
        log.append(threading.get_ident())
        yield None
    worker: int = yield threading.get_ident  # a numpy pass: any thread may run it
    return worker


async def _beside_a_ticker(log: list[int], *, offload: bool) -> tuple[int, int]:
    """Run 40 ms of slices beside a task that ticks whenever it runs: (worker, ticks meanwhile)."""
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0)

    other = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    started = time.perf_counter()
    worker = await sliced(_steps(log, 40), slice_s=0.004, offload=offload)
    other.cancel()
    return worker, sum(started < tick for tick in ticks)


async def test_slices_let_other_tasks_in_and_passes_leave_the_loop() -> None:
    log: list[int] = []
    worker, ticks = await _beside_a_ticker(log, offload=True)
    loop_thread = threading.get_ident()
    assert worker != loop_thread and log == [loop_thread] * 40
    # 40 ms of slices, the loop let go about every 4 ms: other tasks ran in between.
    assert ticks >= 5
    assert run_steps(_steps([], 2)) == loop_thread  # run_steps: everything here


async def test_a_failing_pass_fails_the_run() -> None:
    def failing() -> Steps[None]:
        yield None
        yield lambda: 1 / 0

    with pytest.raises(ZeroDivisionError):
        await sliced(failing())


async def test_without_offload_passes_run_on_the_loop_and_slices_still_yield() -> None:
    """A small KB's update: its numpy passes stay on the loop; its slices still let tasks in."""
    worker, ticks = await _beside_a_ticker([], offload=False)
    assert worker == threading.get_ident()
    assert ticks >= 5
