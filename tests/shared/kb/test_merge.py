"""plan_merge: upsert rules for extraction results; nothing is ever deleted."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from shared.errors import BadInputError
from shared.kb import KbRelation, KbTopic, MergePlan, plan_merge

EXISTING = {
    "ouderschapsverlof": KbTopic(
        "ouderschapsverlof", "Ouderschapsverlof", "process", "26 weken verlof.", "core"
    ),
    "people-partner": KbTopic("people-partner", "People partner", "role", "HR-aanspreekpunt."),
    "pensioenregeling": KbTopic(
        "pensioenregeling", "Pensioenregeling", "concept", "Premieregeling.", "core",
        relevance_locked=True,
    ),
}  # fmt: skip
KNOWN = [KbRelation("ouderschapsverlof", "people-partner", "executed_by")]


def _plan(new_topics: list, new_relations: list | None = None, **kwargs: object) -> MergePlan:
    return plan_merge(
        kwargs.get("existing", EXISTING),  # type: ignore[arg-type]
        kwargs.get("known", KNOWN),  # type: ignore[arg-type]
        new_topics,
        new_relations or [],
    )


def test_new_topics_are_added_with_counts() -> None:
    plan = _plan([KbTopic("geboorteverlof", "Geboorteverlof", "process", "Vijf dagen.")])
    assert plan.added_ids == ("geboorteverlof",) and plan.topics_added == 1
    assert plan.topics_updated == 0 and plan.relations_added == 0
    assert plan.topics[0] == KbTopic("geboorteverlof", "Geboorteverlof", "process", "Vijf dagen.")


def test_empty_new_description_keeps_the_old_one() -> None:
    plan = _plan([KbTopic("ouderschapsverlof", "Ouderschapsverlof", "process", "  ", "core")])
    assert plan.topics_updated == 0 and plan.is_empty
    plan = _plan(
        [KbTopic("ouderschapsverlof", "Ouderschapsverlof (betaald)", "process", "", "core")]
    )
    assert plan.updated_ids == ("ouderschapsverlof",)
    assert plan.topics[0].description == "26 weken verlof."
    assert plan.topics[0].label == "Ouderschapsverlof (betaald)"


def test_new_description_label_and_type_replace_the_old_ones() -> None:
    plan = _plan([KbTopic("people-partner", "People Partner", "process", "Nieuwe tekst.")])
    topic = plan.topics[0]
    assert (topic.label, topic.type, topic.description) == (
        "People Partner",
        "process",
        "Nieuwe tekst.",
    )
    assert plan.topics_updated == 1


def test_unchanged_topics_are_not_counted_as_updated() -> None:
    same = [
        KbTopic(t.id, t.label, t.type, t.description, t.learning_relevance)
        for t in EXISTING.values()
    ]
    plan = _plan(same)
    assert plan.topics_updated == 0 and plan.topics_added == 0 and plan.is_empty


def test_locked_relevance_is_kept_unlocked_relevance_follows_extraction() -> None:
    plan = _plan(
        [
            KbTopic(
                "pensioenregeling", "Pensioenregeling", "concept", "Premieregeling.", "exclude"
            ),
            KbTopic("people-partner", "People partner", "role", "HR-aanspreekpunt.", "peripheral"),
        ]
    )
    by_id = {t.id: t for t in plan.topics}
    assert "pensioenregeling" not in by_id  # only the (locked) relevance differed
    assert by_id["people-partner"].learning_relevance == "peripheral"


def test_missing_relevance_lock_attribute_means_unlocked() -> None:
    store_like = SimpleNamespace(
        id="cfo", label="CFO", type="role", description="Financiën.", learning_relevance="core"
    )
    plan = _plan([KbTopic("cfo", "CFO", "role", "", "standard")], existing={"cfo": store_like})
    assert plan.topics[0].learning_relevance == "standard"
    assert plan.topics[0].description == "Financiën."


def test_executes_is_normalised_and_swapped() -> None:
    plan = _plan(
        [KbTopic("geboorteverlof", "Geboorteverlof", "process")],
        [KbRelation("people-partner", "geboorteverlof", "executes")],
    )
    assert plan.relations == (KbRelation("geboorteverlof", "people-partner", "executed_by"),)
    # The known relation in legacy form is recognised as a duplicate.
    plan = _plan(
        [], [KbRelation("ouderschapsverlof", "people-partner", "executed_by")],
        known=[KbRelation("people-partner", "ouderschapsverlof", "executes")],
    )  # fmt: skip
    assert plan.relations == () and plan.relations_dropped == 0


def test_dropped_relations_are_counted() -> None:
    plan = _plan(
        [KbTopic("geboorteverlof", "Geboorteverlof", "process")],
        [
            KbRelation("geboorteverlof", "bestaat-niet"),  # unknown endpoint
            KbRelation("nergens", "people-partner"),  # unknown endpoint
            KbRelation("geboorteverlof", "people-partner", "owns"),  # unknown type
            KbRelation("geboorteverlof", "geboorteverlof"),  # self-reference
            KbRelation("geboorteverlof", "ouderschapsverlof", "part_of"),  # fine
            KbRelation("geboorteverlof", "ouderschapsverlof", "part_of"),  # duplicate, not dropped
            KbRelation("ouderschapsverlof", "people-partner", "executed_by"),  # already known
        ],
    )
    assert plan.relations_dropped == 2
    assert plan.relations == (KbRelation("geboorteverlof", "ouderschapsverlof", "part_of"),)
    assert plan.relations_added == 1
    # An endpoint that is not there yet keeps the relation pending (a later topic may come).
    assert plan.pending == (
        KbRelation("geboorteverlof", "bestaat-niet"), KbRelation("nergens", "people-partner"),
    )  # fmt: skip


def test_relations_may_point_to_topics_added_in_the_same_plan() -> None:
    plan = _plan(
        [KbTopic("a-topic", "A"), KbTopic("b-topic", "B")],
        [KbRelation("a-topic", "b-topic", "depends_on", "  want  ")],
    )
    assert plan.relations == (KbRelation("a-topic", "b-topic", "depends_on", "want"),)


def test_same_label_under_a_new_id_merges_into_the_existing_topic() -> None:
    plan = _plan(
        [KbTopic("ouderschaps-verlof", "ouderschapsverlof", "process", "Nieuwe uitleg.")],
        [KbRelation("ouderschaps-verlof", "people-partner", "depends_on")],
    )
    assert plan.added_ids == () and plan.updated_ids == ("ouderschapsverlof",)
    assert plan.aliases == {"ouderschaps-verlof": "ouderschapsverlof"}
    assert plan.relations == (KbRelation("ouderschapsverlof", "people-partner", "depends_on"),)


def test_invalid_new_topics_are_dropped_with_their_relations() -> None:
    plan = _plan(
        [
            KbTopic("Bad Id", "Iets", "concept"),
            KbTopic("iets-anders", "Iets anders", "thing"),
            KbTopic("leeg", "  ", "concept"),
            {"id": "als-dict", "label": "Als dict", "type": "concept"},
        ],
        [KbRelation("iets-anders", "people-partner"), KbRelation("als-dict", "people-partner")],
    )
    assert plan.topics_dropped == 3
    assert plan.added_ids == ("als-dict",)
    assert plan.relations_dropped == 1 and plan.relations_added == 1


def test_repeated_ids_in_one_result_merge_in_order() -> None:
    plan = _plan(
        [
            KbTopic("nieuw", "Nieuw", "concept", "Eerste."),
            KbTopic("nieuw", "Nieuw", "process", ""),
        ]
    )
    assert plan.topics == (KbTopic("nieuw", "Nieuw", "process", "Eerste."),)


def test_plans_never_delete_and_never_mutate_inputs() -> None:
    existing = copy.deepcopy(EXISTING)
    known = list(KNOWN)
    plan = _plan([KbTopic("nieuw", "Nieuw")], [], existing=existing, known=known)
    assert existing == EXISTING and known == KNOWN
    assert {t.id for t in plan.topics} == {"nieuw"}
    assert not any("delet" in name or "remov" in name for name in MergePlan.__dataclass_fields__)
    assert _plan([], []).is_empty


def test_existing_must_be_a_mapping() -> None:
    with pytest.raises(BadInputError):
        plan_merge(list(EXISTING.values()), [], [], [])  # type: ignore[arg-type]


def test_an_item_without_relevance_keeps_the_old_relevance() -> None:
    item = {"id": "ouderschapsverlof", "label": "Ouderschapsverlof", "type": "process"}
    plan = _plan([item])
    assert plan.is_empty  # description empty → kept, relevance absent → kept
