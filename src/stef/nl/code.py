"""Code written inside a text (mostly Q_e, ``symbol_only`` for questions): comparisons
(``SEX = 'F'``, ``YEAR(Birthday) = 1980``, ``x IN (1, 2)``) become filters, top-level
aggregate calls (``AVG(salary)``) aggregations, and computations (``DIVIDE(a, b)``,
``a / b * 100``) formulas. A small tokenizer (:data:`stef.nl.lexicon.CODE_TOKEN`), not SQL
parsing: the code in hints is seldom valid SQL.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from stef.nl import lexicon as lx
from stef.nl.context import _Ctx
from stef.nl.words import _search_ci
from stef.spec import Aggregation, Filter


class _Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


def _code_tokens(text: str, offset: int) -> list[_Tok]:
    return [
        _Tok(m.lastgroup or "", m.group(0), m.start() + offset, m.end() + offset)
        for m in lx.CODE_TOKEN.finditer(text)
    ]


def _is_codey(tok: _Tok) -> bool:
    """Does an identifier look like a column name rather than an English word?"""
    t = tok.text
    return (
        tok.kind == "bq"
        or "_" in t
        or "." in t
        or bool(lx.CAMEL.search(t))
        or (t.isupper() and len(t) >= 2)
        or any(map(str.isdigit, t))
    )


def _literal(tok: _Tok) -> str | None:
    if tok.kind == "num":
        return tok.text
    if tok.kind != "str":
        return None
    closed = len(tok.text) > 1 and tok.text[-1] == tok.text[0]
    inner = tok.text[1:-1] if closed else tok.text[1:]
    return inner.replace("''", "'") if tok.text[0] == "'" else inner


def _depths(toks: list[_Tok]) -> list[int]:
    out, d = [], 0
    for t in toks:
        if t.kind == "rp":
            d = max(0, d - 1)
        out.append(d)
        if t.kind == "lp":
            d += 1
    return out


def _matching(toks: list[_Tok], i: int, step: int) -> int:
    """Index of the parenthesis matching ``toks[i]`` (``step`` 1: forward, -1: back)."""
    depth = 0
    j = i
    while 0 <= j < len(toks):
        k = toks[j].kind
        depth += (k == "lp") - (k == "rp") if step == 1 else (k == "rp") - (k == "lp")
        if depth == 0:
            return j
        j += step
    return len(toks) - 1 if step == 1 else -1


def _column_tokens(toks: list[_Tok]) -> list[_Tok]:
    """The tokens of a call's arguments that name columns (``Date`` in ``YEAR(Date)``)."""
    return [
        t
        for k, t in enumerate(toks)
        if t.kind == "bq"
        or (
            t.kind == "id"
            and (
                t.text.casefold() not in lx.CODE_WORDS
                or t.text.casefold() in lx.CODE_NAMES_AS_COLUMNS
            )
            and not (k + 1 < len(toks) and toks[k + 1].kind == "lp")
        )
    ]


def _operand_before(toks: list[_Tok], i: int) -> tuple[str | None, str | None, int] | None:
    """(column, function, first token index) of the operand that ends before token ``i``."""
    if i == 0:
        return None
    prev = toks[i - 1]
    if prev.kind == "bq":
        return prev.text.strip("`"), None, i - 1
    if prev.kind == "id":
        low = prev.text.casefold()
        if low in lx.CODE_WORDS and low not in lx.CODE_NAMES_AS_COLUMNS:
            return None
        before = toks[i - 2] if i >= 2 else None
        phrase = (
            not _is_codey(prev)
            and before is not None
            and before.kind == "id"
            and before.text.casefold() not in lx.CODE_BOUNDARIES
        )
        return (None if phrase else prev.text), None, i - 1
    if prev.kind == "rp":
        lp = _matching(toks, i - 1, -1)
        if lp <= 0 or toks[lp - 1].kind != "id":
            return None if lp < 0 else (None, None, lp)
        func: str | None = toks[lp - 1].text.casefold()
        inner = toks[lp + 1 : i - 1]
        ids = _column_tokens(inner)
        fmt = next((t.text.strip("'\"").casefold() for t in inner if t.kind == "str"), None)
        if func == "strftime" and fmt:
            func = lx.STRFTIME_FUNCS.get(fmt, "strftime")
        if func in lx.ARITHMETIC_FUNCS:
            func = None
        nested = any(t.kind == "lp" for t in inner)
        column = ids[0].text.strip("`") if len(ids) == 1 and not nested else None
        return column, func, lp - 1
    return None


