"""BM25 retrieval: compounds, verbatim mentions, stopwords, determinism, the cache."""

from __future__ import annotations

import random

import pytest

from shared.errors import BadInputError
from shared.kb import IndexCache, KbTopic, RetrievalIndex, kb_hash


def _topic(topic_id: str, label: str, description: str = "", kind: str = "concept") -> KbTopic:
    return KbTopic(topic_id, label, kind, description)


HANDBOOK = [
    _topic("pensioenregeling", "Pensioenregeling", "Beschikbare premie bij het fonds Horizon."),
    _topic("partnerpensioen", "Partnerpensioen", "Uitkering aan je partner na overlijden."),
    _topic("ouderschapsverlof", "Ouderschapsverlof", "Ouders nemen tot acht jaar vrij op."),
    _topic("bijzonder-verlof", "Bijzonder verlof", "Vrij bij een huwelijk of verhuizing."),
    _topic("code-review", "Code review", "Elke pull request wordt door een collega bekeken."),
    _topic("vakantiedagen", "Vakantiedagen", "Je krijgt 27 dagen per jaar."),
    _topic("cfo", "CFO", "Verantwoordelijk voor financiën en de begroting.", "role"),
    _topic("declaratieproces", "Declaratieproces", "Bonnen dien je in via Spendwise."),
]


@pytest.fixture(scope="module")
def index() -> RetrievalIndex:
    return RetrievalIndex.build(HANDBOOK)


def _ids(index: RetrievalIndex, query: str, k: int = 10) -> list[str]:
    return [hit.topic_id for hit in index.search(query, k=k)]


def test_a_compound_part_finds_its_compounds(index: RetrievalIndex) -> None:
    # "pensioen" is not a document term: only the compound fallback can find these.
    assert "pensioen" not in index.query_weights("pensioenregeling")
    assert set(_ids(index, "Hoe zit het met mijn pensioen?")[:2]) == {
        "pensioenregeling",
        "partnerpensioen",
    }


def test_a_compound_query_finds_its_parts(index: RetrievalIndex) -> None:
    assert _ids(index, "ouderschapsverlofregeling voor mij")[0] == "ouderschapsverlof"
    assert _ids(index, "hoe declareer ik een declaratieformulier")[0] == "declaratieproces"


def test_a_known_word_still_reaches_its_compounds(index: RetrievalIndex) -> None:
    # "verlof" is a document term (Bijzonder verlof) and must still find ouderschapsverlof.
    found = _ids(index, "verlof")
    assert found[0] == "bijzonder-verlof"
    assert "ouderschapsverlof" in found


def test_compound_matches_weigh_less_than_exact_ones() -> None:
    index = RetrievalIndex.build(
        [
            _topic("a", "Regels", "alles over pensioen en sparen"),
            _topic("b", "Overzicht", "alles over pensioenregeling en sparen"),
        ]
    )
    hits = index.search("pensioen")
    assert [h.topic_id for h in hits] == ["a", "b"]
    assert hits[0].score > hits[1].score > 0
    weights = index.query_weights("pensioen")  # terms are Snowball stems
    assert weights["pensioenregel"] < weights["pensioen"]


def test_fallback_needs_six_characters(index: RetrievalIndex) -> None:
    assert index.search("pensi") == []
    # "ouder" is a KB word ("Ouders"), but too short to reach compounds by prefix.
    assert index.query_weights("ouder") == {"ouder": 1.0}


def test_verbatim_label_is_included_and_ranked_first_even_with_a_low_score() -> None:
    topics = [_topic(f"verlof-{i}", f"Regeling {i}", "verlof verlof verlof") for i in range(30)]
    topics.append(_topic("cfo", "CFO", "begroting en financien"))
    index = RetrievalIndex.build(topics)
    question = "verlof verlof verlof: vraag het de cfo over verlof"
    hits = index.search(question, k=3)
    assert hits[0].topic_id == "cfo" and hits[0].verbatim
    assert len(hits) == 3 and not any(h.verbatim for h in hits[1:])
    # Without the mention the CFO topic is nowhere near the top.
    assert "cfo" not in _ids(index, "verlof verlof verlof: vraag het over verlof", k=10)


def test_verbatim_ids_and_multiword_labels_case_insensitive(index: RetrievalIndex) -> None:
    hits = index.search("Zie CODE REVIEW en bijzonder-verlof", k=2)
    assert {h.topic_id for h in hits if h.verbatim} == {"code-review", "bijzonder-verlof"}


def test_verbatim_is_word_bounded(index: RetrievalIndex) -> None:
    assert not any(h.verbatim for h in index.search("de cfos en codereviewers"))
    assert not any(h.verbatim for h in index.search("code reviews"))


def test_more_verbatim_mentions_than_k_are_all_returned(index: RetrievalIndex) -> None:
    hits = index.search("cfo, vakantiedagen en partnerpensioen", k=1)
    assert {h.topic_id for h in hits} == {"cfo", "vakantiedagen", "partnerpensioen"}


