"""Work done in steps, so a caller can keep an event loop answering while an index updates.

A step function is a generator. It yields `None` between short pure-Python slices (the
caller may run other work there) and yields a zero-argument callable for a numpy pass
that releases the GIL (the caller may run it in a worker thread; its result is sent back).
Pure-Python work in a worker thread would still hold the GIL against the event loop for
up to the interpreter's switch interval every time the loop lets go of it, so only
GIL-releasing work leaves the caller's thread. `run_steps` does everything in order, here.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

type Steps[T] = Generator[Callable[[], Any] | None, Any, T]


def run_steps[T](steps: Steps[T]) -> T:
    """Run a step function to its result in this thread."""
    value: Any = None
    while True:
        try:
            step = steps.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        value = None if step is None else step()


def releasing(items: list[Any] | dict[Any, Any] | set[Any], *, chunk: int = 2048) -> Steps[None]:
    """Empty a container the caller alone holds, a chunk a slice: freeing a large one at once
    (hundreds of thousands of entries) is one long call that holds the GIL."""
    if isinstance(items, list):
        while items:
            del items[-chunk:]
            yield None
        return
    pop = items.popitem if isinstance(items, dict) else items.pop
    while items:
        for _ in range(min(chunk, len(items))):
            pop()
        yield None