#: The words that start a comparison written in words (``IS NOT``, ``NOT IN``, ``LIKE`` …).
_OPERATOR_WORDS = frozenset({"is", "not", "in", "like", "between"})


def _comparison_op(toks: list[_Tok], i: int) -> tuple[str, int] | None:
    """The operator starting at token ``i`` and the index after it, for code comparisons."""
    t = toks[i]
    if t.kind == "op":
        return {"==": "=", "<>": "!="}.get(t.text, t.text), i + 1
    if t.kind != "id":
        return None
    w = t.text.casefold()
    if w not in _OPERATOR_WORDS:
        return None
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    nw = nxt.text.casefold() if nxt else ""
    after = toks[i + 2] if i + 2 < len(toks) else None
    if w == "is" and nw == "not":
        return "!=", i + 2
    if w == "is" and nxt is not None and (nxt.kind == "str" or nw == "null"):
        return "=", i + 1
    if w == "not" and nw == "in" and after is not None and after.kind == "lp":
        return "not in", i + 2
    if w == "not" and nw in {"like", "between"}:
        return "not " + nw, i + 2
    if w == "in" and nxt is not None and nxt.kind == "lp":
        return "in", i + 1
    if w in {"like", "between"}:
        return w, i + 1
    return None


def _operand_values(
    toks: list[_Tok], op: str, j: int, column_lhs: bool
) -> tuple[list[str], str, int] | None:
    """(values, operator, index after) of the right-hand side starting at token ``j``.

    A bare word is a value only after a column and when short like a code (``Sex = F``).
    """
    n = len(toks)
    if j >= n:
        return None
    if op in {"in", "not in"}:
        rp = _matching(toks, j, 1)
        return [v for v in map(_literal, toks[j + 1 : rp]) if v is not None], op, rp + 1
    if op in {"between", "not between"}:
        got = [v for v in map(_literal, toks[j : j + 3]) if v is not None]
        return (got[:2], op, min(n, j + 3)) if len(got) >= 2 else None
    rt = toks[j]
    lit = _literal(rt)
    if lit is not None:
        return [lit], op, j + 1
    word = rt.text.casefold()
    if word == "null":
        return [], ("is null" if op == "=" else "is not null"), j + 1
    if word == "not" and j + 1 < n and toks[j + 1].text.casefold() == "null":
        return [], "is not null", j + 2
    bare = rt.text.rstrip("'\"")
    if rt.kind != "id" or (j + 1 < n and toks[j + 1].kind == "lp") or not column_lhs:
        return None
    if len(bare) > 3 or bare.casefold().endswith("id"):
        return None  # a column compared with a column (a join), or prose
    if bare.casefold() in ("sum", "avg", "max", "min"):
        return None  # "MRR = sum of monthly price": a definition, not a value
    return [bare], op, j + 1


def _scan_code(ctx: _Ctx, text: str, offset: int, symbol_only: bool = False) -> list[str]:
    """Add the comparisons and aggregates written as code in ``text``; return its columns
    (compared ones first, then every identifier-like operand or argument).

    ``symbol_only`` (for questions) keeps only ``col > 5``-style comparisons on
    identifier-like columns.
    """
    toks = _code_tokens(text, offset)
    depth = _depths(toks)
    columns: list[str] = []
    calls: list[tuple[int, int]] = []
    last: tuple[str | None, str | None] | None = None
    i = 0
    while i < len(toks):
        t = toks[i]
        found = _comparison_op(toks, i)
        if found is None or (symbol_only and t.kind != "op"):
            if (
                not symbol_only
                and t.kind == "id"
                and i + 1 < len(toks)
                and toks[i + 1].kind == "lp"
            ):
                _code_call(ctx, toks, i, depth)
                calls.append((t.start, toks[_matching(toks, i + 1, 1)].end))
            i += 1
            continue
        op, j = found
        lhs = _operand_before(toks, i)
        if lhs is None and last is not None and i and toks[i - 1].text.casefold() in {"and", "or"}:
            lhs = (last[0], last[1], i)
        rhs = _operand_values(toks, op, j, lhs[0] is not None) if lhs is not None else None
        if (
            lhs is None
            or rhs is None
            or (symbol_only and (lhs[0] is None or not _is_codey(toks[i - 1])))
        ):
            i += 1
            continue
        col_raw, func, first = lhs
        vals, op, end_idx = rhs
        if not vals and op not in {"is null", "is not null"}:
            i += 1
            continue
        last = (col_raw, func)
        column = ctx.column(col_raw) if col_raw else None
        if column:
            columns.append(column)
        start, end = toks[first].start, toks[end_idx - 1].end
        frag = " ".join(ctx.text[start:end].split())
        f = Filter(column, op, tuple(ctx.value(v) for v in vals), frag, ctx.source, func)
        ctx.add_filter(f, start, end)
        i = end_idx
    for start, end in calls:
        ctx.take(start, end)
    return columns if symbol_only else columns + _code_columns(ctx, toks)