def test_stopwords_are_ignored(index: RetrievalIndex) -> None:
    assert index.search("de het een van wat is the of and") == []
    with_stopwords = index.search("wat is de pensioenregeling van het fonds")
    without = index.search("pensioenregeling fonds")
    assert with_stopwords == without


def test_accents_are_folded() -> None:
    index = RetrievalIndex.build([_topic("cafe", "Café", "Koffie in het café.")])
    assert _ids(index, "CAFE") == ["cafe"]
    assert index.search("café")[0].verbatim


def test_summaries_are_indexed() -> None:
    topics = [_topic("a", "Alfa", "niets"), _topic("b", "Beta", "niets")]
    index = RetrievalIndex.build(topics, summaries={"b": "Over de kilometervergoeding"})
    assert _ids(index, "kilometervergoeding") == ["b"]
    assert _ids(index, "kilometer") == ["b"]


def test_ordering_is_deterministic_ties_broken_by_id() -> None:
    topics = [_topic(f"t-{c}", f"Label {c}", "zelfde tekst over reiskosten") for c in "dbeac"]
    index = RetrievalIndex.build(topics)
    assert _ids(index, "reiskosten") == ["t-a", "t-b", "t-c", "t-d", "t-e"]
    assert _ids(index, "reiskosten", k=2) == ["t-a", "t-b"]


def test_results_do_not_depend_on_build_order() -> None:
    rng = random.Random(9)
    shuffled = HANDBOOK[:]
    rng.shuffle(shuffled)
    one, two = RetrievalIndex.build(HANDBOOK), RetrievalIndex.build(shuffled)
    for query in ("pensioen", "verlof", "code review", "declaratie bonnen", "cfo begroting"):
        assert one.search(query) == two.search(query)
    assert one.fingerprint == two.fingerprint == kb_hash(t.id for t in HANDBOOK)


def test_k_limits_ranked_hits(index: RetrievalIndex) -> None:
    assert len(index.search("pensioen verlof review", k=2)) == 2
    assert len(index.search("pensioen verlof review", k=10)) <= len(HANDBOOK)


@pytest.mark.parametrize(("query", "k"), [(None, 10), (b"x", 10), ("x", 0), ("x", -1), ("x", True)])
def test_bad_search_input_is_rejected(index: RetrievalIndex, query: object, k: object) -> None:
    with pytest.raises(BadInputError):
        index.search(query, k=k)  # type: ignore[arg-type]


def test_build_rejects_bad_topics() -> None:
    with pytest.raises(BadInputError, match="duplicate"):
        RetrievalIndex.build([_topic("a", "A"), _topic("a", "B")])
    with pytest.raises(BadInputError, match="id"):
        RetrievalIndex.build([_topic("", "A")])
    with pytest.raises(BadInputError):
        RetrievalIndex.build("not topics")  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match="compound_weight"):
        RetrievalIndex.build([], compound_weight=2.0)
    with pytest.raises(TypeError):
        RetrievalIndex()


def test_empty_kb_finds_nothing() -> None:
    index = RetrievalIndex.build([])
    assert len(index) == 0 and index.search("pensioen") == []
    assert index.fingerprint == kb_hash([])


def test_index_cache_reuses_by_kb_hash_and_evicts_oldest() -> None:
    cache = IndexCache(max_entries=2)
    first = cache.get_or_build(HANDBOOK)
    assert cache.get_or_build(list(reversed(HANDBOOK))) is first
    assert cache.get(first.fingerprint) is first
    grown = cache.get_or_build([*HANDBOOK, _topic("nieuw", "Nieuw onderwerp")])
    assert grown is not first and grown.fingerprint != first.fingerprint
    third = cache.get_or_build(HANDBOOK[:3])
    assert cache.get(first.fingerprint) is None  # least recently used went first
    assert cache.get(grown.fingerprint) is grown and cache.get(third.fingerprint) is third
    cache.invalidate()
    assert cache.get(grown.fingerprint) is None
    with pytest.raises(BadInputError):
        IndexCache(max_entries=0)


def test_build_accepts_a_mapping_and_topics_without_words() -> None:
    by_id = {t.id: t for t in HANDBOOK}
    assert RetrievalIndex.build(by_id).fingerprint == RetrievalIndex.build(HANDBOOK).fingerprint
    wordless = RetrievalIndex.build([_topic("x", "")])
    assert wordless.vocabulary_size == 0 and wordless.search("iets") == []
    assert wordless.search("zie x")[0].verbatim  # the id itself is still matched verbatim
    with pytest.raises(BadInputError, match="summaries"):
        RetrievalIndex.build(HANDBOOK, summaries=["niet", "goed"])  # type: ignore[arg-type]


def test_a_verbatim_hit_keeps_its_own_score(index: RetrievalIndex) -> None:
    (hit, *_) = index.search("bijzonder verlof aanvragen")
    assert hit.topic_id == "bijzonder-verlof" and hit.verbatim and hit.score > 0
