"""Values an NL text names: quoted strings and backquoted columns, capitalised names
(``customers in Germany``), the rules' value synonyms and column synonyms, and numbers
(comparatives such as ``more than 10`` / ``between 5 and 10``, ``district 5``, bare numbers
as literals).
"""

from __future__ import annotations

import re
from functools import lru_cache

from stef.nl import lexicon as lx
from stef.nl.context import _adjacent_column, _Ctx
from stef.nl.places import stated_place
from stef.nl.words import _is_plural, _parse_number, _prev_words, word_tokens
from stef.rules import term_key
from stef.spec import NEGATED_OP, WEAK_CUE, Filter, normalize_number

#: Phrases that say how the answer should look, never what to filter on: a date or
#: number format, rounding, a unit or scale, a percentage.
ANSWER_FORMAT = re.compile(
    r"\b(?:(?:in|with|using|to)\s+(?:the\s+|a\s+)?(?:format|form)(?:\s+of)?"
    r"|formatted\s+(?:as|like|in)|in\s+the\s+form)\s+"
    r"['\"`]?[A-Za-z]{1,4}(?:[-/.: ][A-Za-z]{1,4})*['\"`]?"
    r"|\b(?:rounded|round(?:ing)?)\s+(?:up\s+|down\s+)?(?:off\s+)?(?:to\s+)?(?:the\s+nearest\s+)?"
    r"(?:\w+\s+)?(?:decimals?|decimal\s+places?|digits?|places?|integers?|whole\s+numbers?|"
    r"hundredths?|tenths?|thousandths?|cents?)\b"
    r"|\bwith\s+(?:\w+\s+)?decimal\s+places?\b"
    r"|\b(?:in|as)\s+(?:a\s+)?(?:percentages?|percents?|millions?|thousands?|billions?|"
    r"hundreds?|usd|eur|gbp|dollars|euros|pounds|kb|mb|gb|seconds|minutes|hours|days)\b"
    r"|\b(?:in|as)\s+(?:YYYY|MM|DD|HH)[-/.:A-Za-z ]*"
    r"|\b(?:best\s+)?(?:viewed|view|shown|displayed|rendered)\s+(?:as|in)\s+(?:\"[^\"]{1,40}\"|'[^']{1,40}')",
    re.IGNORECASE,
)


#: A word of each form of ``ANSWER_FORMAT`` but one ("format", "rounded", "decimal", a
#: unit, "shown" …: each after a space and ending a word); the form "in YYYY-MM" holds one
#: of ``_DATE_MASKS``, not always as a whole word ("as mmyy").
_FORMAT_WORDS = lx._words(
    "format form formatted round rounded rounding decimal percentage percentages percent "
    "percents million millions thousand thousands billion billions hundred hundreds usd eur "
    "gbp dollars euros pounds kb mb gb seconds minutes hours days viewed view shown "
    "displayed rendered"
)
_DATE_MASKS = ("yyyy", "mm", "dd", "hh")


def _step_answer_format(ctx: _Ctx) -> None:
    """Answer-format phrases (``in the format YYYY-MM``, ``rounded to two decimals``, ``in
    millions``, ``as a percentage``) are taken, so no later step reads a value in them.

    >>> [m.group(0) for m in ANSWER_FORMAT.finditer("revenue in the format YYYY-MM, in millions")]
    ['in the format YYYY-MM', 'in millions']
    """
    formats = ctx.may_have(_FORMAT_WORDS) or ctx.may_hold(*_DATE_MASKS)
    for m in ctx.scan(ANSWER_FORMAT) if formats else ():  # its lower-case twin on ASCII text
        ctx.cue(m.group(0))
        ctx.take(m.start(), m.end())
    if "://" in ctx.text or "www." in ctx.low:  # what every match of _URL holds
        for m in _URL.finditer(ctx.text):
            ctx.take(m.start(), m.end())  # "see http://…/questions/121": a link, not values


#: A web address: its numbers and words are a link's, not the question's.
_URL = re.compile(r"\b(?:https?://|www\.)[^\s\])>\"']+", re.I)


def _step_quoted(ctx: _Ctx) -> None:
    """Backquoted names are columns; quoted strings are values (``=``, ``like``, ``!=``)."""
    for m in lx.BQ.finditer(ctx.text):
        if ctx.free(m.start(), m.end()):
            ctx.add_column(ctx.column(m.group(1)))
            ctx.cue(m.group(0))
            ctx.take(m.start(), m.end())
    for rx in (lx.DQ, lx.SQ):
        for m in rx.finditer(ctx.text):
            inner = m.group(1).replace("''", "'") if rx is lx.SQ else m.group(1)
            if not ctx.free(m.start(), m.end()) or not inner.strip():
                continue
            before = ctx.low[max(0, m.start() - 40) : m.start()]
            if before.endswith("the ") and ctx.low.startswith(" of", m.end()) and inner.islower():
                ctx.add_column(ctx.column(inner))  # Find the "date became customers" of ...
                ctx.take(m.start(), m.end())
                continue
            if _defined_term(inner, ctx.low, m.end()):
                ctx.take(m.start(), m.end())  # "a "useful question" refers to …": a definition
                continue
            if (op := _quoted_date_op(ctx, m.start(), inner)) is not None:
                col = _adjacent_column(ctx, m.start(), m.end())
                f = Filter(col, op, (ctx.value(inner),), m.group(0), ctx.source)
                ctx.add_filter(f, m.start(), m.end())  # "rented after '2005-08-23 02:06:01'"
                continue
            weak = (
                _scare_quoted(inner, ctx.low, m.end())
                or _gloss(ctx.low, m.start(), m.end())
                or inner.rstrip().endswith(("...", "…"))  # an excerpt: no exact value
            )
            _add_value(
                ctx,
                ctx.value(inner),
                m.start(),
                m.end(),
                quoted=True,
                cue=WEAK_CUE if weak else None,
            )


