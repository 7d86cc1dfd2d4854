"""Turn the model's graph actions into an exact, validated change plan (pure logic)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.extractor.tools import GraphActions
from shared.store import KbChanges, Relation, Topic

Key = tuple[str, str, str]
ACTION_NL = {"merge": "samenvoegen", "delete": "verwijderen"}
RELATION_NL = {"related_to": "hangt samen met", "depends_on": "hangt af van",
               "part_of": "is onderdeel van", "executed_by": "wordt uitgevoerd door"}  # fmt: skip
RELEVANCE_NL = {"core": "kern", "standard": "standaard", "peripheral": "rand",
                "exclude": "uitgesloten"}  # fmt: skip
"""Dutch words for plan rows a chat surface shows (the CLI shows the English rows)."""


def relation_nl(source: str, kind: str, target: str) -> str:
    """A relation in Dutch words: `a hangt samen met b`."""
    return f"{source} {RELATION_NL.get(kind, kind)} {target}"


@dataclass(frozen=True)
class PlannedMerge:
    """Keep one topic, delete the others; their relations move to the kept one."""

    keep: str
    deleted: tuple[str, ...]
    repointed: int
    collapsed: int
    reason: str
    key: str = ""


@dataclass(frozen=True)
class PlannedRelevance:
    """A learning-relevance change of one (unlocked) topic."""

    topic_id: str
    old: str
    new: str
    reason: str
    key: str = ""


@dataclass(frozen=True)
class GraphPlan:
    """Exactly what applying the analysis would change, and what was refused and why."""

    fingerprint: str
    merges: tuple[PlannedMerge, ...] = ()
    deletions: tuple[tuple[str, str, int], ...] = ()  # (id, reason, relations removed)
    new_relations: tuple[Relation, ...] = ()
    relevance: tuple[PlannedRelevance, ...] = ()
    skipped: tuple[str, ...] = ()
    skipped_nl: tuple[str, ...] = ()
    changes: KbChanges = field(default_factory=KbChanges)
    summary: str = ""
    deletion_keys: tuple[str, ...] = ()
    relation_keys: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether applying would change nothing."""
        return self.changes.empty

    @property
    def changed_ids(self) -> list[str]:
        """Topic ids deleted, kept by a merge, re-rated, or given a new relation."""
        ids = {m.keep for m in self.merges} | set(self.changes.topics_delete)
        ids |= {r.topic_id for r in self.relevance}
        ids |= {end for r in self.new_relations for end in (r.source, r.target)}
        return sorted(ids)

    def lines(self) -> list[tuple[str, str, str]]:
        """(action, what, why) rows for the preview."""
        rows = []
        for m in self.merges:
            detail = f"{m.repointed} relation(s) re-pointed, {m.collapsed} duplicate(s) collapsed"
            rows.append(("merge", f"keep {m.keep} ← delete {', '.join(m.deleted)}",
                         f"{m.reason} ({detail})".strip()))  # fmt: skip
        for topic_id, reason, removed in self.deletions:
            rows.append(("delete", topic_id, f"{reason} ({removed} relation(s) removed)".strip()))
        for r in self.new_relations:
            rows.append(("relation", f"{r.source} -{r.type}-> {r.target}", r.description or ""))
        for u in self.relevance:
            rows.append(("relevance", f"{u.topic_id}: {u.old} → {u.new}", u.reason))
        rows.extend(("skipped", "", why) for why in self.skipped)
        return rows

    def lines_nl(self) -> list[tuple[str, str]]:
        """(what, why) of every action in Dutch, in the order of `lines` (chat surfaces)."""
        rows = []
        for m in self.merges:
            detail = f"{m.repointed} relatie(s) omgezet, {m.collapsed} dubbele samengevoegd"
            rows.append((f"behoud {m.keep} ← verwijder {', '.join(m.deleted)}",
                         f"{m.reason} ({detail})".strip()))  # fmt: skip
        for topic_id, reason, removed in self.deletions:
            rows.append((topic_id, f"{reason} ({removed} relatie(s) verwijderd)".strip()))
        for r in self.new_relations:
            rows.append((relation_nl(r.source, r.type, r.target), r.description or ""))
        for u in self.relevance:
            old, new = RELEVANCE_NL.get(u.old, u.old), RELEVANCE_NL.get(u.new, u.new)
            rows.append((f"{u.topic_id}: {old} → {new}", u.reason))
        return rows

    def keyed_rows(self) -> list[tuple[str, str, str, str, str, str]]:
        """(key, action, what, why, what in Dutch, why in Dutch) for every action."""
        keys = [m.key for m in self.merges] + list(self.deletion_keys)
        keys += list(self.relation_keys) + [u.key for u in self.relevance]
        rows = [row for row in self.lines() if row[0] != "skipped"]
        return [(key, *row, *nl)
                for key, row, nl in zip(keys, rows, self.lines_nl(), strict=True)]  # fmt: skip


