"""HTML → main text as markdown (headings, paragraphs, list items) through selectolax."""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

# Page furniture, never content.
_DROP = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside",
         "form", "iframe", "button", "head")  # fmt: skip
_MAIN = ("main", "article", "[role=main]", "body")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({"p", "pre", "blockquote", "dt", "dd", "tr", "caption", "figcaption",
                     "address", "summary"})  # fmt: skip
_SPACE_RE = re.compile(r"\s+")
_HTML_START_RE = re.compile(rb"^\s*(<!doctype html|<html[\s>])", re.IGNORECASE)


def looks_like_html(text: str) -> bool:
    """Whether a "text" file is really an HTML page."""
    return bool(_HTML_START_RE.match(text[:512].encode("utf-8", "ignore")))


def html_text(html: str) -> str:
    """The page's main text with its headings as markdown headings."""
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _SPACE_RE.sub(" ", title_node.text()).strip() if title_node else ""
    for tag in _DROP:
        for node in tree.css(tag):
            node.decompose()
    root = next((n for sel in _MAIN if (n := tree.css_first(sel)) is not None), None)
    if root is None:
        return ""
    lines: list[str] = []
    _walk(root, lines)
    if title and not any(line.startswith("# ") for line in lines):
        lines.insert(0, f"# {title}")
    return "\n\n".join(line for line in lines if line.strip())


def _inline(node: LexborNode) -> str:
    return _SPACE_RE.sub(" ", node.text(deep=True, separator=" ")).strip()


def _walk(node: LexborNode, lines: list[str]) -> None:
    """Depth first: a heading or block becomes one line; other elements are walked into."""
    loose: list[str] = []

    def flush() -> None:
        text = _SPACE_RE.sub(" ", " ".join(loose)).strip()
        if text:
            lines.append(text)
        loose.clear()

    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            loose.append(child.text_content or "")
            continue
        if tag in ("a", "b", "strong", "i", "em", "span", "code", "small", "abbr", "mark",
                   "sub", "sup", "u", "s", "time", "label", "q", "cite"):  # fmt: skip
            loose.append(_inline(child))
            continue
        flush()
        if tag in _HEADINGS:
            text = _inline(child)
            if text:
                lines.append("#" * _HEADINGS[tag] + " " + text)
        elif tag == "li":
            text = _inline(child)
            if text:
                lines.append(f"- {text}")
        elif tag in _BLOCKS:
            lines.append(_inline(child))
        elif tag in ("br", "hr", "img"):
            continue
        else:
            _walk(child, lines)
    flush()
