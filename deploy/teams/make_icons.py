"""Draw the icons Teams requires: color.png (192×192), outline.png (32×32, white on transparent)."""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

ACCENT = (31, 78, 121, 255)
WHITE = (255, 255, 255, 255)


def _mark(
    draw: ImageDraw.ImageDraw, size: int, colour: tuple[int, int, int, int], width: int
) -> None:
    """An 'R' with a small '42' tail, drawn from lines so it needs no font."""
    s = size / 32
    draw.line([(9 * s, 7 * s), (9 * s, 25 * s)], fill=colour, width=width)
    draw.arc([(9 * s, 7 * s), (21 * s, 17 * s)], start=270, end=90, fill=colour, width=width)
    draw.line([(9 * s, 7 * s), (15 * s, 7 * s)], fill=colour, width=width)
    draw.line([(9 * s, 17 * s), (15 * s, 17 * s)], fill=colour, width=width)
    draw.line([(14 * s, 17 * s), (22 * s, 25 * s)], fill=colour, width=width)


def color_icon() -> Image.Image:
    """The full-colour icon: the mark in white on the accent colour."""
    img = Image.new("RGBA", (192, 192), ACCENT)
    _mark(ImageDraw.Draw(img), 192, WHITE, 14)
    return img


def outline_icon() -> Image.Image:
    """The outline icon: white only, transparent background."""
    img = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    _mark(ImageDraw.Draw(img), 32, WHITE, 2)
    return img


def main(out: Path) -> None:
    """Write both icons into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    color_icon().save(out / "color.png")
    outline_icon().save(out / "outline.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
