"""Screenshots of R42's main Slack views, drawn from the Block Kit the gateway really builds.

`make docs` runs this: `python -m scripts.render_blocks --out docs/img`. The drawing is a
Slack-like approximation (pillow, DejaVu Sans), not a pixel copy of Slack.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

WIDTH, PAD, GAP = 760, 24, 10
INK, GREY, LINE, LINK = (29, 28, 29), (97, 96, 97), (221, 221, 221), (18, 100, 163)
BUTTON = {"primary": (0, 122, 90), "danger": (224, 30, 90)}
EMOJI = re.compile(r":[a-z0-9_+-]+:")
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


FONT_FILES = ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def font(size: int) -> Font:
    """DejaVu Sans where installed (it has dashes and arrows), else Pillow's bundled font."""
    for name in FONT_FILES:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def plain(text: str) -> str:
    """Slack mrkdwn as the reader sees it: links as labels, no markers, no emoji codes."""
    text = re.sub(r"<([^|>]+)\|([^>]+)>", r"\2", text)
    text = re.sub(r"<(@[^>]+|#[^>]+|https?://[^>]+)>", r"\1", text)
    text = EMOJI.sub("•", text)
    text = "".join("•" if ord(ch) > 0xFFFF else ch for ch in text).replace("\ufe0f", "")
    text = re.sub(r"(?<!\w)[*_~`](.+?)[*_~`](?!\w)", r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def wrap(text: str, f: Font, width: int) -> list[str]:
    """Word-wrap text to a pixel width."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            trial = f"{line} {word}" if line else word
            if f.getlength(trial) <= width or not line:
                line = trial
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def text_of(obj: dict[str, Any] | None) -> str:
    """The text of a text object."""
    return plain(str((obj or {}).get("text", "")))


class Canvas:
    """Draws blocks top to bottom on a tall page, cropped when done."""

    def __init__(self) -> None:
        self.image = Image.new("RGB", (WIDTH, 4000), "white")
        self.draw = ImageDraw.Draw(self.image)
        self.y = PAD

    def text(self, text: str, *, size: int = 15, fill: Any = INK, x: int = PAD,
             width: int = WIDTH - 2 * PAD, bold: bool = False) -> None:  # fmt: skip
        f = font(size)
        for line in wrap(text, f, width):
            self.draw.text((x, self.y), line, font=f, fill=fill)
            if bold:
                self.draw.text((x + 1, self.y), line, font=f, fill=fill)
            self.y += int(size * 1.45)

    def button(self, element: dict[str, Any], x: int) -> int:
        f = font(14)
        label = text_of(element.get("text")) or text_of(element.get("placeholder")) or "…"
        if element["type"] in ("static_select", "overflow", "users_select"):
            label += " ▾"
        w = int(f.getlength(label)) + 24
        style = BUTTON.get(str(element.get("style")))
        box = (x, self.y, x + w, self.y + 30)
        self.draw.rounded_rectangle(box, radius=4, fill=style or "white", outline=style or LINE)
        self.draw.text((x + 12, self.y + 7), label, font=f, fill="white" if style else INK)
        return x + w + 8

    def block(self, block: dict[str, Any]) -> None:
        kind = block["type"]
        draw = DRAWERS.get(kind)
        if draw is None:
            raise ValueError(f"no drawing for block type {kind!r}")
        draw(self, block)
        self.y += GAP

    def png(self, path: Path) -> None:
        self.image.crop((0, 0, WIDTH, self.y + PAD)).save(path, optimize=True)


def _header(c: Canvas, block: dict[str, Any]) -> None:
    c.text(text_of(block["text"]), size=20, bold=True)


def _section(c: Canvas, block: dict[str, Any]) -> None:
    accessory = block.get("accessory")
    width = WIDTH - 2 * PAD - (150 if accessory else 0)
    top = c.y
    if block.get("text"):
        c.text(text_of(block["text"]), width=width)
    for field in block.get("fields") or []:
        c.text(text_of(field), width=width)
    if accessory:
        end, c.y = c.y, top
        if accessory["type"] == "image":
            c.draw.rectangle((WIDTH - PAD - 80, top, WIDTH - PAD, top + 80), fill=LINE)
        elif accessory["type"] in ELEMENTS:
            c.button(accessory, WIDTH - PAD - 140)
        else:
            raise ValueError(f"no drawing for accessory {accessory['type']!r}")
        c.y = max(end, top + 34)


def _context(c: Canvas, block: dict[str, Any]) -> None:
    parts = []
    for element in block["elements"]:
        if element["type"] not in ("mrkdwn", "plain_text", "image"):
            raise ValueError(f"no drawing for context element {element['type']!r}")
        parts.append("▪" if element["type"] == "image" else text_of(element))
    c.text("  ".join(parts), size=13, fill=GREY)


def _actions(c: Canvas, block: dict[str, Any]) -> None:
    x = PAD
    for element in block["elements"]:
        if element["type"] not in ELEMENTS:
            raise ValueError(f"no drawing for action element {element['type']!r}")
        if x > WIDTH - 200:
            x, c.y = PAD, c.y + 38
        x = c.button(element, x)
    c.y += 34


def _context_actions(c: Canvas, block: dict[str, Any]) -> None:
    x = PAD
    for element in block["elements"]:
        if element["type"] != "feedback_buttons":
            raise ValueError(f"no drawing for context action {element['type']!r}")
        for key in ("positive_button", "negative_button"):
            label = element[key].get("accessibility_label") or text_of(element[key]["text"])
            x = c.button({"type": "button", "text": {"text": label}}, x)
    c.y += 34


def _divider(c: Canvas, _block: dict[str, Any]) -> None:
    c.y += 4
    c.draw.line((PAD, c.y, WIDTH - PAD, c.y), fill=LINE, width=1)
    c.y += 4


def _image(c: Canvas, block: dict[str, Any]) -> None:
    if block.get("title"):
        c.text(text_of(block["title"]), size=13, fill=GREY)
    c.draw.rectangle((PAD, c.y, WIDTH - PAD, c.y + 180), fill=(244, 237, 228))
    c.draw.text((PAD + 12, c.y + 80), f"[afbeelding: {block.get('alt_text', '')}]",
                font=font(14), fill=GREY)  # fmt: skip
    c.y += 186


ELEMENTS = {"button", "static_select", "overflow", "users_select"}
DRAWERS: dict[str, Callable[[Canvas, dict[str, Any]], None]] = {
    "header": _header, "section": _section, "context": _context, "actions": _actions,
    "divider": _divider, "image": _image, "context_actions": _context_actions,
}  # fmt: skip


def render(blocks: list[dict[str, Any]], path: Path, *, title: str = "R42") -> None:
    """Draw one Slack message or view to a PNG."""
    c = Canvas()
    c.draw.rounded_rectangle((PAD, c.y, PAD + 36, c.y + 36), radius=6, fill=(74, 21, 75))
    c.draw.text((PAD + 7, c.y + 9), "R42", font=font(14), fill="white")
    c.text(f"{title}   {datetime(2026, 12, 1, 9, 30, tzinfo=UTC):%H:%M}", x=PAD + 48, bold=True)
    c.y += 16
    for block in blocks:
        c.block(block)
    c.png(path)


def views() -> dict[str, list[dict[str, Any]]]:
    """The main views, built by the gateway's own block builders from realistic data."""
    from services.gateway.core.models import HomeData, Leaderboards, WeeklyTopic
    from services.gateway.core.quiz import QuestionView
    from services.gateway.slack.blocks.chat import answer_messages
    from services.gateway.slack.blocks.home import home_view
    from services.gateway.slack.blocks.learn import article_blocks
    from services.gateway.slack.blocks.quiz import question_blocks
    from services.gateway.slack.blocks.reviews import review_blocks
    from shared.bus import ChatReply, KbDelta
    from shared.bus.chat import SourceRef
    from shared.store import LeaderboardEntry

    reply = ChatReply(
        text="Verlof vraag je aan in *AFAS*, minstens twee weken vooraf. Je teamlead keurt "
        "het goed; bij meer dan drie weken aaneen overleg je eerst met je teamlead.",
        sources=[
            SourceRef(id="verlof", label="Verlof"),
            SourceRef(id="teamlead", label="Teamlead"),
        ],
    )
    article = {
        "title": "Ouderschapsverlof in vijf minuten",
        "intro": "Wat ouderschapsverlof is, hoeveel je krijgt en hoe je het aanvraagt.",
        "sections": [{"heading": "Hoeveel", "body": "26 keer je wekelijkse werkuren per kind."},
                     {"heading": "Aanvragen", "body": "Twee maanden vooraf, via AFAS."}],
        "key_takeaways": ["Per kind tot het achtste jaar", "Negen weken deels betaald"],
    }  # fmt: skip
    question = QuestionView(
        index=2, count=10, text="Hoe ver vooraf vraag je verlof aan?",
        options=("Een dag", "Twee weken", "Een maand", "Niet nodig"),
    )  # fmt: skip
    delta = KbDelta.model_validate(
        {
        "reason": "Scrum Master ontbreekt als rol in de kennisgraaf.",
        "topics": [{"id": "scrum-master", "label": "Scrum Master", "type": "role",
                 "description": "Begeleidt de sprints van het team."}],
        "relations": [{"source": "scrum-master", "target": "sprint", "type": "part_of"}],
        }
    )  # fmt: skip
    boards = Leaderboards(
        week="2026-W49",
        weekly=[LeaderboardEntry(rank=1, user="U01ANNA", points=9),
                LeaderboardEntry(rank=2, user="U02BRAM", points=7)],
        all_time=[LeaderboardEntry(rank=1, user="U02BRAM", points=64),
                  LeaderboardEntry(rank=2, user="U01ANNA", points=58)],
    )  # fmt: skip
    home = HomeData(
        weekly=WeeklyTopic(week="2026-W49", topic_id="verlof", label="Verlof"),
        attempt=None, week_points=9, leaderboards=boards,
    )  # fmt: skip
    return {
        "answer": [b for m in answer_messages(reply, turn_id="turn-1") for b in m],
        "learn": article_blocks(article, topic_id="ouderschapsverlof", week="2026-W49",
                                admin=False),
        "quiz": question_blocks(question, attempt_id="att-1"),
        "approval": review_blocks(suggestion_id="sug-1", delta=delta, proposed_by="U01ANNA"),
        "home": home_view(home, user_id="U01ANNA")["blocks"],
    }  # fmt: skip


def main() -> None:
    """Write docs/img/slack-<view>.png for every view."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    for name, blocks in views().items():
        render(blocks, out / f"slack-{name}.png", title="R42" if name != "home" else "R42 · Home")
        print(out / f"slack-{name}.png")


if __name__ == "__main__":
    main()
