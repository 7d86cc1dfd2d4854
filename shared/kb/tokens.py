"""Tokenisation shared by retrieval and verbatim matching (Dutch + English, accent-folded)."""

from __future__ import annotations

import re

from shared.kb.models import fold_text

# Kebab-case runs stay whole so a topic id such as `ouderschaps-verlof` is one token.
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MIN_TOKEN_CHARS = 2

# Deliberately short: only words that carry no topic meaning in either language.
STOPWORDS: frozenset[str] = frozenset(
    """
    de het een en of van in op te dat die dit deze is zijn was waren ben bent wordt worden
    werd voor met aan er om als bij ook tot je jij jouw jullie ik me mij mijn we wij ons onze
    u uw hij zij ze hem haar hun wat hoe wie waar wanneer waarom welke welk wel niet geen
    kan kun kunt kunnen mag mogen moet moeten zal zullen wil willen heb hebt heeft hebben had
    naar dan maar nog over uit door zo al daar hier dus toch even eens iets veel meer men
    doe doet doen ga gaat gaan zit zitten kom komt hoeveel krijg krijgt krijgen gebeurt
    gebeuren vind vinden weet weten graag precies eigenlijk nu zelf
    the an and or of to in on for with is are was were be been being what how who whom when
    where why which do does did can could should would will shall may might must it its this
    that these those at by from as into about i you he she we they my your our their me us
    am has have had get gets got getting much many there any if then than so not no also
    just only some very all happen happens happened need needs please tell know long
    """.split()
)


def tokenize(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lowercased, accent-folded tokens; kebab-case runs kept whole; stopwords dropped."""
    found = _TOKEN_RE.findall(fold_text(text))
    if keep_stopwords:
        return found
    return content_words(found)


def content_words(tokens: list[str]) -> list[str]:
    """The tokens tokenize() keeps by default: stopwords and one-letter tokens dropped."""
    return [tok for tok in tokens if len(tok) >= MIN_TOKEN_CHARS and tok not in STOPWORDS]