#: A quoted date or time of day, ISO style: ``'2005-08-23 02:06:01'``.
_QUOTED_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?")
#: A temporal preposition before a quoted date: "after the date '…'", "before '…'".
_DATE_OP_QUOTED = re.compile(
    rf"\b(?P<op>{lx.alternation(lx.YEAR_OPS)})\s+(?:the\s+)?(?:(?:date|time|day)\s+)?$", re.I
)


def _quoted_date_op(ctx: _Ctx, start: int, inner: str) -> str | None:
    """The operator a temporal preposition puts on a quoted date (``>`` for "after the
    date '2005-08-23'"), or None when the quoted text is no date or follows none.

    >>> from stef.nl.spec import extract_text_spec
    >>> [(f.op, f.values) for f in extract_text_spec("Rentals after the date '2005-08-23'").filters]
    [('>', ('2005-08-23',))]
    """
    if not _QUOTED_DATE.fullmatch(inner.strip()):
        return None
    m = _DATE_OP_QUOTED.search(ctx.low, max(0, start - 30), start)
    return lx.YEAR_OPS[" ".join(m.group("op").casefold().split())] if m else None


#: What follows a quoted term the text goes on to define.
_DEFINES = re.compile(r"\s*(?:refers?\s+to|means|is\s+defined\s+as|stands\s+for)\b")


def _defined_term(inner: str, low: str, end: int) -> bool:
    """A quoted term the text defines (``a "useful question" refers to a question with …``),
    or one holding no value at all (a stray quote around ``and``): no value to filter on.

    >>> _defined_term("useful question", ' refers to a question', 0), _defined_term("and", "", 0)
    (True, True)
    >>> _defined_term("Civic Duty", " badges", 0), _defined_term("A", "", 0)
    (False, False)
    """
    words = word_tokens(inner.casefold())
    if not words or (len(inner.strip()) > 1 and all(w in lx.PHRASE_STOPS for w in words)):
        return True  # a quoted letter is a value ("starts with 'A'", "grade 'A'")
    return _DEFINES.match(low, end) is not None


def _gloss(low: str, start: int, end: int) -> bool:
    """A quoted word in parentheses after a noun glosses it (``tags with no excerpts
    ("definitions")``): another name for the notion, a weak cue.

    >>> _gloss('no excerpts ("definitions")', 13, 26)
    True
    """
    return (
        low[start - 1 : start] == "("
        and low[end : end + 1] == ")"
        and low[start - 2 : start - 1].isspace()
    )


#: Nouns after a quoted value that say what kind of value it is (``the 'regex' tag``).
_CLASSIFIERS = lx._words(
    "tag tags category categories type types genre genres name names label labels status "
    "value values code codes word words term terms keyword keywords phrase badge badges"
)


def _step_initials(ctx: _Ctx) -> None:
    """``names starting with c``, ``last names begin with Y``: one letter a name starts (or
    ends) with is a pattern the SQL must apply; ``a``/``i`` only when no word follows
    (``starting with a capital letter`` names no letter).

    >>> from stef.nl.spec import extract_nl_spec
    >>> [(f.op, f.values) for f in extract_nl_spec("users with kerberos starting with c").filters]
    [('like', ('c%',))]
    >>> extract_nl_spec("titles starting with a capital letter").filters
    []
    """
    for m in lx.INITIAL_LIKE.finditer(ctx.text):
        v = m.group("v")
        if v.casefold() in {"a", "i"} and m.group("next").strip()[:1].isalpha():
            continue
        if ctx.free(m.start("v"), m.end("v")):
            _add_value(ctx, v.casefold(), m.start("v"), m.end("v"))
    for m in lx.DOTTED_LIKE.finditer(ctx.text) if "." in ctx.text else ():
        v, start, end = m.group("v").casefold(), m.start("v"), m.end("v")
        if not ctx.free(start, end) or not any(c.isalpha() for c in v):
            continue  # "containing 3.5": a number
        verb = m.group(0)[:3].casefold()  # "emails ending with gmail.com": a pattern
        pattern = f"{v}%" if verb in ("sta", "beg") else f"%{v}" if verb == "end" else f"%{v}%"
        col = _adjacent_column(ctx, start, end)
        ctx.add_filter(Filter(col, "like", (pattern,), ctx.text[start:end], ctx.source), start, end)


