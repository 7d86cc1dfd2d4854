"""A realistic handbook tree built from the bundled sample handbook (deterministic)."""

from __future__ import annotations

import re
from importlib import resources

GROUPS = {
    "mensen": ("hr-en-verlof", "groei-en-beoordeling", "pensioen-en-voordelen", "rollen",
               "onboarding"),
    "werk": ("engineering", "security", "kantoor-en-samenwerken"),
    "organisatie": ("cultuur", "financien-en-declaraties"),
}  # fmt: skip
_FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def _sample(stem: str) -> str:
    folder = resources.files("services.extractor") / "sample_handbook"
    return (folder / f"{stem}.md").read_text(encoding="utf-8")


def realistic_tree(root: str = "handbook") -> dict[str, bytes]:
    """~55 files: nested folders up to five levels, an index.md per area, front matter,
    a plain-text file, an image (unsupported) and an empty placeholder."""
    files: dict[str, bytes] = {
        f"{root}/index.md": b"# Handboek\n\nWelkom in het handboek van Respellion.\n",
        f"{root}/organisatie/afkortingen.txt": "Afkortingen\n\nOKR: doelen per kwartaal. "
        "WBSO: subsidie voor innovatie. Café-overleg: vrijdag.\n".encode(),
        f"{root}/assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        f"{root}/werk/engineering/later.md": b"",
    }
    n = 0
    for group, stems in GROUPS.items():
        for stem in stems:
            text = _FRONT.sub("", _sample(stem))
            head, *sections = re.split(r"\n(?=## )", text)
            area = f"{root}/{group}/{stem}"
            # The area's index.md keeps its title, intro and first two sections.
            files[f"{area}/index.md"] = (
                f"---\ntype: process\nlayout: page\npermalink: /{stem}/\n---\n"
                + "\n".join([head, *sections[:2]])
            ).encode()
            for i, section in enumerate(sections[2:]):
                heading, _, body = section.partition("\n")
                title = heading.removeprefix("## ").strip()
                folder = area if i < 2 else f"{area}/details" if i < 4 else f"{area}/details/meer"
                n += 1
                if n % 3 == 0:  # the title in front matter, no heading in the text
                    content = f"---\ntitle: {title}\nlayout: page\n---\n{body.strip()}\n"
                else:
                    content = f"# {title}\n{body}\n"
                files[f"{folder}/{_slug(title)}.md"] = content.encode()
    return dict(sorted(files.items()))
