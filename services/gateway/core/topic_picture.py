"""A topic's neighbourhood as a PNG (Pillow, built-in font): the topic in the middle, its
related topics on a circle, one coloured arrow per relation type. Same card → same bytes."""

from __future__ import annotations

import io
import math

from PIL import Image, ImageDraw, ImageFont

from shared.bus.topic_rpc import TopicCard

SIZE = 900
MAX_NEIGHBOURS = 16
_BG, _INK, _CENTRE = "#ffffff", "#1f2937", "#1d4ed8"
COLOURS = {"related_to": "#6b7280", "depends_on": "#b45309", "part_of": "#047857",
           "executed_by": "#7c3aed"}  # fmt: skip
TYPE_FILL = {"concept": "#e0e7ff", "role": "#fce7f3", "process": "#dcfce7"}


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _label(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _box(draw: ImageDraw.ImageDraw, centre: tuple[float, float], text: str, *, fill: str,
         outline: str, size: int) -> tuple[float, float]:  # fmt: skip
    """Draw a labelled rounded box; returns its half width and half height."""
    font = _font(size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    hw, hh = (right - left) / 2 + 12, (bottom - top) / 2 + 9
    x, y = centre
    draw.rounded_rectangle((x - hw, y - hh, x + hw, y + hh), radius=10, fill=fill,
                           outline=outline, width=2)  # fmt: skip
    draw.text((x, y), text, font=font, fill=_INK, anchor="mm")
    return hw, hh


def _edge_end(centre: tuple[float, float], towards: tuple[float, float],
              half: tuple[float, float]) -> tuple[float, float]:  # fmt: skip
    """Where the line from centre to towards leaves a box of half-size `half`."""
    dx, dy = towards[0] - centre[0], towards[1] - centre[1]
    scale = min(half[0] / abs(dx) if dx else math.inf, half[1] / abs(dy) if dy else math.inf)
    return centre[0] + dx * scale, centre[1] + dy * scale


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[float, float], end: tuple[float, float],
           colour: str) -> None:  # fmt: skip
    draw.line((start, end), fill=colour, width=3)
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    wing = [(end[0] - 14 * math.cos(angle + s), end[1] - 14 * math.sin(angle + s))
            for s in (0.4, -0.4)]  # fmt: skip
    draw.polygon([end, *wing], fill=colour)


def neighbourhood_png(card: TopicCard) -> bytes:
    """The picture of a card's topic and (up to 16 of) its relations."""
    image = Image.new("RGB", (SIZE, SIZE), _BG)
    draw = ImageDraw.Draw(image)
    middle = (SIZE / 2, SIZE / 2)
    neighbours = card.relations[:MAX_NEIGHBOURS]
    # Boxes are measured first: the circle keeps the widest inside the picture and the
    # arrows stop at the box edges; boxes are drawn over the lines.
    font = _font(18)
    halves = []
    for n in neighbours:
        left, top, right, bottom = draw.textbbox((0, 0), _label(n.label), font=font)
        halves.append(((right - left) / 2 + 12, (bottom - top) / 2 + 9))
    widest = max((h[0] for h in halves), default=0.0)
    rx, ry = min(SIZE * 0.36, SIZE / 2 - widest - 8), SIZE * 0.36
    spots: list[tuple[float, float]] = []
    for i in range(len(neighbours)):
        angle = -math.pi / 2 + 2 * math.pi * i / max(len(neighbours), 1)
        spots.append((middle[0] + rx * math.cos(angle), middle[1] + ry * math.sin(angle)))
    left, top, right, bottom = draw.textbbox((0, 0), _label(card.topic.label, 36), font=_font(26))
    centre_half = ((right - left) / 2 + 12, (bottom - top) / 2 + 9)
    for n, spot, half in zip(neighbours, spots, halves, strict=True):
        near, far = (middle, spot) if n.outgoing else (spot, middle)
        near_half, far_half = (centre_half, half) if n.outgoing else (half, centre_half)
        start = _edge_end(near, far, near_half)
        end = _edge_end(far, near, far_half)
        _arrow(draw, start, end, COLOURS.get(n.type, _INK))
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        draw.text(mid, n.type, font=_font(13), fill=COLOURS.get(n.type, _INK), anchor="mm",
                  stroke_width=3, stroke_fill=_BG)  # fmt: skip
    for n, spot in zip(neighbours, spots, strict=True):
        _box(draw, spot, _label(n.label), fill="#f9fafb", outline="#9ca3af", size=18)
    _box(draw, middle, _label(card.topic.label, 36),
         fill=TYPE_FILL.get(card.topic.type, "#eef2ff"), outline=_CENTRE, size=26)  # fmt: skip
    more = len(card.relations) - len(neighbours)
    footer = f"{card.topic.id} · {card.topic.type} · {card.topic.learning_relevance}"
    if more > 0:
        footer += f" · +{more}"
    draw.text((SIZE / 2, SIZE - 24), footer, font=_font(15), fill="#6b7280", anchor="mm")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
