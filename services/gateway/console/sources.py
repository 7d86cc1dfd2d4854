"""Console `/sources delete ID [--max-deletions N]`: the KG owner's preview, j/n, the delete.

Like every surface's, the delete is an `rpc.extractor.source_delete` request: the owner
decides who is an admin, bounds it and audits it; the console only asks first.
"""

from __future__ import annotations

import argparse
import shlex
from typing import NoReturn

from rich.text import Text

from services.gateway.console.base import ConsoleBase
from services.gateway.core.source_delete import outcome_text, over_bound_text
from shared.errors import BadInputError

USAGE = "/sources delete ID [--max-deletions N]"


class _Parser(argparse.ArgumentParser):
    """argparse that raises (in Dutch) instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise BadInputError(f"dat commando klopt niet ({message}); gebruik {USAGE}")


def _parser() -> _Parser:
    parser = _Parser(prog="/sources delete", add_help=False)
    parser.add_argument("source_id")
    parser.add_argument("--max-deletions", type=int, default=None)
    return parser


class SourceCommands(ConsoleBase):
    """`/sources delete …` (AdminCommands.sources hands it what follows /sources)."""

    async def source_command(self, arg: str) -> None:
        """/sources delete ID [--max-deletions N]: delete after the preview and a yes."""
        try:
            words = shlex.split(arg)
        except ValueError as exc:
            raise BadInputError(f"dat commando klopt niet ({exc})") from None
        if not words or words[0].lower() != "delete":
            raise BadInputError(f"onbekend: /sources {arg[:50]}; gebruik /sources of {USAGE}")
        if len(words) == 1:
            raise BadInputError(f"noem de bron: {USAGE} (de id's staan in /sources)")
        args = _parser().parse_args(words[1:])
        if args.max_deletions is not None and args.max_deletions < 0:
            raise BadInputError("--max-deletions is een aantal van 0 of meer")
        await self._delete_source(args.source_id, args.max_deletions)

    async def _delete_source(self, source_id: str, max_deletions: int | None) -> None:
        sources = self.client.sources
        preview = await sources.delete(source_id=source_id, user_id=self.user, surface="console",
                                       confirm=False, max_deletions=max_deletions)  # fmt: skip
        if preview.outcome != "preview":
            self.out.print(Text(outcome_text(preview, source_id), style="red"))
            return
        if preview.over_bound:
            self.out.print(Text(over_bound_text(preview, source_id), style="red"))
            return
        if not await self.yes_no(outcome_text(preview, source_id)):
            self.out.print("Niet verwijderd.")
            return
        reply = await sources.delete(source_id=source_id, user_id=self.user, surface="console",
                                     confirm=True, max_deletions=max_deletions)  # fmt: skip
        ok = reply.outcome in ("done", "already_deleted")
        undo = f" In de console: /undo {reply.undo_id}." if ok and reply.undo_id else ""
        self.out.print(Text(outcome_text(reply, source_id) + undo, style="cyan" if ok else "red"))

    async def yes_no(self, question: str) -> bool:
        """Implemented by the session (j/n prompt)."""
        raise NotImplementedError
