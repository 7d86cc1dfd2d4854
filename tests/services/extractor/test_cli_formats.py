"""`r42 ingest DIR` reads every format with the rules of every other entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared.formats.documents import RAW_SYNTAX, Case, all_cases

from .test_cli import invoke, query


@pytest.mark.parametrize("case", all_cases(), ids=lambda c: c.name)
def test_ingest_dir_in_any_format(tmp_path: Path, case: Case) -> None:
    root = tmp_path / "handboek"
    (root / "beleid" / "diep").mkdir(parents=True)
    (root / "index.md").write_bytes(b"# Handboek\n\n## Welkom\nWelkom bij ons.\n")
    (root / "beleid" / "diep" / case.name).write_bytes(case.data)
    result = invoke("ingest", str(root))
    output = " ".join(result.output.split())
    name = f"beleid/diep/{case.name}"
    if case.name.endswith(".pdf") and case.error:
        # A file R42 should read but cannot: the folder is refused whole, nothing stored.
        assert result.exit_code == 2 and case.error in output, output
        assert "nothing was ingested: 1 file refused" in output
        assert not (tmp_path / "data" / "r42.db").exists()
        return
    assert result.exit_code == 0, output
    sources = {s.name: s for s in query(lambda s: s.sources.list())}
    if case.error:  # a format R42 does not read: skipped with the one message
        assert set(sources) == {"index.md"}
        assert f"skipped {root / name}: {case.error} .rtf; supported: .md" in output, output
        return
    assert set(sources) == {"index.md", name} and sources[name].status == "completed", output
    text = query(lambda s: s.source_texts.get(sources[name].id))
    assert case.text in text and not any(raw in text for raw in RAW_SYNTAX)
    topics = query(lambda s: s.topics.list())
    described = " ".join(f"{t.label} {t.description}" for t in topics)
    assert case.text in described and not any(raw in described for raw in RAW_SYNTAX)
    assert not case.heading or case.heading in {t.id for t in topics}
