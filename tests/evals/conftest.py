"""Fixtures for the eval tests: one offline run of every suite, and a copy of the golden data."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from evals.golden import EVALS_DIR
from evals.models import RunResult
from evals.runner import SUITES, run_evals
from shared.config import build_settings


@pytest.fixture(scope="session")
def offline_run() -> RunResult:
    """Every suite, in-process, against the offline provider (what CI and `make eval` run)."""
    return asyncio.run(run_evals(settings=build_settings(llm="offline")))


@pytest.fixture
def golden_copy(tmp_path: Path) -> Path:
    """A writable copy of every suite's golden data and thresholds (to break on purpose)."""
    root = tmp_path / "golden"
    for name in SUITES:
        shutil.copytree(EVALS_DIR / name, root / name)
    return root
