"""The docs' Slack screenshots render from the gateway's real Block Kit."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from scripts.render_blocks import render, views


def test_every_main_view_renders_to_a_plausible_png(tmp_path: Path) -> None:
    built = views()
    assert set(built) == {"answer", "learn", "quiz", "approval", "home"}
    for name, blocks in built.items():
        path = tmp_path / f"{name}.png"
        # Raises on any block or element type the renderer cannot draw.
        render(blocks, path)
        assert path.stat().st_size > 5_000, name
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width == 760
            assert 120 < image.height < 4000, (name, image.height)
            # Something was drawn: not a blank page.
            assert image.convert("L").getextrema()[0] < 100, name


def test_a_block_type_it_cannot_draw_fails_loudly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rich_text"):
        render([{"type": "rich_text", "elements": []}], tmp_path / "x.png")
    with pytest.raises(ValueError, match="datepicker"):
        render([{"type": "actions", "elements": [{"type": "datepicker"}]}], tmp_path / "y.png")
