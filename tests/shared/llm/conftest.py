"""Every shared.llm test starts and ends with the library unconfigured."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.llm import reset_llm


@pytest.fixture(autouse=True)
def _unconfigured_llm() -> Iterator[None]:
    reset_llm()
    yield
    reset_llm()
