"""The infographic PNG: valid, sized, deterministic, wrapped, accents drawn."""

from __future__ import annotations

import io

from PIL import Image, ImageFont

from services.content.glyphs import has_glyph, measure, plan_line
from services.content.models import PALETTE, Infographic
from services.content.render import MARGIN, WIDTH, render_infographic_png, wrap_text
from tests.services.content.conftest import infographic

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def open_png(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def test_renders_a_valid_png_of_the_layout_width() -> None:
    data = render_infographic_png(Infographic.model_validate(infographic()))
    assert data.startswith(PNG_SIGNATURE)
    image = open_png(data)
    assert image.format == "PNG" and image.mode == "RGB"
    assert image.width == WIDTH and 600 < image.height < 3000
    # The canvas is the theme's background, the band its accent colour.
    assert image.getpixel((2, image.height - 2)) == _rgb(PALETTE["ocean"]["bg"])
    assert image.getpixel((2, 2)) == _rgb(PALETTE["ocean"]["accent"])


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def test_same_input_gives_identical_bytes_and_dicts_work_too() -> None:
    model = Infographic.model_validate(infographic())
    first = render_infographic_png(model, footer="R42")
    assert render_infographic_png(model, footer="R42") == first
    # The stored dict (with meta and image) renders the same picture.
    stored = {**infographic(), "meta": {"offline": True}, "image": {"base64": ""}}
    assert render_infographic_png(stored, footer="R42") == first
    assert render_infographic_png(model, footer="R42 offline") != first
    assert render_infographic_png(Infographic.model_validate(infographic(theme="sunset")),
                                  footer="R42") != first  # fmt: skip


def test_long_text_wraps_and_the_picture_grows() -> None:
    short = open_png(render_infographic_png(Infographic.model_validate(infographic())))
    long_quote = " ".join(["Transparantie vraagt moed en geduld van iedereen."] * 6)
    long_steps = [
        {"number": n, "text": "Lees het hele hoofdstuk in het handboek en bespreek het " * 3}
        for n in (1, 2, 3, 4)
    ]
    tall = open_png(
        render_infographic_png(
            Infographic.model_validate(infographic(quote=long_quote[:300], steps=long_steps))
        )
    )
    assert tall.width == short.width and tall.height > short.height + 200


def test_wrap_keeps_every_line_inside_the_box() -> None:
    font = ImageFont.load_default(size=30)
    width = WIDTH - 2 * MARGIN
    text = "Een heel lange zin " * 20 + "Supercalifragilistisch" * 4
    lines = wrap_text(text, font, width)
    assert len(lines) > 3
    assert all(measure(font, line) <= width for line in lines)
    assert " ".join(lines).replace(" ", "") == text.replace(" ", "")


def test_letters_the_font_lacks_are_drawn_with_painted_accents() -> None:
    font = ImageFont.load_default(size=40)
    if has_glyph(font, "é"):  # a future Pillow font may have them: nothing to paint then
        assert plan_line(font, "één") == ("één", [])
        return
    drawn, marks = plan_line(font, "één ideeën")
    assert drawn == "een ideeen"
    assert marks == [(0, "acute"), (1, "acute"), (8, "diaeresis")]
    plain = render_infographic_png(Infographic.model_validate(infographic(quote="een idee")))
    accented = render_infographic_png(Infographic.model_validate(infographic(quote="één idee")))
    assert plain != accented