def _scare_quoted(inner: str, low: str, end: int) -> bool:
    """Is a quoted word a notion rather than a value: one word quoted before the plural
    noun it qualifies or before a verb (``"Bad" answers``, ``"quality" posts``, ``How
    "Favorited" are``)? Such a cue is weak: an unmatched one is reported, not required.

    >>> _scare_quoted("Bad", ' answers to questions', 0), _scare_quoted("regex", " tags", 0)
    (True, False)
    >>> _scare_quoted("Sublime Epiphany", " posts", 0), _scare_quoted("Heme", "?", 0)
    (False, False)
    """
    if len(inner.split()) != 1:
        return False
    nxt = (low[end : end + 30].split() or [""])[0].strip(",.?!;:)")
    if inner.islower() and inner.endswith("ing") and nxt in {"by", "of", "for"}:
        return True  # "users 'ranking' by date": a notion the query computes
    return nxt in {"are", "is", "were", "was"} or (_is_plural(nxt) and nxt not in _CLASSIFIERS)


def _listed_after_negated(ctx: _Ctx, start: int) -> bool:
    """Is the value at ``start`` listed right after a negated one (``exclude '139' and
    '250'``)? The list shares its negation."""
    if not ctx.spec.filters:
        return False
    prev = ctx.spec.filters[-1]
    if prev.op not in ("!=", "not like") or not prev.text:
        return False
    at = ctx.low.rfind(prev.text.casefold(), max(0, start - 60), start)
    return at >= 0 and lx.LIST_JOIN.match(ctx.low[at + len(prev.text) : start]) is not None


def _add_value(
    ctx: _Ctx, value: str, start: int, end: int, quoted: bool = False, cue: str | None = None
) -> None:
    """A value the text names: ``=``, or ``like``/``!=`` after a cue (``contains 'Led'``,
    ``not from Germany``), tied to a known column next to it. An unquoted value is a
    pattern only after ``the letter``/``starts with`` (``contains Calcium`` is equality).
    ``cue`` marks a weak cue (:data:`stef.spec.WEAK_CUE`); a known column makes it strong."""
    before = ctx.low[max(0, start - 40) : start]
    op = "="
    like = ctx.rx(lx.LIKE_CUES).search(before)
    kind = next((k for k in ("contains", "starts", "ends", "like") if like and like.group(k)), "")
    if like and (quoted or like.group("noun") or kind in {"starts", "ends"}):
        op = "like"
        value = {"starts": f"{value}%", "ends": f"%{value}"}.get(kind, f"%{value}%")
    if (
        ctx.rx(lx.NEGATION_BEFORE).search(before)
        or _listed_after_negated(ctx, start)
        or ctx.rx(lx.NEGATED_CLAUSE).search(ctx.low, max(0, start - 90), start)
    ):
        op = "not like" if op == "like" else "!="
    col = _adjacent_column(ctx, start, end)
    weak = cue if col is None else None
    ctx.add_filter(Filter(col, op, (value,), ctx.text[start:end], ctx.source, cue=weak), start, end)


def _add_name(ctx: _Ctx, start: int, end: int) -> None:
    """A name the text states (capitalised, or written as code) at ``start:end``: a value
    read from a weak cue, or context when the rules declare it one of the application's own
    names (no filter then)."""
    name = ctx.text[start:end]
    if ctx.lexicon.context and term_key(name) in ctx.lexicon.context:
        ctx.take(start, end)
        return
    _add_value(ctx, ctx.value(name), start, end, cue=WEAK_CUE)


def _signed_number(text: str) -> tuple[str, bool] | None:
    """:func:`_parse_number` with a sign: ``"-5"`` and ``"minus 5"`` → ``("-5", False)``."""
    t = text.strip()
    sign = t.startswith("-") or t.casefold().startswith("minus ")
    parsed = _parse_number(t[1:] if t.startswith("-") else t[6:] if sign else t)
    if parsed is None or not sign or parsed[0] in {"0", "0.0"}:
        return parsed
    return "-" + parsed[0], parsed[1]


def _number_filter(ctx: _Ctx, op: str, nums: list[str], m: re.Match[str]) -> None:
    parsed = [_signed_number(n) for n in nums]
    if any(p is None for p in parsed):
        return
    vals = tuple(p[0] for p in parsed if p)
    if any(p[1] for p in parsed if p):
        ctx.spec.flags["percent"] = True
    col = _adjacent_column(ctx, m.start(), m.end())
    unit = _UNIT_AFTER.match(ctx.text, m.end())  # kept in the text: "2 hours" may be 120 minutes
    text = m.group(0) + unit.group(0) if unit else m.group(0)
    ctx.add_filter(Filter(col, op, vals, text, ctx.source), m.start(), m.end())


