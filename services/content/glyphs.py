"""Text drawing with Pillow's built-in font, which has no accented letters.

Pillow's scalable default font covers ASCII (and curly quotes) but not é, ë, ï, ö, … —
they would come out as boxes, and Dutch needs them ("één", "ideeën"). A letter without
a glyph is drawn as its base letter with the accent painted on top (acute, grave,
diaeresis, circumflex, tilde, cedilla); other missing characters get an ASCII stand-in.
Widths are measured on what is actually drawn, so wrapping stays exact.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from PIL import ImageDraw, ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

_MARKS = {
    "\u0301": "acute",
    "\u0300": "grave",
    "\u0308": "diaeresis",
    "\u0302": "circumflex",
    "\u0303": "tilde",
    "\u0327": "cedilla",
}
_STAND_INS = {
    "ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "€": "EUR",
    "–": "-", "—": "-", "\u00a0": " ", "×": "x", "•": "-", "°": "o",
}  # fmt: skip
_PRIVATE_USE = "\ue000"  # never a glyph: its mask is the font's "missing" box


@lru_cache(maxsize=64)
def _missing_mask(font: Font) -> bytes:
    return bytes(font.getmask(_PRIVATE_USE))


@lru_cache(maxsize=4096)
def has_glyph(font: Font, char: str) -> bool:
    """Whether the font draws this character itself (not as the missing-glyph box)."""
    if char.isspace():
        return True
    return bytes(font.getmask(char)) != _missing_mask(font)


@lru_cache(maxsize=4096)
def _plan_char(font: Font, char: str) -> tuple[str, tuple[str, ...]]:
    if has_glyph(font, char):
        return char, ()
    if char in _STAND_INS:
        return _STAND_INS[char], ()
    decomposed = unicodedata.normalize("NFD", char)
    base, marks = decomposed[0], tuple(_MARKS[m] for m in decomposed[1:] if m in _MARKS)
    if base != char and has_glyph(font, base):
        if base == "i" and marks and has_glyph(font, "ı"):
            base = "ı"  # the accent replaces the dot
        return base, marks
    folded = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
    return (folded or "?"), ()


def plan_line(font: Font, text: str) -> tuple[str, list[tuple[int, str]]]:
    """What to draw for a line, and the accents to paint: (index in the drawn text, mark)."""
    drawn: list[str] = []
    marks: list[tuple[int, str]] = []
    length = 0
    for char in text:
        base, char_marks = _plan_char(font, char)
        marks.extend((length, mark) for mark in char_marks)
        drawn.append(base)
        length += len(base)
    return "".join(drawn), marks


def measure(font: Font, text: str) -> float:
    """The width of the text as it will be drawn."""
    return font.getlength(plan_line(font, text)[0])


def draw_line(
    draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, *, font: Font, fill: str
) -> None:
    """Draw one line at (x, y) (left, ascender), painting the accents the font lacks."""
    x, y = xy
    drawn, marks = plan_line(font, text)
    draw.text((x, y), drawn, font=font, fill=fill)
    size = float(getattr(font, "size", 12))
    for index, mark in marks:
        left, top, right, bottom = font.getbbox(drawn[index])
        x0 = x + font.getlength(drawn[:index])
        _paint(draw, mark, x0 + (left + right) / 2, y + top, y + bottom, size, fill)


def _paint(
    draw: ImageDraw.ImageDraw, mark: str, cx: float, top: float, bottom: float, s: float, fill: str
) -> None:
    stroke = max(1, round(s * 0.07))
    lift = top - s * 0.08
    if mark == "diaeresis":
        r = max(1.0, s * 0.05)
        for dx in (-s * 0.12, s * 0.12):
            draw.ellipse((cx + dx - r, lift - 2 * r, cx + dx + r, lift), fill=fill)
    elif mark in ("acute", "grave"):
        sign = 1 if mark == "acute" else -1
        draw.line(
            [(cx - sign * s * 0.04, lift), (cx + sign * s * 0.08, lift - s * 0.16)],
            fill=fill, width=stroke,
        )  # fmt: skip
    elif mark == "circumflex":
        draw.line(
            [(cx - s * 0.1, lift), (cx, lift - s * 0.14), (cx + s * 0.1, lift)],
            fill=fill, width=stroke, joint="curve",
        )  # fmt: skip
    elif mark == "tilde":
        draw.arc((cx - s * 0.12, lift - s * 0.12, cx, lift), 200, 340, fill=fill, width=stroke)
        draw.arc((cx, lift - s * 0.1, cx + s * 0.12, lift + s * 0.02), 20, 160, fill=fill,
                 width=stroke)  # fmt: skip
    elif mark == "cedilla":
        draw.arc((cx - s * 0.06, bottom, cx + s * 0.08, bottom + s * 0.14), 270, 120, fill=fill,
                 width=stroke)  # fmt: skip
