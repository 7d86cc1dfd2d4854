"""`python -m services.gateway [--http] [--port N] [--host H]`: the Slack gateway service."""

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
    parser.add_argument("--http", action="store_true", help="serve /slack/events over HTTP")
    parser.add_argument("--port", type=int, default=None, help="HTTP port (default 3000)")
    parser.add_argument("--host", default=None, help="HTTP bind address (default 0.0.0.0)")
    args = parser.parse_args(argv)
    try:
        mode = choose_mode(build_settings(), http=args.http, port=args.port, host=args.host)
    except R42Error as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        sys.exit(2)
    service_main("gateway", build=partial(build, mode=mode))


if __name__ == "__main__":
    main()