#: The units of a duration or a size that a column may keep in a smaller unit.
UNITS = (
    r"hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|years?|km|kilomet(?:er|re)s?"
    r"|kg|kilograms?|met(?:er|re)s?"
)
#: A unit right after a compared number ("longer than 2 hours").
_UNIT_AFTER = re.compile(rf"\s*(?:{UNITS})\b", re.I)


#: A word of each comparative cue (its longest): every word of a cue that ``CMP_RE``
#: matches is a word of the text (``\b`` before the cue, ``\s+`` between and after its
#: words), so a text with none of these holds no ``CMP_RE`` match.
_CMP_WORDS = frozenset(max(cue.split(), key=len) for cue in lx.COMPARATIVES)
#: The words after "or"/"and" in ``POSTFIX_RE`` (followed by ``\b``); its other form is "+".
_POSTFIX_WORDS = lx._words(
    "more above higher greater older over longer bigger larger up later newer "
    "less fewer below lower younger under smaller shorter earlier"
)


#: "at least one order", "more than 0 answers": a join or EXISTS, not a count compared.
_EXISTENCE = frozenset({(">=", "one"), (">=", "1"), (">", "zero"), (">", "0")})
#: An "if" clause that opens a sentence or follows a colon: a number compared there says how
#: to present the rows it holds ("If a student is in more than one department, list a row
#: for each", "Note: if a user has posted 3 or more answers, each pair is listed").
_IF_CLAUSE = re.compile(r"(?:^|[.;:!?]\s+|\n\s*)if\s[^,.;!?]*$")
#: A comparative joined to its opposite before the number ("under and over 15", "above/below
#: 10"): the number splits the rows in two, it keeps none out.
_BOTH_SIDES = re.compile(
    r"\b(?:under|below|over|above|less|more|fewer|greater|lower|higher)\s*(?:and|or|&|/)\s*$"
)


def _no_filter(low: str, op: str, m: re.Match[str]) -> str | None:
    """Why a comparison ``m`` of the text ``low`` keeps no rows out, if it does not: it asks
    for existence ("at least one order": a join), its number splits the rows ("under and over
    15"), or an "if" clause states how to present rows ("If a student is in more than one
    department, list …").

    >>> low = "users with reputation under and over 15"
    >>> _no_filter(low, ">", lx.CMP_RE.search(low, 32))
    'both sides'
    >>> _no_filter("over 15", ">", lx.CMP_RE.search("over 15")) is None
    True
    >>> low = "note: if a user has more than 3 answers, each pair is listed"
    >>> _no_filter(low, ">", lx.CMP_RE.search(low))
    'condition'
    >>> low = "times above the 90th percentile"
    >>> _no_filter(low, ">", lx.CMP_RE.search(low))
    'percentile'
    """
    if (op, m.group("n").casefold()) in _EXISTENCE:
        return "existence"
    if _PERCENTILE_AFTER.match(low, m.end("n")):
        return "percentile"  # "above the 90th percentile": a rank the SQL computes
    if _BOTH_SIDES.search(low, max(0, m.start() - 16), m.start()):
        return "both sides"
    if _in_condition(low, m.start()):
        return "condition"
    return None


#: A number that names a percentile ("the 90th percentile"), not a value to compare with.
_PERCENTILE_AFTER = re.compile(r"(?:st|nd|rd|th)?[\s-]*percentile\b")


def _in_condition(low: str, start: int) -> bool:
    """Does an "if" clause (:data:`_IF_CLAUSE`) hold the text at ``start``?"""
    return _IF_CLAUSE.search(low, max(0, start - 90), start) is not None


def comparative_op(cue: str) -> str:
    """The operator of a comparative cue; "or equal to" after a strict one makes it
    inclusive.

    >>> comparative_op("higher than or equal to"), comparative_op("equal to or lower than")
    ('>=', '<=')
    """
    if cue in lx.COMPARATIVES:
        return lx.COMPARATIVES[cue]
    op = lx.COMPARATIVES[cue.removesuffix(" or equal to").removesuffix(" or equal")]
    return op + "=" if op in (">", "<") else op


@lru_cache(maxsize=1)
def between_finder() -> re.Pattern[str]:
    """Where ``lx.folded(lx.BETWEEN_RE)`` matches, with the same spans, in a form the
    engine scans fast: a class of the first characters of its branches, then the branch
    that character opens, its ``\\b`` or lookbehind tested after it
    (tests/test_regex_forms.py holds it to the twin). Compiled on first use, as the twins
    are."""
    words = (
        r"(?:(?<=b)etween|(?<=f)rom|(?<=r)anging\s+from"
        r"|(?:(?<=i)n|(?<=w)ithin)\s+the\s+range\s+(?:of\s+)?)"
    )
    amount = (
        rf"(?:(?<=u)(?:s{{1,2}}\$|sd\s?)\s?{lx._DIGITS}|(?<=[$€£])\s?{lx._DIGITS}"
        r"|(?<=\d)(?:\d{0,2}(?:,\d{3})+|\d*)(?:\.\d+)?)"
    )
    return re.compile(
        rf"[bfriwu$€£0-9](?:(?<!\w.){words}\s*{lx._NUM}\s+(?:and|to|-)\s+{lx._NUM}"
        rf"|(?<![\w.$/-].){amount}"
        rf"\s*(?:-|to|through)\s*{lx._CURRENCY}{lx._DIGITS}(?=\s+[a-z]|\s*[?.!;]?\s*$))",
        re.A,
    )


