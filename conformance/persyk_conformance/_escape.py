"""Adapter text is data: one escaping function per output kind, and nothing else escapes.

Whatever an adapter or a case can put into a report (the implementation's name, version and
homepage, diagnostics, ``internal`` messages, stderr excerpts, case titles, expected-failure
reasons) goes through the function of the output it is written to, field by field, where the
renderer puts the field in. What every function neutralises:

* CR and every other C0 and C1 control, ESC among them (so no terminal escape sequence, title
  change or line erase gets through, and no CR starts a new Markdown line);
* the bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069: Trojan Source) and
  every other character a reader cannot see (format characters, line and paragraph separators,
  lone surrogates, unassigned and private-use code points, U+FEFF).

Each is shown as ``show`` marks it (``⟨CR⟩``, ``⟨LF⟩``, ``⟨U+001B⟩``, ``⟨0xFF⟩`` for a byte
that was not UTF-8), so the evidence stays readable. Each format's own metacharacters are
escaped on top: Markdown's punctuation and inline HTML, XML's and HTML's ``<&>"'``. JSON keeps
the text exact: only JSON's own ``\\u`` escapes spell the characters above.

Line feeds and tabs are kept where they are no structure (XML and HTML text); a terminal line
or a Markdown table cell gets ``⟨LF⟩``, so a field never makes a line of its own.
"""

from __future__ import annotations

import json
import re
from html import escape as _html_escape
from typing import Any

__all__ = ["for_html", "for_json", "for_markdown", "for_terminal", "for_xml", "mark_invisible"]

_NAMED = {"\r": "⟨CR⟩", "\n": "⟨LF⟩", "\t": "⟨TAB⟩"}
# Everything but printable ASCII: the few characters worth a second look (str.isprintable
# is False for C0, C1, format characters such as the bidi controls, separators other than the
# space, surrogates, private-use and unassigned code points).
_NOT_PLAIN = re.compile(r"[^\x20-\x7e]")
# Layout characters harmless in XML and HTML text.
_LAYOUT = frozenset("\n\t")


def _marker(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, smuggled by surrogateescape
        return f"⟨0x{code - 0xDC00:02X}⟩"
    return _NAMED.get(char) or f"⟨U+{code:04X}⟩"


def _visible(char: str) -> bool:
    return char.isprintable() and char != "\ufeff"


def _mark(text: str, keep: frozenset[str] = frozenset()) -> str:
    def one(match: re.Match[str]) -> str:
        char = match[0]
        return char if char in keep or _visible(char) else _marker(char)

    return _NOT_PLAIN.sub(one, text)


def for_terminal(text: str) -> str:
    """A field of a line printed on a terminal or in a CI log: every character a reader could
    not see marked (``⟨CR⟩``, ``⟨U+202E⟩``; a lone surrogate from ``surrogateescape`` as the
    byte that was not UTF-8), so no control reaches the terminal, and no line break either
    (``⟨LF⟩``)."""
    return _mark(text)


mark_invisible = for_terminal  # what ``show`` calls it: its bytes are marked the same way


# A field stays inside its cell and its line. Characters that open markup (inline HTML,
# links and images, emphasis, code spans, headings, strike-through, the table's |) are
# backslash-escaped; <, > and & are entities (a backslash does not stop every HTML block).
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# An underscore between two letters or digits can neither open nor close emphasis (CommonMark's
# flanking rules): RECORD_LONE_SURROGATE stays as written.
_MD_PUNCTUATION = re.compile(r"([\\`*\[\]!#~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_ENTITY = re.compile("[&<>]")


def for_markdown(text: str) -> str:
    """A field of a Markdown line or table cell (GitHub's step summary renders inline HTML
    and images): every control marked, ``⟨LF⟩`` included, and every metacharacter escaped."""
    marked = _MD_PUNCTUATION.sub(r"\\\1", _mark(text))
    return _MD_ENTITY.sub(lambda m: _MD_ENTITIES[m[0]], marked)


def for_xml(text: str) -> str:
    """Text or an attribute value of an XML 1.0 document (JUnit), before ElementTree escapes
    ``<&>"``: every control but LF and TAB marked, which also removes every character XML 1.0
    cannot carry (lone surrogates, U+FFFE, U+FFFF)."""
    return _mark(text, _LAYOUT)


def for_html(text: str) -> str:
    """HTML text or an attribute value: every control but LF and TAB marked, then ``<&>"'``
    as entities. Text that is markup already (it has ``__html__``, as what Jinja2's
    autoescaping made of a value does) gets the markers only. The site's templates apply it
    to every value they print (Jinja2's ``finalize``), so no value escapes it."""
    marked = _mark(text, _LAYOUT)
    return marked if hasattr(text, "__html__") else _html_escape(marked, quote=True)


# The value is kept exact; JSON's \u escapes spell what a viewer of the file could not
# see (json.dumps already escapes C0; C1, the bidi controls and the rest pass through it raw).
def _json_escape(match: re.Match[str]) -> str:
    char = match[0]
    if _visible(char):
        return char
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


_NON_ASCII = re.compile(r"[^\x00-\x7e]")


def for_json(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON text (UTF-8 where printable): every invisible character a ``\\u``
    escape, so the file is safe to print and parses back to exactly ``value``."""
    # Outside strings json.dumps writes ASCII only: every match is inside a string.
    return _NON_ASCII.sub(_json_escape, json.dumps(value, indent=indent, ensure_ascii=False))
