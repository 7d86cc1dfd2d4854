"""The infographic as a PNG (Pillow, built-in font): same input → identical bytes.

Layout, top to bottom on a 1080 px wide canvas: a band in the theme's accent colour with
the headline and tagline, the stats as cards (three per row, two for four stats), the
numbered steps with numbered discs, the quote behind an accent bar and a footer line.
Every text is wrapped to its box by measured width; the height follows the content.
The picture is measured first and drawn second, so nothing is ever clipped.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from services.content.glyphs import draw_line, measure
from services.content.models import PALETTE, Infographic

WIDTH = 1080
MARGIN = 64
GAP = 24
_Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@lru_cache(maxsize=16)
def _font(size: int) -> _Font:
    # Pillow >= 10.1 ships a scalable default font, so no font file is needed.
    return ImageFont.load_default(size=size)


def _line_height(size: int) -> int:
    return int(size * 1.3)


def wrap_text(text: str, font: _Font, width: float) -> list[str]:
    """Greedy word wrap by drawn width; words wider than the box are split by character."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        while measure(font, word) > width and len(word) > 1:
            cut = len(word) - 1
            while cut > 1 and measure(font, word[:cut]) > width:
                cut -= 1
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:cut])
            word = word[cut:]
        candidate = f"{current} {word}" if current else word
        if measure(font, candidate) <= width:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines or [""]


class _Painter:
    """Draws when given an ImageDraw; otherwise only measures (the same code does both)."""

    def __init__(self, draw: ImageDraw.ImageDraw | None, colours: Mapping[str, str]) -> None:
        self.draw = draw
        self.c = colours

    def text(self, x: float, y: float, text: str, *, size: int, width: float, fill: str) -> int:
        font = _font(size)
        lines = wrap_text(text, font, width)
        step = _line_height(size)
        if self.draw is not None:
            for i, line in enumerate(lines):
                draw_line(self.draw, (x, y + i * step), line, font=font, fill=fill)
        return len(lines) * step

    def rect(self, box: tuple[float, float, float, float], fill: str, radius: int = 0) -> None:
        if self.draw is not None:
            self.draw.rounded_rectangle(box, radius=radius, fill=fill)

    def disc(self, cx: float, cy: float, r: float, label: str, size: int) -> None:
        if self.draw is not None:
            self.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=self.c["accent"])
            self.draw.text((cx, cy), label, font=_font(size), fill=self.c["card"], anchor="mm")


def _stats(p: _Painter, info: Infographic, y: int) -> int:
    cols = 2 if len(info.stats) == 4 else 3
    inner = WIDTH - 2 * MARGIN
    card_w = (inner - (cols - 1) * GAP) / cols
    pad = 24
    for row_start in range(0, len(info.stats), cols):
        row = info.stats[row_start : row_start + cols]
        measure = _Painter(None, p.c)
        heights = [
            measure.text(0, 0, s.value, size=56, width=card_w - 2 * pad, fill="")
            + 8
            + measure.text(0, 0, s.label, size=26, width=card_w - 2 * pad, fill="")
            for s in row
        ]
        card_h = max(heights) + 2 * pad
        for i, stat in enumerate(row):
            x = MARGIN + i * (card_w + GAP)
            p.rect((x, y, x + card_w, y + card_h), p.c["card"], radius=18)
            used = p.text(x + pad, y + pad, stat.value, size=56, width=card_w - 2 * pad,
                          fill=p.c["accent"])  # fmt: skip
            p.text(x + pad, y + pad + used + 8, stat.label, size=26, width=card_w - 2 * pad,
                   fill=p.c["muted"])  # fmt: skip
        y += int(card_h) + GAP
    return y


def _steps(p: _Painter, info: Infographic, y: int) -> int:
    y += p.text(MARGIN, y, "Zo pak je het aan", size=38, width=WIDTH - 2 * MARGIN,
                fill=p.c["ink"]) + 16  # fmt: skip
    radius = 26
    text_x = MARGIN + 2 * radius + 24
    for step in info.steps:
        used = p.text(text_x, y + 6, step.text, size=30, width=WIDTH - MARGIN - text_x,
                      fill=p.c["ink"])  # fmt: skip
        p.disc(MARGIN + radius, y + radius, radius, str(step.number), 28)
        y += max(used + 6, 2 * radius) + 20
    return y


def _layout(p: _Painter, info: Infographic, footer: str | None) -> int:
    inner = WIDTH - 2 * MARGIN
    measure = _Painter(None, p.c)
    band_h = 56 + measure.text(0, 0, info.headline, size=64, width=inner, fill="")
    band_h += 16 + measure.text(0, 0, info.tagline, size=34, width=inner, fill="") + 56
    p.rect((0, 0, WIDTH, band_h), p.c["accent"])
    used = p.text(MARGIN, 56, info.headline, size=64, width=inner, fill=p.c["card"])
    p.text(MARGIN, 56 + used + 16, info.tagline, size=34, width=inner, fill=p.c["bg"])
    y = _stats(p, info, band_h + 48) + 24
    y = _steps(p, info, y) + 24
    quote_h = measure.text(0, 0, f"“{info.quote}”", size=32, width=inner - 40, fill="")
    p.rect((MARGIN, y, MARGIN + 8, y + quote_h), p.c["accent"], radius=4)
    p.text(MARGIN + 32, y, f"“{info.quote}”", size=32, width=inner - 40, fill=p.c["ink"])
    y += quote_h + 48
    if footer:
        y += p.text(MARGIN, y, footer, size=22, width=inner, fill=p.c["muted"]) + 32
    return y


def render_infographic_png(
    infographic: Infographic | Mapping[str, Any], *, footer: str | None = None
) -> bytes:
    """Render an infographic (model or its dict) as PNG bytes; deterministic for equal input."""
    info = (
        infographic
        if isinstance(infographic, Infographic)
        else Infographic.model_validate(
            {k: v for k, v in infographic.items() if k not in ("meta", "image")}
        )
    )
    colours = PALETTE[info.theme]
    height = _layout(_Painter(None, colours), info, footer)
    image = Image.new("RGB", (WIDTH, height), colours["bg"])
    _layout(_Painter(ImageDraw.Draw(image), colours), info, footer)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False, compress_level=6)
    return out.getvalue()