def _step_comparatives(ctx: _Ctx) -> None:
    """``between 5 and 10``, ``more than 10``, ``at least 3``, ``18 or older``."""
    for m in ctx.scan(lx.BETWEEN_RE, between_finder()):
        lo, hi = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        if m.group("c"):
            nxt = ctx.low[m.end() : m.end() + 12].split()
            if not nxt or nxt[0] in lx.PHRASE_STOPS:
                continue
        pa, pb = _parse_number(lo), _parse_number(hi)
        if pa and pb and float(pa[0]) <= float(pb[0]) and ctx.free(m.start(), m.end()):
            _number_filter(ctx, "between", [lo, hi], m)
    for m in ctx.scan(lx.CMP_RE) if ctx.may_have(_CMP_WORDS) else ():
        if not ctx.free(m.start(), m.end()):
            continue
        cue = " ".join(m.group("cue").casefold().split())
        op = comparative_op(cue)
        unfiltered = _no_filter(ctx.low, op, m)
        if unfiltered:
            ctx.cue(f"{m.group(0)} ({unfiltered})")
            ctx.take(m.start(), m.end())
            continue
        negated = ctx.rx(lx.NEGATION_BEFORE).search(ctx.low[max(0, m.start() - 12) : m.start()])
        clause = ctx.rx(lx.NEGATED_CLAUSE).search(ctx.low, max(0, m.start() - 90), m.start())
        if clause is not None and not clause.group(0).startswith("without"):
            negated = clause  # "excluding … users with less than 10 answers"
        if negated and op in {">", "<", ">=", "<=", "="} and not cue.startswith(("not", "no ")):
            op = NEGATED_OP[op]  # "does not equal to 40" as "!=", "not more than 5" as "<="
        _number_filter(ctx, op, [m.group("n")], m)
    for m in ctx.scan(lx.TIMES_CMP_RE) if ctx.may_hold("once", "twice", "thrice") else ():
        op = comparative_op(" ".join(m.group("cue").casefold().split()))
        n = lx.TIMES[m.group("n").casefold()]
        if ctx.free(m.start(), m.end()) and (op, n) != (">=", "1"):  # "at least once": any row
            _number_filter(ctx, op, [n], m)  # "ordered more than once": a count above 1
    postfix = ctx.may_have(_POSTFIX_WORDS) or "+" in ctx.low
    for m in ctx.scan(lx.POSTFIX_RE) if postfix else ():
        if not ctx.free(m.start(), m.end()):
            continue
        if _in_condition(ctx.low, m.start()):
            ctx.cue(f"{m.group(0)} (condition)")  # "if a user has posted 3 or more answers"
            ctx.take(m.start(), m.end())
        else:
            _number_filter(ctx, ">=" if m.group("ge") else "<=", [m.group("n")], m)
    symbols = "<" in ctx.text or ">" in ctx.text or "!=" in ctx.text  # in each operator
    for m in lx.SYMBOL_CMP_RE.finditer(ctx.text) if symbols else ():
        num = normalize_number(m.group("n"))
        if num is not None and ctx.free(m.start(), m.end()):
            col = _adjacent_column(ctx, m.start(), m.end())
            op = lx.SYMBOL_OPS[m.group("op")]
            ctx.add_filter(Filter(col, op, (num,), m.group(0), ctx.source), m.start(), m.end())


