"""docs/asyncapi.yaml is generated from the event models and must be up to date."""

from __future__ import annotations

from pathlib import Path

import yaml

from shared.bus import REGISTRY
from shared.bus.asyncapi import main, render_asyncapi

DOC = Path(__file__).resolve().parents[3] / "docs" / "asyncapi.yaml"


def test_checked_in_asyncapi_is_up_to_date() -> None:
    fresh = render_asyncapi()
    assert DOC.exists(), "docs/asyncapi.yaml is missing: run make docs"
    assert DOC.read_text(encoding="utf-8") == fresh, "docs/asyncapi.yaml is stale: run make docs"


def test_asyncapi_declares_every_subject_with_its_model() -> None:
    doc = yaml.safe_load(render_asyncapi())
    assert doc["asyncapi"].startswith("3.")
    addresses = {c["address"] for c in doc["channels"].values()}
    assert addresses == {*REGISTRY, "failed.>"}
    for subject, model in REGISTRY.items():
        assert f"{subject}:publish" in doc["operations"]
        assert doc["operations"][f"{subject}:consume"]["action"] == "receive"
        schema = doc["components"]["schemas"][model.__name__]
        assert {"event_id", "occurred_at", "schema_version", "correlation_id", "actor"} <= set(
            schema["properties"]
        )
    assert render_asyncapi() == render_asyncapi()  # deterministic


def test_cli_writes_the_document(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "asyncapi.yaml"
    assert main(["--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == render_asyncapi()
