"""Dutch-aware analysis: stems, decompounding against the KB, English terms, the floor."""

from __future__ import annotations

from shared.kb import KbTopic, RetrievalIndex, is_relevant
from shared.kb.analysis import Analyzer, detect_language

WORDS = (
    "pensioen partnerpensioen wezenpensioen regeling verlof geboorte vakantie dagen mail "
    "phishing fiets budget opleiding kind kinderen beleid wachtwoord laptopbeleid"
).split()


def _topic(topic_id: str, label: str, description: str) -> KbTopic:
    return KbTopic(topic_id, label, "concept", description)


def test_singular_and_plural_share_a_stem() -> None:
    analyzer = Analyzer(WORDS)
    for one, many in (("fiets", "fietsen"), ("bon", "bonnen"), ("dag", "dagen")):
        assert analyzer.stem(one) == analyzer.stem(many)
    assert analyzer.stem("verdient") == analyzer.stem("verdienen")


def test_compounds_split_only_into_kb_words() -> None:
    analyzer = Analyzer(WORDS)
    assert analyzer.analyse("geboorteverlof").parts == (
        analyzer.stem("geboorte"),
        analyzer.stem("verlof"),
    )
    # "pensioen" stands alone here, and at least two KB words end with it anyway.
    assert analyzer.stem("pensioen") in analyzer.analyse("pensioenregeling").parts
    assert analyzer.analyse("phishingmail").parts == ("phish", "mail")
    # A Dutch prefix is no head, and a word the KB can't explain is not split.
    assert analyzer.analyse("verzekering").parts == ()
    assert analyzer.analyse("hoofdstad").parts == ()


def test_english_words_reach_dutch_terms() -> None:
    analyzer = Analyzer(WORDS)
    assert analyzer.stem("pensioen") in analyzer.analyse("pension").translations
    assert analyzer.analyse("pensioen").translations == ()  # a Dutch KB word stays Dutch


def test_language_of_a_question() -> None:
    assert detect_language("How many vacation days do I get?") == "en"
    assert detect_language("Hoeveel vakantiedagen krijg ik?") == "nl"
    assert detect_language("Pensioen") == "nl"


KB = [
    _topic("fietsregeling", "Fietsregeling", "Lease een fiets of e-bike via je brutosalaris."),
    _topic(
        "geboorteverlof", "Geboorteverlof", "Na de geboorte van je kind krijgt de partner vrij."
    ),
    _topic("vakantiedagen", "Vakantiedagen", "Je hebt recht op 27 vakantiedagen per jaar."),
    _topic("bijzonder-verlof", "Bijzonder verlof", "Vrij bij een verhuizing of huwelijk."),
]


def test_a_one_word_plural_question_finds_its_compound_topic() -> None:
    index = RetrievalIndex.build(KB)
    assert index.search("Fietsen")[0].topic_id == "fietsregeling"
    assert index.search("Vakantiedag")[0].topic_id == "vakantiedagen"


def test_a_compound_paraphrase_finds_the_compound() -> None:
    index = RetrievalIndex.build(KB)
    assert index.search("verlof bij de geboorte")[0].topic_id == "geboorteverlof"


def test_an_english_question_finds_the_dutch_topic() -> None:
    index = RetrievalIndex.build(KB)
    assert index.search("How many vacation days do I get?")[0].topic_id == "vakantiedagen"


def test_off_topic_questions_fall_below_the_floor() -> None:
    index = RetrievalIndex.build(KB)
    assert not is_relevant(index.search("Wat is de hoofdstad van Frankrijk?"))
    assert not is_relevant(index.search("Who wrote Hamlet?"))
    hits = index.search("Hoeveel vakantiedagen heb ik?")
    assert is_relevant(hits) and hits[0].coverage == 1.0
    # Naming a topic verbatim always counts, whatever else the question says.
    assert is_relevant(index.search("Bijzonder verlof op de maan?"))


def test_one_word_mentioned_in_passing_is_no_answer() -> None:
    kb = [
        *KB,
        _topic("lunch", "Lunch op kantoor", "De lunch wordt elke dag verzorgd door een cateraar."),
    ]
    index = RetrievalIndex.build(kb)
    # "verzorg" occurs once, in passing, and "cactus" nowhere: half the question, no answer.
    hits = index.search("Hoe verzorg ik mijn cactus?")
    assert hits and hits[0].topic_id == "lunch" and hits[0].coverage >= 0.5
    assert not hits[0].supported and not is_relevant(hits)
    # One word the topic is about (its label) is enough, and so is a one-word question.
    assert is_relevant(index.search("Hoe gaat de lunch met mijn cactus?"))
    assert is_relevant(index.search("verzorgd"))
    # Two of the question's words together in one topic are evidence as well.
    assert is_relevant(index.search("Wie verzorgt de cateraar voor mijn cactus?"))