def _code_call(ctx: _Ctx, toks: list[_Tok], i: int, depth: list[int]) -> None:
    """A top-level aggregate call (``AVG(salary)``) → an aggregation; ``DIVIDE`` → division."""
    func = toks[i].text.casefold()
    if func == "divide":
        ctx.spec.flags["division"] = True
    if func not in lx.CODE_AGGREGATES or depth[i] > 0:
        return
    rp = _matching(toks, i + 1, 1)
    neighbours = (toks[i - 1] if i else None, toks[rp + 1] if rp + 1 < len(toks) else None)
    if any(t is not None and t.kind in {"arith", "op"} for t in neighbours):
        return  # part of a formula or a comparison, not the asked-for aggregate
    inner = toks[i + 2 : rp]
    ids = _column_tokens(inner)
    arg: str | None = None
    if not ids and any(x.text == "*" for x in inner):
        arg = "*"
    elif len(ids) == 1 and not any(x.kind == "lp" for x in inner):
        arg = ctx.column(ids[0].text.strip("`"))
    distinct = any(x.text.casefold() == "distinct" for x in inner)
    text = " ".join(ctx.text[toks[i].start : toks[rp].end].split())
    agg = Aggregation(lx.CODE_AGGREGATES[func], arg, distinct, text)
    if agg not in ctx.spec.aggregations:
        ctx.spec.aggregations.append(agg)
    ctx.spec.distinct = ctx.spec.distinct or distinct
    ctx.cue(text)


def _code_columns(ctx: _Ctx, toks: list[_Tok]) -> list[str]:
    """Identifier-like names in code: function arguments and arithmetic operands."""
    out: list[str] = []
    for k, t in enumerate(toks):
        if t.kind == "bq":
            out.append(ctx.column(t.text.strip("`")))
            continue
        low = t.text.casefold()
        if t.kind != "id" or low in lx.CODE_WORDS:
            continue
        prev = toks[k - 1].kind if k else ""
        nxt = toks[k + 1].kind if k + 1 < len(toks) else ""
        if nxt == "lp":
            continue
        if (
            _is_codey(t)
            or prev in {"lp", "comma", "arith", "op"}
            or nxt in {"rp", "comma", "arith", "op"}
        ):
            out.append(ctx.column(t.text))
    return out


_OPEN_PAREN_SPACE = re.compile(r"\(\s+")
_SPACE_CLOSE_PAREN = re.compile(r"\s+\)")


#: Each form of :data:`lx.FORMULA_OPS` holds one of these: without one, no formula.
_FORMULA_CHAR = re.compile(r"[(/*+\-]")


def _formula(ctx: _Ctx, code: str, name: str | None) -> None:
    """Record ``code`` as a formula when it computes something (``DIVIDE(...)``, ``a / b``)."""
    if not _FORMULA_CHAR.search(code):  # nor in ``bare``, which takes characters away
        return
    bare = lx.QUOTED_NAME.sub("name", lx.STRINGS.sub("''", code))
    if not (_search_ci(lx.FORMULA_OPS, bare) and lx.FORMULA_SHAPE.search(bare)):
        return
    spaced = " ".join(code.split()).casefold()
    norm = _OPEN_PAREN_SPACE.sub("(", _SPACE_CLOSE_PAREN.sub(")", spaced))
    norm = norm.strip(" .;")
    if norm not in ctx.spec.formulas:
        ctx.spec.formulas.append(norm)
    if _search_ci(lx.DIVISION, bare):
        ctx.spec.flags["division"] = True
    if (name and _search_ci(lx.RATIO_RE, name)) or _search_ci(lx.PERCENT_FORMULA, bare):
        ctx.spec.flags["ratio"] = True
    ctx.cue(norm if len(norm) <= 80 else norm[:77] + "...")