def action_keys(actions: GraphActions) -> list[str]:
    """A key per action of the model's answer: m0…, d0…, r0…, v0… (merge, delete, relation,
    relevance), stable for the stored answer so a selection can name them."""
    return [
        *(f"m{i}" for i in range(len(actions.merges))),
        *(f"d{i}" for i in range(len(actions.deletions))),
        *(f"r{i}" for i in range(len(actions.new_relations))),
        *(f"v{i}" for i in range(len(actions.relevance_updates))),
    ]


def select_actions(actions: GraphActions, keys: Iterable[str]) -> GraphActions:
    """Only the chosen actions (unknown keys are ignored: the plan is re-validated anyway)."""
    chosen = set(keys)
    return GraphActions(
        merges=[a for i, a in enumerate(actions.merges) if f"m{i}" in chosen],
        deletions=[a for i, a in enumerate(actions.deletions) if f"d{i}" in chosen],
        new_relations=[a for i, a in enumerate(actions.new_relations) if f"r{i}" in chosen],
        relevance_updates=[a for i, a in enumerate(actions.relevance_updates) if f"v{i}" in chosen],
        summary=actions.summary,
    )


def graph_fingerprint(topics: Iterable[Topic], relations: Iterable[Relation]) -> str:
    """A hash of everything the plan depends on; applying checks it did not change."""
    lines = sorted(
        f"{t.id}|{t.label}|{t.type}|{t.learning_relevance}|{int(t.relevance_locked)}"
        for t in topics
    )
    lines += sorted(f"{r.source}>{r.type}>{r.target}" for r in relations)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def plan_graph_actions(
    actions: GraphActions, topics: list[Topic], relations: list[Relation]
) -> GraphPlan:
    """Validate every action against the graph; locked topics are never deleted or re-rated."""
    by_id = {t.id: t for t in topics}
    gone: dict[str, str] = {}  # deleted id → the id it merged into ("" = plain delete)
    kept: set[str] = set()
    skipped: list[str] = []
    skipped_nl: list[str] = []

    def skip(english: str, dutch: str) -> None:
        skipped.append(english)
        skipped_nl.append(dutch)

    def removable(topic_id: str, action: str) -> bool:
        nl = ACTION_NL[action]
        if topic_id not in by_id:
            skip(f"{action}: topic {topic_id} does not exist",
                 f"{nl}: onderwerp {topic_id} bestaat niet")  # fmt: skip
        elif topic_id in gone or topic_id in kept:
            skip(f"{action}: {topic_id} is already part of another action",
                 f"{nl}: {topic_id} zit al in een andere actie")  # fmt: skip
        elif by_id[topic_id].relevance_locked:
            skip(
                f"{action}: {topic_id} has a locked relevance (an admin decision)",
                f"{nl}: {topic_id} heeft een vergrendelde relevantie (besluit van een beheerder)",
            )
        else:
            return True
        return False

    merge_specs: list[tuple[str, list[str], str, str]] = []
    for index, merge in enumerate(actions.merges):
        keep = merge.keep
        if keep not in by_id or keep in gone:
            skip(
                f"merge: kept topic {keep} does not exist or is removed elsewhere",
                f"samenvoegen: te behouden onderwerp {keep} bestaat niet of gaat elders weg",
            )
            continue
        deleted = [d for d in dict.fromkeys(merge.delete) if d != keep and removable(d, "merge")]
        if deleted:
            kept.add(keep)
            gone.update({d: keep for d in deleted})
            merge_specs.append((keep, deleted, merge.reason, f"m{index}"))
    deletion_specs = [
        (d.id, d.reason, f"d{i}")
        for i, d in enumerate(actions.deletions)
        if removable(d.id, "delete")
    ]
    gone.update({topic_id: "" for topic_id, _, _ in deletion_specs})

    alias = {d: k for d, k in gone.items() if k}
    existing: set[Key] = {
        (r.source, r.target, r.type)
        for r in relations
        if r.source not in gone and r.target not in gone
    }
    upserts: dict[Key, Relation] = {}
    repointed: dict[str, int] = {}
    collapsed: dict[str, int] = {}
    removed: dict[str, int] = {}
    for r in relations:
        if r.source not in gone and r.target not in gone:
            continue
        dropped = [end for end in (r.source, r.target) if gone.get(end) == ""]
        if dropped:
            for end in dropped:
                removed[end] = removed.get(end, 0) + 1
            continue
        keep = alias.get(r.source) or alias.get(r.target) or ""
        key = (alias.get(r.source, r.source), alias.get(r.target, r.target), r.type)
        if key[0] == key[1] or key in existing or key in upserts:
            collapsed[keep] = collapsed.get(keep, 0) + 1
            continue
        upserts[key] = Relation(
            source=key[0], target=key[1], type=r.type, description=r.description
        )
        repointed[keep] = repointed.get(keep, 0) + 1

    new_relations: list[Relation] = []
    relation_keys: list[str] = []
    for index, n in enumerate(actions.new_relations):
        key = (alias.get(n.source, n.source), alias.get(n.target, n.target), n.type)
        if any(end not in by_id or gone.get(end) == "" for end in key[:2]):
            skip(
                f"relation {n.source} -{n.type}-> {n.target}: unknown topic",
                f"relatie {relation_nl(n.source, n.type, n.target)}: onbekend onderwerp",
            )
        elif key[0] == key[1] or key in existing or key in upserts:
            skip(f"relation {n.source} -{n.type}-> {n.target}: exists already",
                 f"relatie {relation_nl(n.source, n.type, n.target)}: bestaat al")  # fmt: skip
        else:
            upserts[key] = Relation(source=key[0], target=key[1], type=n.type,
                                    description=n.description or None)  # fmt: skip
            new_relations.append(upserts[key])
            relation_keys.append(f"r{index}")

    relevance: list[PlannedRelevance] = []
    retopics: list[Topic] = []
    for index, u in enumerate(actions.relevance_updates):
        topic = by_id.get(u.id)
        if topic is None or u.id in gone:
            skip(f"relevance {u.id}: topic does not exist or is removed",
                 f"relevantie {u.id}: onderwerp bestaat niet of gaat weg")  # fmt: skip
        elif topic.relevance_locked:
            level = topic.learning_relevance
            skip(
                f"relevance {u.id}: locked by an admin, left at {level}",
                f"relevantie {u.id}: vergrendeld door een beheerder, blijft "
                f"{RELEVANCE_NL.get(level, level)}",
            )
        elif topic.learning_relevance != u.relevance and u.id not in {t.id for t in retopics}:
            relevance.append(
                PlannedRelevance(u.id, topic.learning_relevance, u.relevance, u.reason, f"v{index}")
            )
            retopics.append(topic.model_copy(update={"learning_relevance": u.relevance}))

    return GraphPlan(
        fingerprint=graph_fingerprint(topics, relations),
        merges=tuple(
            PlannedMerge(
                keep, tuple(deleted), repointed.get(keep, 0), collapsed.get(keep, 0), why, key
            )
            for keep, deleted, why, key in merge_specs
        ),
        deletions=tuple((d, why, removed.get(d, 0)) for d, why, _ in deletion_specs),
        deletion_keys=tuple(key for _, _, key in deletion_specs),
        relation_keys=tuple(relation_keys),
        new_relations=tuple(new_relations),
        relevance=tuple(relevance),
        skipped=tuple(skipped),
        skipped_nl=tuple(skipped_nl),
        changes=KbChanges(
            topics_upsert=retopics,
            relations_upsert=list(upserts.values()),
            topics_delete=sorted(gone),
        ),
        summary=actions.summary,
    )
