"""Importing a graph document: the KG owner validates, applies and announces it (kb.updated).

`r42 kb import` asks over the bus (`rpc.extractor.kb_import`) when the stack runs and calls
`import_graph` in-process otherwise: one write path either way.
"""

from __future__ import annotations

from typing import Any

from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.tombstones import lift
from shared.bus import new_event_id
from shared.bus.extractor_rpc import KbImportProblem, KbImportReply, KbImportRequest
from shared.store import ImportPlan, ImportRejectedError, import_kb


async def import_graph(
    *,
    store: ExtractorStore,
    doc: dict[str, Any],
    skip_invalid: bool,
    publish: Publish,
    correlation_id: str = "",
) -> ImportPlan:
    """Validate every row, apply the valid ones in one transaction, publish kb.updated.

    ImportRejectedError (nothing written) when rows are invalid and skip_invalid is off.
    """
    plan = await import_kb(store, doc, skip_invalid=skip_invalid)  # type: ignore[arg-type]
    await lift(store, (t.id for t in plan.topics))  # imported on purpose: deleted no longer
    if plan.topics or plan.relations:
        changed = [t.id for t in plan.topics]
        changed += [end for r in plan.relations for end in (r.source, r.target)]
        await publish_kb_updated(
            store, publish, changed_ids=changed, reason="kb import",
            key=("kb-import", new_event_id()), correlation_id=correlation_id,
        )  # fmt: skip
    return plan


async def answer_import(
    request: KbImportRequest, *, store: ExtractorStore, publish: Publish
) -> KbImportReply:
    """rpc.extractor.kb_import: the import's counts, or its rejected rows."""
    try:
        plan = await import_graph(
            store=store, doc=request.doc, skip_invalid=request.skip_invalid, publish=publish
        )
    except ImportRejectedError as exc:
        problems = [KbImportProblem(**p.model_dump()) for p in exc.problems]
        return KbImportReply(rejected=True, problems=problems)
    problems = [KbImportProblem(**p.model_dump()) for p in plan.problems]
    return KbImportReply(topics=len(plan.topics), relations=len(plan.relations), problems=problems)