def _step_attribute_numbers(ctx: _Ctx) -> None:
    """``district 5``, ``user ID 13``, ``No. 5`` → ``=`` filters; other numbers → literals."""
    numbered = "#" in ctx.text or "no." in ctx.low  # what every match holds
    for m in lx.NO_NUMBER.finditer(ctx.text) if numbered else ():
        if ctx.free(m.start(), m.end()):
            num = normalize_number(m.group("n")) or m.group("n")
            col = _adjacent_column(ctx, m.start(), m.end())
            ctx.add_filter(Filter(col, "=", (num,), m.group(0), ctx.source), m.start(), m.end())
    for m in lx.BARE_NUMBER.finditer(ctx.text):
        num = normalize_number(m.group(0))
        if num is None or not ctx.free(m.start(), m.end()):
            continue
        prev = _prev_words(ctx.low, m.start(), 1)
        word = prev[-1] if prev else ""
        nxt = (ctx.low[m.end() : m.end() + 16].split() or [""])[0]
        follows_ok = not nxt[:1].isalpha() or nxt.rstrip(",.?!;:)") in lx.AFTER_IDENTIFIER_NUMBER
        if (
            word.isalpha()
            and ctx.low[m.start() - 1 : m.start()] == " "
            and ctx.low[m.start() - 1 - len(word) : m.start() - 1] == word
            and word not in lx.NOT_ATTRIBUTE_BEFORE_NUMBER
            and word not in lx.NUMBER_WORDS
            and not word.endswith(("ed", "ing", "ly"))
            and follows_ok
            and not _in_name(ctx.text, m.start() - 1 - len(word), m.end())
        ):
            col = _adjacent_column(ctx, m.start(), m.end())
            start = m.start() - 1 - len(word)
            negated = word in lx.NEGATION_WORDS or ctx.rx(lx.NEGATION_BEFORE).search(
                ctx.low[max(0, start - 30) : start]
            )  # "age is not 20", "not in division 1"
            op = "!=" if negated else "="
            f = Filter(col, op, (num,), f"{word} {m.group(0)}", ctx.source)
            ctx.add_filter(f, m.start(), m.end())
        else:
            ctx.add_literal(num)
    for m in _COMPOUND_NUMBER.finditer(ctx.low) if "-" in ctx.low else ():
        if m.group("w") not in _COMPOUND_UNITS:  # "5-star hotels": 5, not "a 30-day trial"
            ctx.add_literal(m.group("n"))


#: A number joined to the noun it counts: "5-star", "3-bedroom", "2-door".
_COMPOUND_NUMBER = re.compile(r"(?<![\w.$/:-])(?P<n>\d{1,3})-(?P<w>[a-z]{3,})\b")
#: Nouns after such a number that make it a span of time or an ordinal, no value.
_COMPOUND_UNITS = lx._words(
    "day days week weeks month months year years hour hours minute minutes second seconds time"
)


def _in_name(text: str, start: int, end: int) -> bool:
    """Is the "<word> <number>" at ``text[start:end]`` inside a capitalised name: the word
    capitalised and a capitalised word after the number ("Germany 1. Bundesliga")?

    >>> _in_name("the Germany 1. Bundesliga league", 4, 13)
    True
    >>> _in_name("in District 5. Show all", 3, 13), _in_name("in district 5 Bundesliga", 3, 13)
    (False, False)
    """
    if not text[start : start + 1].isupper():
        return False
    after = _CAPITAL_NEXT.match(text, end)
    return after is not None and after.group(1).casefold() not in _SENTENCE_OPENERS


_CAPITAL_NEXT = re.compile(r"\.?\s+([A-Z][a-z]+)")
#: Words that open a new sentence after "District 5." rather than going on with a name.
_SENTENCE_OPENERS = lx.IMPERATIVES | lx._words(
    "what which who whom whose when where why how please also and is are was were do does did"
    " name state indicate tell"
)


def _step_capitalised(ctx: _Ctx) -> None:
    """Capitalised phrases inside a sentence are values: ``customers in Germany``."""
    text = ctx.text
    words = [(m.start(), m.end(), m.group(0)) for m in lx.WORD.finditer(text)]
    parens = bytearray(len(text))
    for p in lx.PARENS.finditer(text):
        parens[p.start() : p.end()] = b"\x01" * (p.end() - p.start())
    for a, b in _title_cased(text, words):
        b2 = _title_place(words, a, b)
        parens[a:b2] = b"\x01" * (b2 - a)  # a headline's capitals say nothing of values
    i, n = 0, len(words)
    while i < n:
        s, e, w = words[i]
        if not w[0].isupper() or not ctx.free(s, e) or parens[s]:
            i += 1
            continue
        run, i = _capitalised_run(ctx, words, i, parens)
        if lx.SENTENCE_START.search(text[max(0, s - 3) : s]) and not _leading_place(run):
            run = run[1:]  # the first word of a sentence is capitalised anyway
        while run and (
            run[0][2].casefold() in lx.NOT_VALUES or run[0][2].casefold().rstrip(".") in lx.MONTHS
        ):
            run = run[1:]
        while run and run[-1][2] in lx.VALUE_CONNECTORS:
            run = run[:-1]
        fmt = len(run) == 1 and run[0][2].casefold() in _FORMATS
        if fmt and _FORMAT_NOUN.match(text, run[0][1]):
            continue  # "the JSON payload", "an XML field": the form of the data, no value
        if run and _is_value_run(ctx, run):
            start, end = run[0][0], run[-1][1]
            if text.endswith("'s", start, end):
                end -= 2
            _add_name(ctx, start, end)


def _leading_place(run: list[tuple[int, int, str]]) -> bool:
    """Is a run that starts a sentence one place alone: a country, a state or a large city
    ("Egypt Top 200 users"), a value although its capital says nothing? (Read only where
    the text holds another capital: the step that calls it runs only then.)

    >>> _leading_place([(0, 5, "Egypt")]), _leading_place([(0, 4, "Show")])
    (True, False)
    """
    if len(run) != 1 or run[0][2].casefold() in lx.NOT_VALUES:
        return False  # "What", "Show", "List": no need to read the names of places
    return stated_place((run[0][2].casefold(),), run[0][2]) is not None


