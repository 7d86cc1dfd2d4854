"""The CLI's first-hour manners, through the real entry point: version, broken pipes, sources."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from importlib.metadata import version

import pytest

from shared.config import build_settings
from shared.store import Source, open_store

R42 = [sys.executable, "-c", "from services.cli.main import main; main()"]
LONG_ERROR = (
    "anthropic: 529 overloaded_error: the API is temporarily overloaded, retried 5 times "
    "over 92 s; ingest the source again with r42 ingest when the provider is back"
)


def r42(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run([*R42, *args], capture_output=True, text=True, env=env, timeout=120)


def add_sources(*sources: Source) -> None:
    async def main() -> None:
        store = await open_store(build_settings().store_url)
        try:
            for source in sources:
                await store.sources.create(source)
        finally:
            await store.close()

    asyncio.run(main())


def test_version_flag_prints_the_package_version() -> None:
    for args in (["--version"], ["version"]):
        run = r42(*args)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == f"r42 {version('r42')}"


@pytest.mark.parametrize(
    "args",
    [["--help"], ["version"], ["learn", "Ouderschapsverlof"], ["sources"], ["kb", "--help"]],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(args: list[str]) -> None:
    add_sources(Source(id="src-pipe", name="a.md", sha256="a" * 64))
    # The read end is closed before the command starts: its first write meets a broken pipe.
    read, write = os.pipe()
    os.close(read)
    try:
        run = subprocess.run(
            [*R42, *args], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write)
    assert run.returncode == 141, run.stderr
    assert run.stderr == ""


def test_sources_fit_80_columns_and_show_prints_the_whole_error() -> None:
    add_sources(
        Source(id="src-0123456789abcdef", name="handboek-ouderschapsverlof-en-zorgverlof.md",
               sha256="a" * 64, status="failed", error=LONG_ERROR),
        Source(id="src-fedcba9876543210", name="rollen.md", sha256="b" * 64,
               status="completed", chunks_done=3, chunks_total=3),
    )  # fmt: skip
    run = r42("sources")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, run.stdout
    failed = [line for line in lines if "src-0123456789abcdef" in line]
    assert len(failed) == 1 and "failed" in failed[0] and failed[0].rstrip().endswith("…")
    assert any("src-fedcba9876543210" in line and "completed" in line for line in lines)
    assert "r42 sources show ID" in run.stdout
    # Nothing of the error spills onto lines of its own.
    assert not [line for line in lines if line.strip() in LONG_ERROR.split()]

    shown = r42("sources", "show", "src-0123456789abcdef")
    assert shown.returncode == 0, shown.stderr
    assert LONG_ERROR in " ".join(shown.stdout.split())
    assert "handboek-ouderschapsverlof-en-zorgverlof.md" in shown.stdout

    missing = r42("sources", "show", "src-nope")
    assert missing.returncode == 1 and "no source 'src-nope'" in missing.stderr


def test_sources_without_errors_has_no_hint() -> None:
    add_sources(Source(id="src-ok", name="rollen.md", sha256="c" * 64, status="completed"))
    run = r42("sources", columns=120)
    assert run.returncode == 0 and "src-ok" in run.stdout
    assert "sources show" not in run.stdout
