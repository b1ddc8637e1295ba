"""Text from results files made safe for the medium it is shown in.

Every string a results file carries (names, branches, GPU names, algorithms, dates, paths,
warnings built from them) is untrusted: it may hold escape sequences that rewrite a
terminal, or markdown and HTML that forge a pull-request comment.

* `term_clean` - for a terminal (also with ``NO_COLOR`` and when piped, since a pipe often
  ends in one): C0 and C1 control characters, DEL, line and paragraph separators and bidi
  overrides are replaced; tabs and line breaks become spaces.
* `md_escape` - for one line of GitHub-flavoured markdown (a table cell or a header):
  `term_clean` first, then HTML-escaped, markdown punctuation backslash-escaped, and images,
  links, autolinks and @-mentions defused with a zero-width space.

Lone surrogates (which no UTF-8 stream can carry) become U+FFFD in both.
"""

from __future__ import annotations

import html
import re

REPLACEMENT = "\N{REPLACEMENT CHARACTER}"
ZWSP = "\N{ZERO WIDTH SPACE}"

# C0 controls, DEL, C1 controls; U+2028/U+2029 (JavaScript and some terminals end lines there);
# bidi embedding, override and isolate controls (they reorder what follows on screen).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SPACE_LIKE = frozenset("\t\n\r\x0b\x0c\x85\u2028\u2029")

# Markdown punctuation with a meaning inside a line: code spans, emphasis with stars (bold that
# could pass for a verdict), links and images, table cells, strike-through. Underscores stay:
# inside a word they emphasise nothing, and file names are full of them. Angle brackets and
# ampersands are HTML-escaped after this; quotes are not (in markdown's text they are text, and a raw
# comment read in a CI log should say "the suite's", not "the suite&#x27;s").
_MD_PUNCT = re.compile(r"([\\`*\[\]!|~])")
_AUTOLINK = re.compile(r"(?i)(://|www\.)")
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=[A-Za-z0-9_])")  # not after a word character: main@1a2b is no mention


def _replace_control(match: re.Match[str]) -> str:
    return " " if match.group() in _SPACE_LIKE else REPLACEMENT


def term_clean(text: object) -> str:
    """`text` as a string that cannot control a terminal: one line, no control characters."""
    s = text if isinstance(text, str) else str(text)
    if _SURROGATE.search(s):
        s = _SURROGATE.sub(REPLACEMENT, s)
    return _CONTROL.sub(_replace_control, s)


def md_escape(text: object) -> str:
    """`text` as literal text on one line of GitHub-flavoured markdown (table cells included)."""
    s = _MD_PUNCT.sub(r"\\\1", term_clean(text))
    s = html.escape(s, quote=False)
    s = _AUTOLINK.sub(lambda m: m.group()[0] + ZWSP + m.group()[1:], s)
    return _MENTION.sub("@" + ZWSP, s)


#: What a spreadsheet reads as the start of a formula (OWASP "CSV injection"): =, +, -, @, and
#: a tab or carriage return before one.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
#: The mark put before a text cell that starts like a formula: a spreadsheet shows it as text.
FORMULA_MARK = "'"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_cell(text: str) -> str:
    """A text cell for a CSV file: one that begins like a formula gets `FORMULA_MARK` before it;
    a number (``-2``, ``+1e-3``) is never changed, so that numeric columns stay parseable. Quoting
    (of commas, quotes, line breaks and ``\\r``) is the writer's."""
    if text.startswith(FORMULA_PREFIXES) and not _is_number(text):
        return FORMULA_MARK + text
    return text


def csv_uncell(text: str) -> str:
    """`csv_cell` undone: what a reader of primbench's own CSV sees as the name written."""
    if text.startswith(FORMULA_MARK) and text[1:].startswith(FORMULA_PREFIXES) and not _is_number(text[1:]):
        return text[1:]
    return text


__all__ = ["csv_cell", "csv_uncell", "md_escape", "term_clean"]