#: Data formats, and the nouns after one that make it the form of the data, not a value.
_FORMATS = frozenset({"json", "xml", "csv", "html", "yaml", "parquet", "avro"})
_FORMAT_NOUN = re.compile(
    r"\s+(?:payloads?|fields?|columns?|documents?|data|objects?|arrays?|strings?|files?|format"
    r"|blobs?|body|attributes?|keys?|paths?|values?|records?|events?|profiles?|feeds?|exports?"
    r"|responses?|requests?|messages?|configs?|settings?|metadata)\b",
    re.I,
)


#: A name written as code: dotted (``node.js``, ``ASP.NET``), with a trailing ``#`` or ``++``
#: (``c#``, ``c++``), or letters run into digits (``html5``, ``db2``). Snake case is left
#: out: ``Formula_1`` or ``primary_conference`` name a database or a column, not a value.
_CODE_NAME = re.compile(  # the lookbehind after the first letter: tests/test_regex_forms.py
    r"([A-Za-z](?<![\w.#+@/$'-].)(?:[A-Za-z0-9]*(?:(?:\.[A-Za-z0-9]+)+|#|\+\+)"
    r"|[A-Za-z]+[0-9]+[A-Za-z0-9]*))(?![\w#+@/'-]|\.\w)",
    re.ASCII,
)
#: Tokens of that shape that are no values: abbreviations (``e.g``, ``U.S``), numbers after
#: a short word (``No.58``, ``v.2``), an amount after a currency code (``USD100``), a count
#: run into a word (``top10``), a site or a file (``imgur.com``, ``stats.SE``, ``a.csv``).
_NOT_CODE_NAME = re.compile(
    r"[A-Za-z]{1,2}(?:\.[A-Za-z]{1,2})+|[A-Za-z]{1,3}\.\d+|(?:usd|eur|gbp|jpy|inr|cny|rs)\d+"
    r"|(?:top|last|first|next|past|page|level|step|part|version|week|day|year)\d+"
    r"|.*\.(?:com|org|io|se|edu|gov|co|uk|html?|php|txt|csv|json|xml|pdf|png|jpe?g)",
    re.IGNORECASE,
)


def _step_code_names(ctx: _Ctx) -> None:
    """Names written as code are values, in whatever case and wherever they stand: the
    question's ``c#`` or ``node.js`` asks for rows about it as ``Germany`` does.

    >>> from stef.nl.spec import extract_text_spec
    >>> [f.values for f in extract_text_spec("How many questions about c# and node.js?").filters]
    [('c#',), ('node.js',)]
    >>> extract_text_spec("Posts that link to imgur.com, e.g. images").filters
    []
    """
    text = ctx.text
    for m in _CODE_NAME.finditer(text):
        start, end = m.span(1)
        token = m.group(1)
        if not ctx.free(start, end) or _NOT_CODE_NAME.fullmatch(token):
            continue
        _add_name(ctx, start, end)


#: Words a title leaves in lower case (``Questions by Month for Each Tag``).
_TITLE_LOWER = lx._words(
    "a an the and or nor but of for in on at by to from with per vs via as into over "
    "between about after before under than since until within without across through "
    "among against during"
)


