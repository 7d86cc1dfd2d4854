"""`r42 kb import|export|stats` against a real SQLite store, through typer's CliRunner."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from services.cli import kb, ops
from shared.store import Source, open_store

ENV = {"COLUMNS": "250"}  # wide tables: reasons are not wrapped mid-word

GOOD = {
    "topics": [
        {"id": "product-owner", "label": "Product owner", "type": "role",
         "description": "Owns the backlog.", "learning_relevance": "core",
         "relevance_locked": True, "metadata": {"source": "handbook/roles.md"}},
        {"id": "radical-transparency", "label": "Radical transparency", "type": "concept",
         "description": "", "learning_relevance": "standard", "relevance_locked": False,
         "metadata": {"prompt_version": "extract-v2", "source": "handbook/values.md"}},
        {"id": "sprint-review", "label": "Sprint review", "type": "process", "description": "Démo",
         "learning_relevance": "peripheral", "relevance_locked": False, "metadata": {}},
    ],
    "relations": [
        {"source": "radical-transparency", "target": "sprint-review", "type": "related_to"},
        {"source": "sprint-review", "target": "product-owner", "type": "executed_by",
         "description": "PO leads it"},
    ],
}  # fmt: skip


def cli() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False, no_args_is_help=True)

    @app.callback()
    def root() -> None:
        """Test root."""

    kb.register(app)
    ops.register(app)
    return app


def run(*args: str) -> Result:
    return CliRunner().invoke(cli(), list(args), env=ENV)


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'kb.db'}"


def export(url: str) -> dict[str, Any]:
    result = run("kb", "export", "--store", url)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_import_then_export_round_trips_exactly(tmp_path: Path, url: str) -> None:
    result = run("kb", "import", str(write(tmp_path / "a.json", GOOD)), "--store", url)
    assert result.exit_code == 0, result.output
    assert "imported 3 topic(s) and 2 relation(s)" in result.stdout
    out = tmp_path / "b.json"
    result = run("kb", "export", "--out", str(out), "--store", url)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text()) == GOOD
    assert export(url) == GOOD  # stdout and --out agree
    # Into a fresh store and out again: byte-identical files.
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert run("kb", "import", str(out), "--store", other).exit_code == 0
    again = tmp_path / "c.json"
    assert run("kb", "export", "-o", str(again), "--store", other).exit_code == 0
    assert again.read_bytes() == out.read_bytes()
    # Importing the export into the same store changes nothing.
    assert run("kb", "import", str(out), "--store", url).exit_code == 0
    assert export(url) == GOOD


BAD_ROWS = [
    ("id not kebab-case", {"topics": [{"id": "Product_Owner", "label": "PO", "type": "role"}]},
     "topics", 0, "Product_Owner", "kebab-case"),
    ("unknown topic type", {"topics": [{"id": "po", "label": "PO", "type": "person"}]},
     "topics", 0, "po", "'concept', 'role' or 'process'"),
    ("unknown relevance", {"topics": [{"id": "po", "label": "PO", "type": "role",
                                        "learning_relevance": "vital"}]},
     "topics", 0, "po", "learning_relevance"),
    ("unknown field", {"topics": [{"id": "po", "label": "PO", "type": "role", "owner": "x"}]},
     "topics", 0, "po", "owner: Extra inputs are not permitted"),
    ("row not an object", {"topics": ["po"]}, "topics", 0, "?", "not a JSON object"),
    ("duplicate id", {"topics": [{"id": "po", "label": "PO", "type": "role"},
                                 {"id": "po", "label": "Again", "type": "role"}]},
     "topics", 1, "po", "duplicate id (first at row 0)"),
    ("missing endpoint", {"relations": [{"source": "existing", "target": "ghost",
                                         "type": "related_to"}]},
     "relations", 0, "existing -related_to-> ghost",
     "endpoint not found in the file or the store: ghost"),
    ("self relation", {"relations": [{"source": "existing", "target": "existing",
                                      "type": "part_of"}]},
     "relations", 0, "existing -part_of-> existing", "points at itself"),
    ("legacy relation type", {"relations": [{"source": "existing", "target": "existing2",
                                             "type": "executes"}]},
     "relations", 0, "existing -executes-> existing2",
     "use 'executed_by' with source and target swapped"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "doc", "section", "row", "ident", "reason"), BAD_ROWS, ids=[c[0] for c in BAD_ROWS]
)
def test_invalid_rows_are_reported_and_nothing_is_written(
    tmp_path: Path, url: str, case: str, doc: dict[str, Any], section: str, row: int,
    ident: str, reason: str,
) -> None:  # fmt: skip
    seed = {"topics": [{"id": "existing", "label": "E", "type": "concept"},
                       {"id": "existing2", "label": "E2", "type": "concept"}]}  # fmt: skip
    assert (
        run("kb", "import", str(write(tmp_path / "seed.json", seed)), "--store", url).exit_code == 0
    )
    before = export(url)
    # A valid row next to the invalid ones must not be written either.
    valid = {"id": "valid-one", "label": "V", "type": "concept"}
    doc = {**doc, "topics": [*doc.get("topics", []), valid]}
    result = run("kb", "import", str(write(tmp_path / "bad.json", doc)), "--store", url)
    assert result.exit_code == 1, case
    assert "Traceback" not in result.output
    line = next(
        ln for ln in result.stderr.splitlines() if f" {section} " in ln and reason[:30] in ln
    )
    assert f" {row} " in line and ident in line
    assert "nothing was imported" in result.stderr
    assert export(url) == before


def test_skip_invalid_imports_the_valid_rows(tmp_path: Path, url: str) -> None:
    doc = {
        "topics": [*GOOD["topics"], {"id": "Bad Id", "label": "x", "type": "concept"}],
        "relations": [*GOOD["relations"],
                      {"source": "bad-id", "target": "product-owner", "type": "depends_on"}],
    }  # fmt: skip
    result = run(
        "kb", "import", str(write(tmp_path / "a.json", doc)), "--skip-invalid", "--store", url
    )
    assert result.exit_code == 0, result.output
    assert "Skipped 2 invalid row(s)" in result.stderr
    assert "Bad Id" in result.stderr and "bad-id" in result.stderr
    assert "imported 3 topic(s) and 2 relation(s)" in result.stdout
    assert export(url) == GOOD


def test_relation_may_point_at_a_topic_already_in_the_store(tmp_path: Path, url: str) -> None:
    assert run("kb", "import", str(write(tmp_path / "a.json", GOOD)), "--store", url).exit_code == 0
    doc = {
        "topics": [{"id": "okr", "label": "OKR", "type": "concept"}],
        "relations": [{"source": "okr", "target": "product-owner", "type": "depends_on"}],
    }
    result = run("kb", "import", str(write(tmp_path / "b.json", doc)), "--store", url)
    assert result.exit_code == 0, result.output
    assert len(export(url)["relations"]) == 3


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"topics": [', "is not valid JSON (line 1, column 13"),
        ("\xff\xfe", "is not"),
        ('["topics"]', "must be a JSON object"),
        ('{"nodes": []}', "unknown top-level keys: nodes"),
        ('{"topics": {"id": "x"}}', '"topics" must be a list'),
        ("{}", 'neither "topics" nor "relations"'),
    ],
)
def test_unreadable_files_are_rejected_cleanly(
    tmp_path: Path, url: str, content: str, message: str
) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(content.encode("latin-1"))
    result = run("kb", "import", str(path), "--store", url)
    assert result.exit_code == 1
    assert message in result.stderr and result.stderr.startswith("error: ")
    assert "Traceback" not in result.output


def test_missing_file(tmp_path: Path, url: str) -> None:
    result = run("kb", "import", str(tmp_path / "nope.json"), "--store", url)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: file not found: {tmp_path / 'nope.json'}"


def test_corrupt_store_is_a_clean_error(tmp_path: Path) -> None:
    db = tmp_path / "broken.db"
    db.write_bytes(os.urandom(4096))
    result = run("kb", "stats", "--store", f"sqlite:///{db}")
    assert result.exit_code == 1
    assert "cannot be read" in result.stderr and str(db) in result.stderr
    assert "Traceback" not in result.output


def test_bad_store_url_is_a_clean_error() -> None:
    result = run("kb", "export", "--store", "postgres://u:pw@db/x")
    assert result.exit_code == 1
    assert "unsupported store URL" in result.stderr and "pw" not in result.stderr


def test_export_into_missing_directory(tmp_path: Path, url: str) -> None:
    result = run("kb", "export", "--out", str(tmp_path / "no" / "x.json"), "--store", url)
    assert result.exit_code == 1 and "does not exist" in result.stderr


def test_default_store_is_in_the_data_dir(tmp_path: Path) -> None:
    # tests/conftest.py points R42_DATA_DIR at tmp_path/data.
    result = run("kb", "import", str(write(tmp_path / "a.json", GOOD)))
    assert result.exit_code == 0, result.output
    assert (Path(os.environ["R42_DATA_DIR"]) / "r42.db").is_file()
    assert json.loads(run("kb", "export").stdout) == GOOD


def test_stats(tmp_path: Path, url: str) -> None:
    assert run("kb", "import", str(write(tmp_path / "a.json", GOOD)), "--store", url).exit_code == 0

    async def add_sources() -> None:
        store = await open_store(url)
        try:
            for i, status in enumerate(["pending", "completed", "completed"]):
                await store.sources.create(Source(id=f"s{i}", name="n", sha256="f" * 64))
                await store.sources.set_status(f"s{i}", status)  # type: ignore[arg-type]
        finally:
            await store.close()

    asyncio.run(add_sources())
    result = run("kb", "stats", "--json", "--store", url)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "topics": {"total": 3, "by_type": {"role": 1, "concept": 1, "process": 1},
                   "by_relevance": {"core": 1, "standard": 1, "peripheral": 1}},
        "relations_by_type": {"related_to": 1, "executed_by": 1},
        "sources_by_status": {"pending": 1, "completed": 2},
    }  # fmt: skip
    table = run("kb", "stats", "--store", url)
    assert table.exit_code == 0
    assert "topics: 3" in table.stdout
    for title in ("Topics by type", "Relations by type", "Sources by status"):
        assert title in table.stdout
    assert any("completed" in ln and "2" in ln for ln in table.stdout.splitlines())


def test_root_app_registers_kb_and_ops() -> None:
    from services.cli.main import build_app

    result = CliRunner().invoke(build_app(), ["kb", "--help"], env=ENV)
    assert result.exit_code == 0 and "import" in result.stdout and "stats" in result.stdout
    result = CliRunner().invoke(build_app(), ["ops", "calls", "--help"], env=ENV)
    assert result.exit_code == 0 and "--last" in result.stdout
