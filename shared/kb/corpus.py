"""Topic texts → a sparse (topics × terms) matrix of term frequencies, each word analysed once.

A topic's text is its id, its label twice (a label says more than any sentence) and its
description and content summary. Every distinct word of the corpus is analysed once
(stem, compound parts); the frequencies then come from one sparse product of the
(topics × words) counts and the (words × terms) analysis, not from a loop per topic.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from shared.kb.analysis import Analyzer, Word
from shared.kb.models import TopicLike
from shared.kb.steps import Steps, run_steps
from shared.kb.tokens import tokenize
from shared.kb.vocab import Vocabulary, VocabView

LABEL_REPEAT = 2  # a topic's label says more about it than any sentence of its description
INDEXED_PART_TF = 0.5  # a compound's part inside a topic counts half


def topic_text(topic: TopicLike, summary: str) -> str:
    """The text a topic is indexed by."""
    label = topic.label or ""
    return "\n".join([topic.id, *([label] * LABEL_REPEAT), topic.description or "", summary])


def count_words(
    topics: Sequence[TopicLike], summaries: Mapping[str, str]
) -> tuple[dict[str, int], sp.csr_array]:
    """The corpus's distinct words (word → number) and the (topics × words) counts."""
    return run_steps(counting_words(topics, summaries))


def counting_words(
    topics: Sequence[TopicLike], summaries: Mapping[str, str]
) -> Steps[tuple[dict[str, int], sp.csr_array]]:
    """count_words in steps: one slice per topic (see shared.kb.steps).

    Topics are tokenised one at a time into compact arrays, so a large KB never holds
    every topic's token list at once.
    """
    words: dict[str, int] = {}
    doc_of = array("i")
    word_of = array("i")
    for number, topic in enumerate(topics):
        tokens = tokenize(topic_text(topic, str(summaries.get(topic.id) or "")))
        word_of.extend(words.setdefault(token, len(words)) for token in tokens)
        doc_of.extend(array("i", [number]) * len(tokens))
        yield None
    shape = (len(topics), len(words))
    counts: sp.csr_array = yield lambda: sp.csr_array(
        (
            np.ones(len(word_of), dtype=np.float32),
            (np.frombuffer(doc_of, dtype=np.int32), np.frombuffer(word_of, dtype=np.int32)),
        ),
        shape=shape,
    )
    return words, counts


def term_matrix(
    words: dict[str, int], counts: sp.csr_array, analyzer: Analyzer, vocabulary: Vocabulary
) -> tuple[sp.csc_array, list[int]]:
    """(topics × terms) frequencies, and the terms that are compounds split into parts.

    New terms are appended to `vocabulary`; the matrix has a column for each of its terms.
    """
    return run_steps(term_matrix_steps(words, counts, analyzer, vocabulary))


def term_matrix_steps(
    words: dict[str, int], counts: sp.csr_array, analyzer: Analyzer, vocabulary: Vocabulary
) -> Steps[tuple[sp.csc_array, list[int]]]:
    """term_matrix in steps: one slice per word, the product in numpy.

    One word at a time: a build does not hold every word's analysis at once.
    """
    link_word = array("i")
    link_term = array("i")
    link_tf = array("f")
    split: list[int] = []
    add = vocabulary.add
    for word_number, token in enumerate(words):
        word = analyzer.analyse_uncached(token)
        stem = add(word.stem)
        if word.parts:
            split.append(stem)
        link_word.append(word_number)
        link_term.append(stem)
        link_tf.append(1.0)
        for part in word.parts:
            link_word.append(word_number)
            link_term.append(add(part))
            link_tf.append(INDEXED_PART_TF)
        yield None
    shape = (counts.shape[1], len(vocabulary))
    matrix: sp.csc_array = yield lambda: _product(counts, link_word, link_term, link_tf, shape)
    return matrix, split


def _product(
    counts: sp.csr_array,
    link_word: array[int],
    link_term: array[int],
    link_tf: array[float],
    shape: tuple[int, int],
) -> sp.csc_array:
    analysis = sp.csr_array(
        (
            np.frombuffer(link_tf, dtype=np.float32),
            (np.frombuffer(link_word, dtype=np.int32), np.frombuffer(link_term, dtype=np.int32)),
        ),
        shape=shape,
    )
    return sp.csc_array(counts @ analysis)


def analysing(words: Iterable[str], analyzer: Analyzer) -> Steps[list[Word]]:
    """Each word's analysis, one slice per word (it reads the analyzer, changes nothing shared)."""
    found: list[Word] = []
    for token in words:
        found.append(analyzer.analyse_uncached(token))
        yield None
    return found


def linking(
    analysed: list[Word], counts: sp.csr_array, vocabulary: Vocabulary
) -> Steps[tuple[sp.csc_array, list[int], VocabView]]:
    """term_matrix's linking in steps, for an update of an index sharing `vocabulary`, and its view.

    The terms are spelled out one word a slice; only the appending of the new ones holds
    the vocabulary's lock (no slice boundary inside it), so updates of older indexes of
    the same lineage never interleave with it.
    """
    terms: list[str] = []
    link_word = array("i")
    link_tf = array("f")
    split_at: list[int] = []
    for word_number, word in enumerate(analysed):
        if word.parts:
            split_at.append(len(terms))
        terms.append(word.stem)
        terms.extend(word.parts)
        link_word.extend(array("i", [word_number]) * (1 + len(word.parts)))
        link_tf.append(1.0)
        link_tf.extend(array("f", [INDEXED_PART_TF]) * len(word.parts))
        yield None
    with vocabulary.lock:
        numbers = array("i", map(vocabulary.add, terms))
        view = vocabulary.view()
    yield None
    # The product has a column per KB term: a pass over the vocabulary, in numpy.
    shape = (counts.shape[1], len(view))
    matrix: sp.csc_array = yield lambda: _product(counts, link_word, numbers, link_tf, shape)
    return matrix, [numbers[at] for at in split_at], view
