"""`r42 ingest`, `r42 sources`, `r42 sync-handbook`, `r42 graph analyze` end to end."""

from __future__ import annotations

import asyncio
import getpass
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from services.cli import graph as graph_cli
from services.cli import ingest as ingest_cli
from services.extractor.app import sample_handbook_dir
from shared.config import build_settings
from shared.store import Relation, Source, Store, Topic, open_store
from tests.fakes.anthropic_server import FakeAnthropic, tool_reply

from .conftest import running_extractor, sections
from .fake_github import FakeGitHub


def app() -> typer.Typer:
    root = typer.Typer(pretty_exceptions_enable=False)

    @root.callback()
    def main() -> None:
        """Test root."""

    ingest_cli.register(root)
    graph_cli.register(root)
    return root


def invoke(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Any:
    return CliRunner().invoke(app(), list(args), env=env, input=stdin, catch_exceptions=False)


def query(action: Any) -> Any:
    """Run `action(store)` on the CLI's store (the data dir's SQLite file)."""

    async def main() -> Any:
        store = await open_store(build_settings().store_url)
        try:
            return await action(store)
        finally:
            await store.close()

    return asyncio.run(main())


def handbook_copy(tmp_path: Path, *names: str) -> list[Path]:
    paths = []
    for name in names:
        paths.append(tmp_path / name)
        shutil.copy(sample_handbook_dir() / name, paths[-1])
    return paths


def test_ingest_runs_in_process_without_a_stack(tmp_path: Path) -> None:
    paths = handbook_copy(tmp_path, "rollen.md", "hr-en-verlof.md")
    result = invoke("ingest", *map(str, paths))
    assert result.exit_code == 0, result.output
    sources = query(lambda s: s.sources.list())
    assert sorted((s.name, s.status) for s in sources) == [
        ("hr-en-verlof.md", "completed"),
        ("rollen.md", "completed"),
    ]
    ids = query(lambda s: s.topics.ids())
    assert {"teamlead", "vakantiedagen", "ziekmelding"} <= ids
    again = invoke("ingest", str(paths[0]))
    assert again.exit_code == 0 and "skipped" in again.output and "already ingested" in again.output
    listing = invoke("sources", env={"COLUMNS": "200"})
    assert (
        listing.exit_code == 0 and "rollen.md" in listing.output and "completed" in listing.output
    )


def test_bad_files_are_rejected_and_nothing_is_stored(tmp_path: Path) -> None:
    files = {
        "empty.md": b"",
        "image.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00",
        "latin1.md": "Financiën".encode("latin-1"),
        "big.md": b"# Groot\n" + b"x" * 300,
        "good.md": b"# Goed\n\n## Onderdeel\nTekst.\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    result = invoke(
        "ingest", *(str(tmp_path / n) for n in files), env={"R42_MAX_UPLOAD_BYTES": "200"}
    )
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    # A file named on its own that cannot be read is refused, not skipped (an empty one too).
    assert "skipped " not in output and "empty.md is empty" in output
    assert "image.md is a binary file" in output and "the limit is 200 B" in output
    assert "latin1.md is not UTF-8" in output and "Latin-1" in output  # a warning only
    assert "nothing was ingested: 3 files refused" in output
    assert not (tmp_path / "data" / "r42.db").exists()


def test_ingest_dir_reads_every_format_names_by_path_and_lists_skipped(tmp_path: Path) -> None:
    from tests.shared.formats.documents import docx_bytes, pdf_bytes

    root = tmp_path / "handboek"
    files = {
        "index.md": b"# Handboek\n\n## Welkom\nWelkom bij ons.\n",
        "team/index.md": b"# Team\n\n## Teamlead\nDe teamlead plant.\n",
        "team/leeg.md": b"",
        "beleid/verlof.html": b"<html><body><main><h2>Verlofaanvraag</h2><p>Via HR.</p>"
        b"</main></body></html>",
        "beleid/reizen.pdf": pdf_bytes(["Reiskosten worden vergoed per kilometer."]),
        "beleid/gids.docx": docx_bytes(),
        "beleid/notities.txt": "Café-regels: opruimen.".encode("utf-16"),
        "logo.png": b"\x89PNG\r\n\x1a\n\x00",
        ".git/config": b"[core]",
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    result = invoke("ingest", str(root))
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "leeg.md is empty" in output and "logo.png: unsupported format .png" in output
    assert ".git" not in output
    sources = query(lambda s: s.sources.list())
    assert sorted(s.name for s in sources) == [
        "beleid/gids.docx", "beleid/notities.txt", "beleid/reizen.pdf", "beleid/verlof.html",
        "index.md", "team/index.md",
    ]  # fmt: skip
    assert {s.status for s in sources} == {"completed"}
    ids = query(lambda s: s.topics.ids())
    assert {"welkom", "teamlead", "verlofaanvraag", "verlof"} <= ids
    texts = query(lambda s: asyncio.gather(*(s.source_texts.get(x.id) for x in sources)))
    assert not any("%PDF" in t or "<main>" in t or "word/" in t for t in texts)


def test_ingest_exits_non_zero_when_extraction_fails(
    tmp_path: Path, fake_anthropic: FakeAnthropic, fake_llm: Any
) -> None:
    fake_anthropic.default = lambda body: tool_reply("emit_knowledge_graph", {"topics": "no"})
    (tmp_path / "a.md").write_text("# A\n\n## Deel\nTekst.\n")
    result = invoke("ingest", str(tmp_path / "a.md"))
    assert result.exit_code == 1
    assert "failed" in result.output and "emit_knowledge_graph" in " ".join(result.output.split())
    assert [s.status for s in query(lambda s: s.sources.list())] == ["failed"]


def test_sources_cancel(tmp_path: Path) -> None:
    async def seed(store: Store) -> None:
        await store.sources.create(Source(id="src-run", name="a.md", sha256="a" * 64))
        await store.sources.create(
            Source(id="src-done", name="b.md", sha256="b" * 64, status="completed")
        )

    build_settings().data_dir.mkdir(parents=True)
    query(seed)
    assert "cancelled" in invoke("sources", "cancel", "src-run").output
    assert query(lambda s: s.sources.get("src-run")).status == "cancelled"
    done = invoke("sources", "cancel", "src-done")
    assert done.exit_code == 0 and "nothing to cancel" in done.output
    missing = invoke("sources", "cancel", "src-nope")
    assert missing.exit_code == 1 and "no source 'src-nope'" in missing.output


def test_graph_analyze_previews_then_applies_on_confirmation(tmp_path: Path) -> None:
    async def seed(store: Store) -> None:
        await store.topics.upsert_many(
            [
                Topic(id="teamlead", label="Teamlead", type="role"),
                Topic(id="team-lead", label="Team lead", type="role"),
                Topic(id="verlof", label="Verlof", type="process"),
            ]
        )
        await store.relations.upsert_many(
            [Relation(source="verlof", target="team-lead", type="executed_by")]
        )

    build_settings().data_dir.mkdir(parents=True)
    query(seed)
    preview = invoke("graph", "analyze")
    assert preview.exit_code == 0 and "merge" in preview.output and "dry run" in preview.output
    assert query(lambda s: s.topics.ids()) == {"teamlead", "team-lead", "verlof"}
    declined = invoke("graph", "analyze", "--apply", stdin="n\n")
    assert declined.exit_code == 1 and "not applied" in declined.output
    assert len(query(lambda s: s.topics.ids())) == 3
    applied = invoke("graph", "analyze", "--apply", stdin="y\n")
    assert applied.exit_code == 0 and "applied" in applied.output
    assert query(lambda s: s.topics.ids()) == {"team-lead", "verlof"}
    trail = query(lambda s: s.audit.latest())
    assert [(e.action, e.allowed, e.surface) for e in trail][:2] == [
        ("graph.apply", True, "cli"), ("graph.analyze", True, "cli"),
    ]  # fmt: skip

    undone = invoke("graph", "undo")
    assert undone.exit_code == 0 and "undid" in undone.output
    assert query(lambda s: s.topics.ids()) == {"teamlead", "team-lead", "verlof"}


def test_graph_apply_chosen_actions_of_a_stored_plan(tmp_path: Path) -> None:
    async def seed(store: Store) -> None:
        await store.topics.upsert_many(
            [
                Topic(id="teamlead", label="Teamlead", type="role"),
                Topic(id="team-lead", label="Team lead", type="role"),
                Topic(id="hr-portaal", label="HR-portaal", type="concept"),
                Topic(id="hr-portal", label="HR portaal", type="concept"),
            ]
        )

    build_settings().data_dir.mkdir(parents=True)
    query(seed)
    preview = invoke("graph", "analyze")
    assert preview.exit_code == 0 and "m0" in preview.output and "m1" in preview.output
    plan_id = next(w for w in preview.output.split() if w.startswith("plan-"))
    bad = invoke("graph", "apply", "not-a-plan")
    assert bad.exit_code == 1 and "not a plan id" in bad.output
    one = invoke("graph", "apply", plan_id, "--only", "m0")
    assert one.exit_code == 0 and "1 merge(s)" in one.output, one.output
    assert len(query(lambda s: s.topics.ids())) == 3
    again = invoke("graph", "apply", plan_id)  # the graph changed since: refused, untouched
    assert again.exit_code == 1 and len(query(lambda s: s.topics.ids())) == 3


def test_sync_handbook_from_the_command_line(tmp_path: Path) -> None:
    missing = invoke("sync-handbook")
    assert missing.exit_code == 1 and "R42_HANDBOOK_OWNER" in missing.output
    with FakeGitHub() as github:
        github.files = {"docs/rollen.md": (sample_handbook_dir() / "rollen.md").read_bytes()}
        env = {
            "R42_GITHUB_API_URL": github.url,
            "R42_HANDBOOK_OWNER": github.owner,
            "R42_HANDBOOK_REPO": github.repo,
            "R42_HANDBOOK_PATH": "docs",
        }
        first = invoke("sync-handbook", env=env)
        second = invoke("sync-handbook", env=env)
    assert first.exit_code == 0 and "synced    docs/rollen.md" in first.output
    assert second.exit_code == 0 and "unchanged docs/rollen.md" in second.output
    assert "(1 GitHub request(s))" in second.output  # the tree's 304, nothing else
    teamlead = query(lambda s: s.topics.get("teamlead"))
    assert teamlead is not None and teamlead.metadata.source == "github_handbook"


@pytest.fixture
def threaded_extractor(nats_url: str, unique: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The extractor service on its own event loop thread (the CLI runs asyncio.run)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    ns, store_url = f"x{unique}", f"sqlite:///{tmp_path / 'stack.db'}"
    stop = asyncio.Event()
    started = threading.Event()

    async def serve() -> None:
        async with running_extractor(nats_url=nats_url, namespace=ns, store_url=store_url):
            started.set()
            await stop.wait()

    served = asyncio.run_coroutine_threadsafe(serve(), loop)
    assert started.wait(30) or served.result(1)
    try:
        yield {"NATS_URL": nats_url, "R42_EXTRACTOR_BUS_NAMESPACE": ns, "R42_STORE": store_url}
    finally:
        loop.call_soon_threadsafe(stop.set)
        served.result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_ingest_hands_sources_to_the_running_stack(
    tmp_path: Path, threaded_extractor: dict[str, str]
) -> None:
    (tmp_path / "gids.md").write_text(sections(3))
    result = invoke(
        "ingest", "--wait", "--timeout", "60", str(tmp_path / "gids.md"), env=threaded_extractor
    )
    assert result.exit_code == 0, result.output
    assert "3/3" in result.output

    async def check(store: Store) -> tuple[Any, set[str]]:
        return await store.sources.list(), await store.topics.ids()

    sources, ids = query_at(threaded_extractor["R42_STORE"], check)
    assert [(s.name, s.status, s.chunks_done) for s in sources] == [("gids.md", "completed", 3)]
    assert ids == {"onderwerp-0", "onderwerp-1", "onderwerp-2"}


def test_wait_on_an_already_ingested_file_returns_at_once(
    tmp_path: Path, threaded_extractor: dict[str, str]
) -> None:
    (tmp_path / "gids.md").write_text(sections(1))
    args = ("ingest", "--wait", "--timeout", "60", str(tmp_path / "gids.md"))
    assert invoke(*args, env=threaded_extractor).exit_code == 0
    started = time.monotonic()
    again = invoke(*args, env=threaded_extractor)
    assert again.exit_code == 0, again.output
    assert "skipped" in again.output and "already ingested" in again.output
    assert time.monotonic() - started < 30  # returned, not the 60 s --timeout


def query_at(url: str, action: Any) -> Any:
    async def main() -> Any:
        store = await open_store(url)
        try:
            return await action(store)
        finally:
            await store.close()

    return asyncio.run(main())


def test_ingest_through_the_stack_sends_the_file_as_an_object_like_any_uploader(
    tmp_path: Path, threaded_extractor: dict[str, str]
) -> None:
    # The CLI's own store differs from the stack's: only the object store can carry the text.
    cli_store = f"sqlite:///{tmp_path / 'cli.db'}"
    (tmp_path / "gids.md").write_text(sections(2))
    result = invoke("ingest", str(tmp_path / "gids.md"), env={**threaded_extractor,
                                                             "R42_STORE": cli_store})  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "queued gids.md as source" in result.output

    async def completed(store: Store) -> list[Source]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            sources = await store.sources.list()
            if sources and sources[0].status == "completed":
                return sources
            await asyncio.sleep(0.05)
        raise AssertionError(f"not completed: {await store.sources.list()}")

    sources = query_at(threaded_extractor["R42_STORE"], completed)
    assert [(s.name, s.chunks_done, s.who) for s in sources] == [
        ("gids.md", 2, f"cli:{getpass.getuser()}")
    ]
    assert query_at(cli_store, lambda s: s.sources.list()) == []  # the CLI wrote nothing


def test_a_refusal_over_the_bus_is_worded_in_english_from_its_code(
    threaded_extractor: dict[str, str],
) -> None:
    result = invoke("graph", "undo", "undo-nothing", env=threaded_extractor)
    assert result.exit_code == 1
    # The owner's reply carries its Dutch message and the typed code the CLI words itself.
    assert "there is no change undo-nothing to undo" in result.output, result.output
    assert "wijziging" not in result.output
