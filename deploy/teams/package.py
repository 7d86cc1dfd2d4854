"""Build the Teams app package: manifest.json (with the bot's app id) + icons, zipped.

Usage: python deploy/teams/package.py OUT.zip   (TEAMS_APP_ID must be set: it becomes the
manifest id and the bot id, as Teams expects for a bot-only app).
"""

from __future__ import annotations

import json
import os
import re
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).parent
GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def manifest_for(app_id: str) -> dict[str, object]:
    """The manifest with the app registration's id filled in."""
    if not GUID.fullmatch(app_id):
        raise SystemExit(f"teams-package: TEAMS_APP_ID must be a GUID, got {app_id!r}")
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    manifest["id"] = app_id
    for bot in manifest["bots"]:
        bot["botId"] = app_id
    return manifest


def build(out: Path, app_id: str) -> Path:
    """Write the zip (manifest and both icons at its root)."""
    sys.path.insert(0, str(HERE))
    from make_icons import color_icon, outline_icon

    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest_for(app_id), indent=2, ensure_ascii=False))
        for name, image in (("color.png", color_icon()), ("outline.png", outline_icon())):
            path = out.parent / f".{name}"
            image.save(path)
            zf.write(path, name)
            path.unlink()
    return out


if __name__ == "__main__":
    app_id = os.environ.get("TEAMS_APP_ID", "")
    if not app_id:
        raise SystemExit("teams-package: set TEAMS_APP_ID (the bot's Microsoft app id)")
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("dist/r42-teams.zip")
    print(build(target, app_id))
