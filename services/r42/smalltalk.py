"""Messages that are conversation, not a question for the knowledge graph: greetings, thanks.

Such a message is never below the relevance floor by accident of retrieval: it asks
nothing of the KB, so R42 answers it as it is (the model, or the offline greeting) and it
does not join the admins' gap list. A message is small talk when it is short and every word
that carries meaning (shared.kb's tokenizer drops the stopwords) is one of SMALL_TALK_WORDS.
"""

from __future__ import annotations

from shared.kb import tokenize

MAX_WORDS = 10
SMALL_TALK_WORDS: frozenset[str] = frozenset(
    """
    hoi hallo hey hee hi hello hiya yo goedemorgen goedemiddag goedenavond goeiemorgen morgen
    middag avond dag doei tot ziens bye goodbye cheers bedankt dank dankje dankjewel dankuwel
    thanks thank thx ty top super prima oke ok okay cool fijn mooi great nice perfect perfect
    r42 assistent assistant bot help helpen hulp hup fijne welkom welcome
    """.split()
)


def is_small_talk(text: str) -> bool:
    """Whether a message is a greeting, thanks or a question about R42 itself."""
    words = tokenize(text, keep_stopwords=True)
    if not words or len(words) > MAX_WORDS:
        return False
    return all(word in SMALL_TALK_WORDS for word in tokenize(text))
