"""`python -m services.gateway [--http | --teams] [--port N] [--host H]`: a gateway surface."""

from __future__ import annotations

import argparse
import sys
from functools import partial

from services.gateway.app import build
from services.gateway.slack.service import choose_mode
from shared.config import build_settings
from shared.errors import R42Error
from shared.runtime.service import service_main


def main(argv: list[str] | None = None) -> None:
    """Parse the mode, then run the service until SIGTERM / SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m services.gateway")
    surface = parser.add_mutually_exclusive_group()
    surface.add_argument("--http", action="store_true", help="serve /slack/events over HTTP")
    surface.add_argument("--teams", action="store_true", help="serve Teams' /api/messages")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (Slack 3000, Teams 3978)")
    parser.add_argument("--host", default=None, help="HTTP bind address")
    args = parser.parse_args(argv)
    if args.teams:
        from services.gateway.teams import app as teams

        try:
            teams_mode = teams.choose_teams_mode(build_settings(), port=args.port, host=args.host)
        except R42Error as exc:
            print(f"gateway: {exc}", file=sys.stderr)
            sys.exit(2)
        service_main("gateway", build=partial(teams.build, mode=teams_mode))
        return
    try:
        mode = choose_mode(build_settings(), http=args.http, port=args.port, host=args.host)
    except R42Error as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        sys.exit(2)
    service_main("gateway", build=partial(build, mode=mode))


if __name__ == "__main__":
    main()