def _title_cased(text: str, words: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """Spans of the sentences written in title case: at least three capitalised words, and
    every word but the small ones a title leaves lower-cased starts with a capital or a
    digit.

    >>> t = "Questions By High Rep Users. Users in Germany"
    >>> w = [(m.start(), m.end(), m.group(0)) for m in lx.WORD.finditer(t)]
    >>> [t[a:b] for a, b in _title_cased(t, w)]
    ['Questions By High Rep Users']
    """
    sentences: list[list[tuple[int, int, str]]] = []
    for item in words:
        if sentences and (
            text[sentences[-1][-1][1] : item[0]] == " "  # the common gap, without a search
            or not _SENTENCE_BREAK.search(text, sentences[-1][-1][1], item[0])
        ):
            sentences[-1].append(item)
        else:
            sentences.append([item])
    return [
        (sen[0][0], sen[-1][1])
        for sen in sentences
        if all(w[0].isupper() or w[0].isdigit() or w.casefold() in _TITLE_LOWER for *_, w in sen)
        and sum(w[0].isupper() for *_, w in sen) >= 3  # the test above fails sooner
    ]


_SENTENCE_BREAK = re.compile(r"[.?!;:\n]")
#: Prepositions after which a headline ends on a place or another name.
_TITLE_PLACE_LEADS = frozenset({"from", "in"})
#: Words that end a headline after "in" without naming a value ("in Last Months").
_TITLE_NOT_PLACES = lx._words(
    "last past next recent this previous current general total all day days week weeks month "
    "months year years quarter quarters time"
)


#: Words that join the names of a list ("Germany and France").
_LIST_JOINS = frozenset({"and", "or", "&"})


def _title_place(words: list[tuple[int, int, str]], a: int, b: int) -> int:
    """Where a headline's masked span ends: before the one to three capitalised words that
    close it after ``from``/``in`` (``Top 500 SO Users from India``, ``Top 50 in New
    Zealand``), which name a value even in title case; ``b`` when it ends otherwise.

    >>> t = "Top 100 Users From Kolkata, India"
    >>> w = [(m.start(), m.end(), m.group(0)) for m in lx.WORD.finditer(t)]
    >>> t[:_title_place(w, 0, len(t))]
    'Top 100 Users From '
    """
    inside = [w for w in words if a <= w[0] and w[1] <= b]
    leads = [i for i, w in enumerate(inside) if w[2].casefold() in _TITLE_PLACE_LEADS]
    lead = leads[-1] if leads else -1
    tail = inside[lead + 1 :]
    # the names may be a list: "in Germany and France", "from Kolkata or Pune"
    names = [w for w in tail if w[2].casefold() not in _LIST_JOINS]
    joined = bool(names) and len(tail) - len(names) <= 1 and tail[-1] == names[-1]
    if lead < 1 or not joined or not 1 <= len(names) <= 3:
        return b
    if not all(w[2][0].isupper() for w in names) or not tail[0][2][0].isupper():
        return b
    said = [w[2].casefold() for w in names]
    if any(x in _TITLE_NOT_PLACES or x.rstrip(".") in lx.MONTHS for x in said) or (
        said[-1].endswith(("ers", "ors")) and not tail[-1][2].isupper()
    ):
        return b  # "in Last Months", "From Moderators": a period or people, no value
    return tail[0][0]


def _capitalised_run(
    ctx: _Ctx, words: list[tuple[int, int, str]], i: int, parens: bytearray
) -> tuple[list[tuple[int, int, str]], int]:
    """Consecutive capitalised words from ``i``, joined by spaces and connectors (``of the``)."""
    run = [words[i]]
    j = i + 1
    while j < len(words):
        s2, e2, w2 = words[j]
        gap = ctx.text[run[-1][1] : s2]
        if (
            gap not in {" ", "-", " - ", " & "}
            or not ctx.free(s2, e2)
            or parens[s2]
            or run[-1][2].endswith("'s")
        ):
            break
        if w2[0].isupper():
            run.append(words[j])
            j += 1
            continue
        k = j
        while k < len(words) and k - j < 2 and words[k][2] in lx.VALUE_CONNECTORS:
            k += 1
        spaced = all(
            ctx.text[words[x][1] : words[x + 1][0]] == " "
            for x in range(j - 1, min(k, len(words) - 1))
        )
        if k == j or k >= len(words) or w2 == "the" or not words[k][2][0].isupper() or not spaced:
            break
        run.extend(words[j:k])
        j = k
    return run, j


_LETTER_DASH_NUMBER = re.compile(r"[A-Z]-\d+")
_TWO_LETTER_WORD = re.compile(r"[A-Z][a-z]")
_NUMBER_AT_END = re.compile(r"\d\s*$")


def _is_value_run(ctx: _Ctx, run: list[tuple[int, int, str]]) -> bool:
    """Reject runs that name attributes (``TG level``, ``School Ownership Code``) or units."""
    first, last = run[0][2], run[-1][2]
    if len(run) == 1 and (
        first.casefold() in lx.NOT_VALUES
        or _LETTER_DASH_NUMBER.fullmatch(first)
        or first == "I"
        or _TWO_LETTER_WORD.fullmatch(first)  # "build Up play", "Washington St.": no value
    ):
        return False
    if any("_" in w and not lx.CODE_ID.match(w) for _, _, w in run):  # Student_Club: a name
        return False
    end = run[-1][1]
    nxt = (ctx.low[end : end + 20].split() or [""])[0].strip(",.?!;:")
    if nxt in lx.ATTRIBUTE_NOUNS:
        return False
    if len(run) > 1 and last.casefold().removesuffix("'s") in lx.ATTRIBUTE_HEADS:
        return False
    before = ctx.text[max(0, run[0][0] - 12) : run[0][0]]
    return not (len(run) == 1 and first.isupper() and _NUMBER_AT_END.search(before))  # "98832 USD"


def _step_value_synonyms(ctx: _Ctx) -> None:
    """Spellings from the rules' ``value_synonyms`` found in the text → ``=`` filters."""
    rx = ctx.lexicon.value_rx
    if rx is None:
        return
    for m in rx.finditer(ctx.low):
        if ctx.free(m.start(), m.end()):
            _add_value(ctx, ctx.values[" ".join(m.group(0).split())], m.start(), m.end())


def _step_synonym_columns(ctx: _Ctx) -> None:
    """Column names and synonyms from the rules found in the text → columns."""
    rx = ctx.lexicon.synonym_rx
    if rx is None:
        return
    for m in rx.finditer(ctx.low):
        if ctx.free(m.start(), m.end()):
            ctx.add_column(ctx.synonyms[" ".join(m.group(0).split())])
            ctx.cue(ctx.text[m.start() : m.end()])
