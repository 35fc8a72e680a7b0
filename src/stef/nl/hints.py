"""Hints agents write in Q_e: ``X refers to col = 'v'``, ``name = formula``,
``'Tiago' is the DisplayName``, and code among prose.

An enrichment is cut into clauses (:func:`_clauses`); each clause that maps an NL phrase to
columns, filters or aggregates becomes a :class:`stef.nl.context.Mapping`.

>>> _clauses("women refers to SEX = 'F'; adults refers to age >= 18")
[(0, 25), (26, 53)]
"""

from __future__ import annotations

import re

from stef.nl import hint_patterns as hp
from stef.nl import lexicon as lx
from stef.nl.code import _formula, _scan_code
from stef.nl.context import Mapping, _Ctx
from stef.nl.words import _parse_number, _search_ci
from stef.spec import Filter

_DISTINCT_WORD = re.compile(r"\bdistinct\b", re.I)


_PARENS_AND_COMMAS = re.compile(r"[(),]")


def _clauses(text: str) -> list[tuple[int, int]]:
    """Clause spans of an enrichment: split at ``;``, newlines, sentence ends, and at commas
    outside parentheses that open a new hint (``..., element = 's' means Sulfur``)."""
    cuts = [(m.start(), m.end()) for m in hp.CLAUSE_SPLIT.finditer(text)]
    cuts += [
        (m.start(), m.end())
        for m in hp.LOWER_SENTENCE.finditer(text)
        if hp.NEW_HINT.match(text, m.end())
    ]
    depth = 0
    for m in _PARENS_AND_COMMAS.finditer(text) if "," in text else ():
        ch, i = m.group(), m.start()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and hp.NEW_HINT.match(text, i + 1):
            cuts.append((i, i + 1))
    out: list[tuple[int, int]] = []
    pos = 0
    for a, b in sorted(cuts):
        if a >= pos:
            out.append((pos, a))
            pos = b
    out.append((pos, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t,.:":
        start += 1
    while end > start and text[end - 1] in " \t,.:":
        end -= 1
    return start, end


def _step_hints(ctx: _Ctx) -> None:
    """Read each clause of an enrichment as a hint, a definition or code; consume it."""
    for start, end in _clauses(ctx.text):
        taken = _hint_clause(ctx, ctx.text[start:end], start)
        if taken is not None:  # a definition in prose leaves its right side to the prose steps
            ctx.take(start, taken)


_OP_CHAR = re.compile(r"[=<>(]")


def _split_hint(clause: str) -> tuple[int, int, int, int] | None:
    """(lhs start, lhs end, rhs start, rhs end) of ``X refers to Y`` or ``name = formula``."""
    verb = _search_ci(hp.MAPPING_VERB, clause)
    if verb:
        return 0, verb.start(), verb.end(), len(clause)
    d = hp.DEFINITION.match(clause)
    if d:
        lhs, rhs = d.group("lhs").strip(), d.group("rhs")
        named = lhs.casefold() in lx.CODE_WORDS | {"formula", "difference"}
        lhs_words = lhs.casefold().split()
        if not lhs_words:
            return None  # "= x" defines nothing
        condition = not lx.CONDITION_WORDS.isdisjoint(lhs_words) or lhs_words[0] in lx.IMPERATIVES
        if not condition and (" " in lhs or named or (lhs.islower() and _OP_CHAR.search(rhs))):
            return d.start("lhs"), d.end("lhs"), d.start("rhs"), d.end("rhs")
    return None


#: An acronym spelled out: "MRR = monthly recurring revenue", "AOV: average order value".
_ACRONYM = re.compile(
    r"\s*(?P<a>[A-Z]{2,6})\s*(?:=|:|-)\s*(?P<w>[A-Za-z]+(?:[\s-]+[A-Za-z]+){1,5})"
)


def _spells_acronym(clause: str) -> bool:
    """Does ``clause`` open by spelling an acronym out, word by word, its first letters the
    acronym's ("MRR = monthly recurring revenue: …")? A definition in prose, not code.

    >>> _spells_acronym("MRR = monthly recurring revenue: sum of …"), _spells_acronym("A2 = x")
    (True, False)
    """
    m = _ACRONYM.match(clause)
    if m is None:
        return False
    acronym = m.group("a").casefold()
    words = re.split(r"[\s-]+", m.group("w").casefold())[: len(acronym)]
    return "".join(w[0] for w in words) == acronym


def _hint_clause(ctx: _Ctx, clause: str, offset: int) -> int | None:
    """Turn one clause into a :class:`Mapping` (or code filters) and return where the text it
    consumed ends (the clause's end), or None for plain prose. For a ``name = prose``
    definition that no code or literal reads ("active customer = a customer with an order in
    the last 90 days") it ends where the right side starts: the prose steps read its periods,
    numbers and values. (An offset, not a bool: mypyc reads ``bool | int`` as an int.)"""
    if _spells_acronym(clause):
        return None  # "MRR = monthly recurring revenue": no column on either side
    parts = _split_hint(clause)
    if parts is None:
        im = _search_ci(hp.IS_MAPPING, clause)
        if im and _names_value(clause[: im.start()].strip()) and len(im.group("rhs").split()) <= 6:
            _is_hint(ctx, clause[: im.start()].strip(), im.group("rhs").strip().rstrip("."), clause)
            return offset + len(clause)
        if hp.CODE_HINT.search(clause):  # code among prose: its comparisons and calls only
            for c in _scan_code(ctx, clause, offset):
                ctx.add_column(c)
            _formula(ctx, clause, None)
        return None
    ls, le = _strip_span(ctx.text, offset + parts[0], offset + parts[1])
    rs, re_ = _strip_span(ctx.text, offset + parts[2], offset + parts[3])
    if hp.LHS_CODE.search(ctx.text[ls:le]) and not hp.CODE_HINT.search(ctx.text[rs:re_]):
        (ls, le), (rs, re_) = (rs, re_), (ls, le)  # "element = 'cl' means Chlorine"
    if hp.CODE_NAMES.fullmatch(ctx.text[ls:le]) and hp.PLAIN_WORDS.fullmatch(ctx.text[rs:re_]):
        (ls, le), (rs, re_) = (rs, re_), (ls, le)  # "A3 refers to region": A3 holds regions
    phrase, rhs = ctx.text[ls:le], ctx.text[rs:re_]
    before, aggs_before = len(ctx.spec.filters), len(ctx.spec.aggregations)
    cols = _scan_code(ctx, rhs, rs)
    filters = ctx.spec.filters[before:]
    if not filters and not cols:
        filters, cols = _plain_rhs(ctx, rhs)
    for c in cols:
        ctx.add_column(c)
    _formula(ctx, rhs, phrase)
    if _search_ci(_DISTINCT_WORD, rhs):
        ctx.spec.distinct = True
    for qm in hp.STRINGS.finditer(phrase):
        ctx.add_literal(ctx.value(qm.group(0)))
    aggs = tuple(ctx.spec.aggregations[aggs_before:])
    clause_text = " ".join(clause.split())
    ctx.mappings.append(
        Mapping(phrase, tuple(dict.fromkeys(cols)), tuple(filters), clause_text, aggs)
    )
    ctx.cue(f"{phrase} -> {rhs}" if len(rhs) < 80 else phrase)
    if _prose_definition(clause, rhs) and not filters and not cols and not aggs:
        return rs
    return offset + len(clause)


def _prose_definition(clause: str, rhs: str) -> bool:
    """Is ``clause`` a ``name = …`` definition (no "refers to", no "means") whose right side
    is prose of three words or more, with no quote ("active customer = a customer with an
    order in the last 90 days")?

    >>> _prose_definition("power user = at least 20 sessions", "at least 20 sessions")
    True
    >>> _prose_definition("X refers to a b c", "a b c"), _prose_definition("a = 'x y z'", "'x y z'")
    (False, False)
    """
    if _search_ci(hp.MAPPING_VERB, clause) or "'" in rhs or '"' in rhs:
        return False
    return len(rhs.split()) >= 3


def _names_value(subj: str) -> bool:
    """A subject that names a value: quoted, or a few capitalised words (``Elijah Allen``)."""
    if not subj or hp.CODE_HINT.search(subj):
        return False
    if subj[0] in "'\"":
        return True
    words = subj.split()
    return (
        len(words) <= 4
        and words[0].casefold() not in lx.NOT_VALUES
        and all(w[0].isupper() or w[0].isdigit() or w in lx.VALUE_CONNECTORS for w in words)
    )


_LIST_SEPARATOR = re.compile(r"\s*(?:,|\band\b|&|\+)\s*")


def _plain_rhs(ctx: _Ctx, rhs: str) -> tuple[list[Filter], list[str]]:
    """A hint's right side without code: a lone literal, or a list of column names."""
    q = hp.QUOTED_ONLY.fullmatch(rhs)
    num = _parse_number(rhs)
    raw = num[0] if num else q.group(1) or q.group(2) if q else None
    if raw:
        f = Filter(None, "=", (ctx.value(raw.replace("''", "'")),), rhs.strip(), ctx.source)
        ctx.add_filter(f)
        return [f], []
    named = hp.COLUMN_WORD.fullmatch(rhs.strip())
    if named:  # "Germany refers to the country column"
        return [], [ctx.column(named.group("a") or named.group("b"))]
    ids = hp.IDENT_LIST.match(rhs)
    if not ids:
        return [], []
    names = [t for t in _LIST_SEPARATOR.split(ids.group("ids")) if t]
    return [], [ctx.column(t.strip("`")) for t in names if t.casefold() not in lx.CODE_WORDS]


_ARTICLE_START = re.compile(r"^(?:the|a|an)\s+", re.I)
_OF_IN_FOR = re.compile(r"\s+(?:of|in|for)\s+")


def _is_hint(ctx: _Ctx, subj: str, rhs: str, clause: str) -> None:
    """``'Tiago' is the DisplayName`` / ``Commentator is the name of the badge``."""
    rhs = _ARTICLE_START.sub("", rhs)
    col_raw = _OF_IN_FOR.split(rhs, maxsplit=1)[0].strip()
    column = ctx.column(col_raw) if col_raw and " " not in col_raw else None
    f = Filter(column, "=", (ctx.value(subj),), " ".join(clause.split()), ctx.source)
    ctx.add_filter(f)
    ctx.mappings.append(Mapping(subj.strip("'\""), (column,) if column else (), (f,), f.text))
