"""Patterns of the hints an agent writes in the enriched question: clauses, mapping verbs
(``refers to``, ``means``), definitions (``name = formula``), code tokens and formulas.
Re-exported by :mod:`stef.nl.lexicon`, which the extraction steps read them from.

>>> bool(MAPPING_VERB.search("women refers to SEX = 'F'"))
True
"""

from __future__ import annotations

import re

CLAUSE_SPLIT = re.compile(r";|\n+|(?<=[a-z)'\"])\.\s+(?=[A-Z])")
NEW_HINT = re.compile(r"[^,;()]{1,60}?\s+(?:refers?\s+to|means|stands\s+for)\b")
#: A sentence end before a lower-case word: a clause cut only where a new hint starts there
#: ("3-D Man is the superhero_name. attributes refers to attribute_name").
LOWER_SENTENCE = re.compile(r"(?<=[a-z0-9_)'\"])\.\s+(?=[a-z])")
MAPPING_VERB = re.compile(
    r"\b(?:refer[a-z]*\s+to|refers?|means|mean|stands?\s+for|mapp?s?\s+to|"
    r"(?:can\s+be\s+|is\s+)?(?:re)?presented\s+(?:as|by)|"
    r"(?:can\s+be\s+|is\s+)?(?:computed|calculated)\s+(?:by|as)|can\s+(?:be\s+)?represent(?:ed)?"
    r"(?:\s+(?:by|as))?|represents?|indicates?|implies|can\s+refer\s+to|"
    r"contains?\s+the\s+information\s+(?:about|of)|is\s+equivalent\s+to|equals\s+to)\b",
    re.I,
)
#: Coded column names ("A3", "A2, A3") and a phrase of plain lower-case words ("region",
#: "average salary"): "A3 refers to region" names the column on its left.
CODE_NAMES = re.compile(r"[A-Za-z]{1,3}\d{1,3}(?:\s*,\s*[A-Za-z]{1,3}\d{1,3})*")
PLAIN_WORDS = re.compile(r"(?:the\s+)?[a-z]+(?:\s+[a-z]+){0,3}")
LHS_CODE = re.compile(r"^\s*[\w.`]+\s*(?:=|!=|<>|>=|<=|<|>)\s*\S")
IS_MAPPING = re.compile(r"\s(?:is|are)\s+(?:the\s+|a\s+|an\s+)?(?P<rhs>.+)$", re.I | re.S)
DEFINITION = re.compile(r"^(?P<lhs>[^=<>!()'\"`]+?)\s*(?<![<>!])=(?!=)\s*(?P<rhs>.+)$", re.S)
CODE_HINT = re.compile(r"[=<>]|`|\b[A-Za-z_]\w*\s*\(|\b\w+_\w+\b")
HINT_STYLE = re.compile(
    r"\brefers?\s+to\b|\bmeans\b|\bstands?\s+for\b|\bmapp?s?\s+to\b|;|\b[A-Z]{3,}\s*\(", re.I
)
IDENT_LIST = re.compile(
    r"^\s*(?:the\s+)?(?P<ids>[A-Za-z_`][\w.`]*(?:\s*(?:,|\band\b|&|\+)\s*[A-Za-z_`][\w.`]*)*)\s*\.?\s*$"
)
COLUMN_WORD = re.compile(
    r"(?:the\s+)?(?P<a>[\w.`]+)\s+(?:column|field)|(?:the\s+)?(?:column|field)\s+(?P<b>[\w.`]+)",
    re.I,
)
QUOTED_ONLY = re.compile(r"\s*(?:'((?:[^']|'')*)'|\"([^\"]*)\")\s*")
CODE_OPS = re.compile(r"[=<>]")
DIGIT = re.compile(r"\d")
UPPER = re.compile(r"[A-Z]")
QUOTE_CHARS = re.compile(r"[`'\"]")
CODE_TOKEN = re.compile(
    r"(?P<str>'(?:[^'\n]|'')*'|'[^'\n]+$|\"[^\"\n]*\")"
    r"|(?P<bq>`[^`\n]*`)"
    r"|(?P<date>\d{4}-\d{2}-\d{2})(?![\d:])"  # one date, no subtraction: 2025-07-01
    r"|(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<id>[A-Za-z_]\w*(?:\.[A-Za-z_`][\w`]*)*)"
    r"|(?P<op>>=|<=|<>|!=|==|=|>|<)"
    r"|(?P<lp>\()|(?P<rp>\))|(?P<comma>,)"
    r"|(?P<arith>[*/+\-%])"
)
STRFTIME_FUNCS = {"%y": "year", "%m": "month", "%d": "day", "%y-%m": "month", "%y%m": "month"}
CAMEL = re.compile(r"[a-z][A-Z]")
FORMULA_OPS = re.compile(r"\b(?:divide|multiply|subtract|add)\s*\(|[/*+]|\)\s*-|\w\s+-\s+\w", re.I)
FORMULA_SHAPE = re.compile(r"\w\s*\(|[A-Za-z_]\w*\s*[/*+-]\s*[A-Za-z_(]")
#: A division: ``DIVIDE(``, or a slash between operands (``a / b``), not one opening a
#: parenthesis in prose (``flagged (/voted)``).
DIVISION = re.compile(r"\bdivide\s*\(|(?<![(\s])\s*/|/\s*(?=[\w(`\[])(?<![(]/)", re.I)
PERCENT_FORMULA = re.compile(r"\*\s*100\b|\bmultiply\s*\(.*,\s*100\s*\)", re.I)
STRINGS = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"")
#: Quoted names (`Charter School (Y/N)`, [Free Meal Count]), whose characters compute
#: nothing: code reads each as one plain name.
QUOTED_NAME = re.compile(r"`[^`]*`|\[[^\]]*\]")
WORD_TOKEN = re.compile(r"[a-z0-9]+")
