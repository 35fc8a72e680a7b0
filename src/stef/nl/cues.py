"""Cues of a question's shape: explicit ordering (``sorted by X descending``), top-k
(``top 5``), superlatives (``the highest X``), aggregations (``how many``, ``average``),
``distinct``, grouping (``per X``, ``for each X``) and the boolean flags (ratio, division,
negation, yes/no, list).
"""

from __future__ import annotations

import re
from dataclasses import replace

from stef.nl import lexicon as lx
from stef.nl.context import _Ctx, _order_key
from stef.nl.plurals import plural_after, plural_head, plural_subject, singular_subject
from stef.nl.words import (
    _is_participle,
    _lower_rx,
    _noun_phrase,
    _parse_number,
    _prev_words,
    _sentence_span,
    shared_target,
)
from stef.spec import Aggregation, OrderKey

#: "Post links by PostId ascending": a key after "by" with a direction word, and no sort verb.
_BY_DIRECTION = re.compile(
    r"\bby\s+(?P<key>[a-z][\w.]*(?:\s+[a-z][\w.]*){0,2}?)\s+(?:in\s+)?"
    r"(?:ascending|descending|asc|desc)\b(?!\s+order)",
    re.I,
)


#: A list asked for by the rows' identifiers, no order: "List them by their ID", "list
#: them by name" (a later sentence of a count question).
_LISTED_BY_ID = re.compile(
    r"list(?:ed)?\s+(?:them|those|these)\s+by\s+(?:their\s+|its\s+)?(?:ids?|names?)\b(?!\s*,)"
    r"(?=\s*(?:[.?!;]|$))"
)


def _step_order(ctx: _Ctx) -> None:
    """Explicit ordering: ``sorted by X descending``, ``in alphabetical order``, ``from A to Z``,
    ``sorted by highest rep`` (the superlative sets the direction), ``by X ascending``."""
    for rx in (lx.ORDER_BY_RE, lx.IN_ORDER_RE, lx.FROM_TO_RE, _BY_DIRECTION):
        for m in ctx.free_matches(rx):
            has_key = bool(m.groupdict().get("key"))
            cue_end = m.start("key") if has_key else m.end()
            if not ctx.free(m.start(), cue_end):
                continue  # "in descending order" around an "order by X" already read
            lo, hi = _sentence_span(ctx.low, m.start())
            direction_rx = ctx.rx(lx.DIRECTION)
            d = direction_rx.search(ctx.low, m.start(), min(hi, m.end() + 40))
            d = d or direction_rx.search(ctx.low, max(lo, m.start() - 30), m.start())
            direction = "desc" if d and d.group("desc") else "asc"
            stated = d is not None
            if d is None and has_key:  # "sorted by highest rep": its superlative's direction
                first = ctx.low[m.start("key") : m.end("key")].split()[:2]
                sup = next((w for w in first if w in lx.SUPERLATIVES), None)
                if sup is not None and (first[0] == sup or first[0] in lx.DETERMINERS):
                    direction, stated = lx.SUPERLATIVES[sup], True
            phrases, end = _order_phrases(ctx, m) if has_key else ([], cue_end)
            if rx is lx.ORDER_BY_RE and (not phrases or _LISTED_BY_ID.match(ctx.low, m.start())):
                continue  # "List them by their ID": the rows' ids asked for, no order
            if d and d.start() >= end and ctx.free(end, d.end()):
                end = d.end()  # "... by X in descending order": one cue
            text = " ".join(ctx.text[m.start() : end].split())
            for phrase in phrases or [_prev_noun(ctx.low, m.start())]:
                key = _order_key(ctx, phrase) if phrase else "?"
                ctx.spec.order_by.append(OrderKey(key, direction, False, text, stated))
            ctx.cue(text)
            ctx.take(m.start(), end)


def _order_phrases(ctx: _Ctx, m: re.Match[str]) -> tuple[list[str], int]:
    """The noun phrases an ordering cue sorts by (``by sales and profits`` → two) and where
    they end; direction words and determiners are skipped."""
    phrases: list[str] = []
    words: list[str] = []
    start = end = m.start("key")
    for w in lx.LOW_WORD.finditer(ctx.low, start, m.end("key")):
        token = w.group(0)
        if token == "and" and words and len(phrases) < 2:
            phrases.append(" ".join(words))
            words = []
            continue
        if lx.DIRECTION.fullmatch(token) or token in {"in", "order"}:
            if words:
                break
            continue
        if token in lx.DETERMINERS or token in lx.SUPERLATIVES or token in {"each", "every"}:
            end = w.end()
            continue  # "by each city's highest latitude" sorts by latitude
        if token in lx.PHRASE_STOPS or len(words) == 3 or (words and _is_participle(token)):
            break
        end = w.end()
        if token.endswith(("'s", "'")):
            words = []  # a possessive modifies the head that follows
            continue
        words.append(token)
    if words:
        phrases.append(" ".join(words))
    return phrases, end


def _prev_noun(low: str, pos: int) -> str:
    words = _prev_words(low, pos, 3)
    while words and (
        words[-1] in lx.PHRASE_STOPS or words[-1] in {"them", "it", "results", "result"}
    ):
        words.pop()
    return words[-1] if words else ""


def _step_topk(ctx: _Ctx) -> None:
    """``top 5``, ``first 3``, ``the three largest``, ``which 3 wineries ... the most``."""
    low = ctx.low
    for m in ctx.rx(lx.TOPK_RE).finditer(low):
        g = next(k for k in ("a", "b", "c", "d") if m.group(k))
        parsed = _parse_number(m.group(g))
        if (
            not parsed
            or not parsed[0].isdigit()
            or int(parsed[0]) == 0
            or not ctx.free(m.start(g), m.end(g))
        ):
            continue
        if g == "c":
            prev = _prev_words(low, m.start(), 1)
            if prev and prev[-1] not in lx.TOPK_LEADS:
                continue  # "room 111 most recently"
            direction = lx.SUPERLATIVES[m.group("sup")]
        elif g == "b":
            direction = "asc" if m.group("fl") == "first" else "desc"
        elif g == "d":
            sup2 = " ".join(m.group("sup2").split())  # "the latest 10 comments", "most 20"
            if sup2 == "most" and _prev_words(low, m.start(), 1) == ["the"]:
                continue  # "scored the most 3 pointers": the most of the 3-pointers
            direction = "desc" if sup2.startswith("most") else lx.SUPERLATIVES[sup2]
        else:
            direction = "asc" if m.group("tb") == "bottom" else "desc"
        _set_topk(ctx, int(parsed[0]), direction, m, m.group("sup") or m.group("sup2") or "top")
        return
    if ctx.rx(lx.SUP_RE).search(low):
        for m in ctx.rx(lx.WHICH_N_RE).finditer(low):
            parsed = _parse_number(m.group("n"))
            if (
                parsed
                and parsed[0].isdigit()
                and 1 < int(parsed[0]) <= 100
                and ctx.free(m.start("n"), m.end("n"))
            ):
                _set_topk(ctx, int(parsed[0]), "desc", m)
                return


def _set_topk(ctx: _Ctx, k: int, direction: str, m: re.Match[str], word: str = "top") -> None:
    """Record a top-k; ``top 5 customers by total sales`` ranks by what follows ``by``."""
    ctx.spec.limit = k
    ctx.spec.flags["superlative"] = True
    target, tend = _noun_phrase(ctx.low, m.end(), 3)
    key = _superlative_key(ctx, word, target) if target else "?"
    text = " ".join(f"{m.group(0)} {target}".split())
    by = ctx.rx(lx.RANKED_BY).match(ctx.low, tend) if target else None
    if by:
        ranked, rend = _noun_phrase(ctx.low, by.end(), 3)
        if ranked:
            key = _order_key(ctx, ranked)
            text = " ".join(ctx.text[m.start() : rend].split())
            ctx.take(by.start(), by.end())  # "by" ranks here; the phrase may still aggregate
    _rank_sort_keys(ctx, m.start(), direction)
    each = _EACH_GROUP.search(ctx.low, tend, _sentence_span(ctx.low, tend)[1])
    if each is not None or _PER_NEXT.match(ctx.low, tend):  # "… in each category", "… per"
        ctx.spec.flags["topk_per_group"] = True
    ctx.topk_index = len(ctx.spec.order_by)
    ctx.spec.order_by.append(OrderKey(key, direction, False, text))
    ctx.cue(text)
    ctx.take(m.start(), m.end())


def _rank_sort_keys(ctx: _Ctx, start: int, direction: str) -> None:
    """"top 100 questions sorted by answer count": a sort read before the top-k, after it in
    the same sentence and with no direction of its own, ranks the top k, so it takes the
    superlative's direction as stated (it read ascending, unstated). One set apart by a
    comma ("the 3 most expensive products, sorted by name") only displays them."""
    lo, hi = _sentence_span(ctx.low, start)
    for i, key in enumerate(ctx.spec.order_by):
        if key.stated or not key.text:
            continue
        at = ctx.low.find(key.text.casefold(), start, hi)
        if at > start and at >= lo and "," not in ctx.low[start:at]:
            ctx.spec.order_by[i] = replace(key, direction=direction, stated=True)


def _superlative_key(ctx: _Ctx, word: str, target: str) -> str:
    base = word.split()[0]
    first = target.split()[0] if target else ""
    if base in {"most", "least"} and first in lx.FREQUENCY_WORDS:
        return "count"
    if (
        word.startswith("most recent")
        or base in lx.TEMPORAL_SUPERLATIVES
        or first in lx.TEMPORAL_SUPERLATIVES
    ):
        return ctx.match_column(target) or "date"
    if base in {"most", "least"} and first.endswith(lx.ADJECTIVE_SUFFIXES):
        return ctx.match_column(first) or first  # "the most expensive"
    if target.startswith(("number of ", "count of ", "amount of ")):
        target = target.split(" of ", 1)[1]
    return _order_key(ctx, target) if target else base


#: A value stated for what a superlative names (``the highest grade is 12``, ``maximum hand
#: size of -1``): the superlative is part of the attribute's name. A year after "of" scopes.
_STATED_VALUE = re.compile(
    r"\s*(?:(?:is|was|are|were|=|equals?|equal\s+to)\s+-?\d|of\s+(?!(?:19|20)\d\d\b)-?\d)"
)

#: Words before "the first/last X" that compare with it (``posted after the last edit``).
_COMPARED_TO = frozenset({"after", "before", "since", "until", "than"})
#: A span up to each row's own first or last event: "time to first response", "days between
#: signup and the first order".
_TIME_TO = re.compile(
    r"\b(?:time|days|hours|interval|duration|delay)\b.{0,30}\b(?:to|until|and)\s+(?:the\s+)?$"
)

#: "first" after the superlative's noun: "most recent month first" orders the list.
_FIRST_AFTER = re.compile(r"\s*first\b")

#: Superlatives of a count: "the city with the most customers" is one city, not customers.
_COUNTING = frozenset({"most", "fewest", "least"})

#: Words before "minimum"/"maximum" that make it a threshold ("with minimum question count").
_THRESHOLD_LEADS = frozenset({"with", "a", "certain", "of"})


def _step_superlatives(ctx: _Ctx) -> None:
    """``the highest X`` → order key (+ limit 1 for a singular target); ``what is the highest X``
    → ``max``; ``the second highest`` → offset 1."""
    low, spec = ctx.low, ctx.spec
    for m in ctx.free_matches(lx.SUP_RE):
        word = " ".join(m.group("w").split())
        start, end = m.start(), m.end()
        ordinal = ctx.rx(lx.ORDINAL_BEFORE).search(low, max(0, start - 15), start)
        prev = _prev_words(low, start, 1)
        nxt = (low[end : end + 30].split() or [""])[0].strip(",.?!;:")
        if word in {"most", "least"} and (
            (prev and prev[-1] == "at") or nxt in {"of", "likely", "part"}
        ):
            continue
        base = word.split()[0]
        if base in {"minimum", "maximum", "min", "max"} and prev and prev[-1] in _THRESHOLD_LEADS:
            continue  # "with minimum question count": a threshold, not a ranking
        if base in {"min", "max"} and low[end : end + 1] == "(":
            continue  # "by min(questions, answers)": a measure written as a function
        if word in {"first", "last"} and (
            not prev or prev[-1] != "the" or low[end : end + 1] == "-" or nxt in lx.NOT_RANKED
        ):
            continue  # "first name", "the first half", "first-grade"
        if word == "top" and (not nxt or nxt.rstrip("%").isdigit() or nxt in lx.NUMBER_WORDS):
            continue
        if word == "top" and prev and prev[-1] == "on":
            continue  # "weeks on top", "on top of the list": a place, no ranking
        if word in {"first", "last", "latest", "earliest"} and any(
            w in _COMPARED_TO for w in _prev_words(low, start, 2)
        ):
            continue  # "posted after the last activity date": a date compared with, no ranking
        if word in {"first", "last"} and _TIME_TO.search(low, max(0, start - 50), start):
            continue  # "time to first response": each row's own event, no ranking
        other = "asc" if base == "first" else "desc"
        direction = "desc" if word.startswith("most recent") else lx.SUPERLATIVES.get(base, other)
        target, tend = _noun_phrase(low, end, 3)
        target = target or shared_target(low, end)  # "the maximum and minimum age"
        if target and _STATED_VALUE.match(low, tend):
            continue  # "whose highest grade is 12", "a maximum hand size of -1": a value
        key = _superlative_key(ctx, word, target)
        text = " ".join(f"{ctx.text[ordinal.start() if ordinal else start : end]} {target}".split())
        ctx.cue(text)
        if _value_form(low, start, word, target):
            func = "max" if direction == "desc" else "min"
            for t, said in ((target, text), *_coordinated(low, tend, base)):
                agg = Aggregation(func, ctx.match_column(t), False, said)
                if agg not in spec.aggregations:
                    spec.aggregations.append(agg)
            continue
        spec.flags["superlative"] = True
        if ctx.topk_index is None and not ordinal and _per_group(low, end):
            spec.flags["one_per_group"] = direction  # the direction that ranks each group
            continue  # one row per group: ranked inside a window or subquery, not by LIMIT
        if ctx.topk_index is not None:
            topk = spec.order_by[ctx.topk_index]
            spec.order_by[ctx.topk_index] = replace(
                topk, key=key, direction=direction, text=f"{topk.text} {text}"
            )
            ctx.topk_index = None
            continue
        if not any(o.key == key and o.direction == direction for o in spec.order_by):
            spec.order_by.append(OrderKey(key, direction, False, text))
        listed = nxt == "first" or target.endswith(" first") or _FIRST_AFTER.match(low, tend)
        if listed and not ordinal:
            continue  # "newest first", "most recent month first": an order for the list
        if ordinal and spec.limit is None:
            o = ordinal.group("ord").casefold()
            spec.limit, spec.offset = 1, (lx.ORDINALS[o] if o in lx.ORDINALS else int(o[:-2])) - 1
        elif (
            spec.limit is None
            and not plural_subject(low, start)
            and not (
                plural_head(target, ctx.text[end:tend] if len(ctx.text) == len(low) else "")
                and not (base in _COUNTING and singular_subject(low, start))
            )
            and not (base == "top" and plural_after(low, end))
        ):
            spec.limit = 1  # "the highest salary"; "top users", "highest bounties" rank a list


#: A grouping cue after a superlative ("the latest order for each customer"): no LIMIT.
_PER_GROUP = re.compile(r"\b(?:per|for\s+each|in\s+each|of\s+each|on\s+each|for\s+every)\s+[a-z]")


#: A group each of which has its own top-k: "in each category", "for every region", a
#: closing "each year" (not "the orders each placed"), and
#: "per" right after the ranked noun ("top 3 products per category", not "by posts per day").
_EACH_GROUP = re.compile(
    r"\b(?:in|for|within)\s+(?:each|every)\s+[a-z]"
    r"|\b(?:each|every)\s+(?:day|week|month|quarter|year|season)\s*(?:$|[,.?!;])"
)
_PER_NEXT = re.compile(r",?\s*per\s+[a-z]+(?:\s+[a-z]+)?\s*(?:$|[,.?!;]|(?:by|in|for|based)\b)")


def _per_group(low: str, end: int) -> bool:
    """Is the superlative ending at ``end`` taken per group (``… per vote type``)?

    >>> _per_group("the most recent vote per vote type", 15), _per_group("the top user", 7)
    (True, False)
    """
    return _PER_GROUP.search(low, end, _sentence_span(low, end)[1]) is not None


def _value_form(low: str, start: int, word: str, target: str) -> bool:
    """``what is the highest salary`` asks for a value (MAX), not for a row. A temporal
    superlative asks for a value only when its target is a date (``the latest date``)."""
    base = word.split()[0]
    if word in {"most", "least"} and _per_group(low, start + len(word)):
        return False  # "the most expensive product in each category": a row of each group
    before = low[max(0, start - 60) : start]
    # "the average and minimum price", "minimum and maximum salaries"
    listed = _AGG_LIST.search(before) or _AGG_LIST_AFTER.match(low, start + len(word))
    if base in {"first", "last"} or not (listed or _lower_rx(lx.VALUE_FORM, before).search(before)):
        return False
    temporal = base in lx.TEMPORAL_SUPERLATIVES or word.startswith("most recent")
    return not temporal or (target.split() or [""])[-1] in {"date", "time", "year", "day", "month"}


_AGG_LIST = re.compile(
    r"\b(?:average|avg|mean|maximum|max|minimum|min|total|highest|lowest)\s*(?:,|and|or)\s*$"
)


_AGG_LIST_AFTER = re.compile(
    r"\s*(?:,|and|or)\s*(?:and\s+)?(?:the\s+)?(?:average|avg|mean|maximum|max|minimum|min|total)\b"
)


#: A word each form of ``AGG_RE`` holds, whole ("how many", "no. of", "the sum", "summed
#: up", …); its one other form is "# of".
_AGG_WORDS = lx._words(
    "how total number no count sum summed sumed average avg mean maximum max minimum min"
)
#: Where ``lx.folded(lx.AGG_RE)`` matches, with the same spans: its branches by first
#: character (a ``\b`` or lookbehind tested after it), which the engine scans for
#: (tests/test_regex_forms.py holds it to the twin).
AGG_FINDER = re.compile(
    r"h(?<!\wh)ow\s+many\b"
    r"|t(?<!\wt)(?:otal\s+(?:number|count|no\.?)\s+of|otal\s+count)\b"
    r"|n(?<!\wn)(?:umber\s+of|o\.\s+of)\b"
    r"|#(?<![\w#]#)(?:\s*of\b|\s*(?=[a-z]))"
    r"|c(?<!\wc)ount\b"
    r"|s(?<!\ws)(?:um\s+of|umm?ed\s+up)\b"
    r"|t(?<!\wt)(?:he\s+sum|otal)\b"
    r"|i(?<!\wi)n\s+total\b"
    r"|a(?<![\w-]a)(?:verage|vg)\b"
    r"|m(?<![\w-]m)ean\b"
    r"|m(?<!\wm)(?:aximum|ax)\b"
    r"|m(?<!\wm)(?:inimum|in)\b",
    re.A,
)


_DISTINCT_AFTER = re.compile(
    r"\s+(?:of\s+)?(?:the\s+)?(?:different|distinct|unique|kinds?\s+of|types?\s+of)\b"
)


#: "the maximum price and score": a second noun after "and" that the aggregate word takes
#: too (no article, no aggregate word of its own).
_AND_NOUN = re.compile(r"\s+and\s+(?!(?:the|a|an|its|their|his|her|which|who|what|how)\b)(?=[a-z])")


def _coordinated(low: str, end: int, word: str) -> list[tuple[str, str]]:
    """(target, text) of a noun joined by "and" to an aggregate's target ending at ``end``,
    which the aggregate ``word`` takes too: "the maximum price and score" asks for the
    maximum score as well.

    >>> low = "give the maximum price and score for wines"
    >>> _coordinated(low, low.index(" and"), "maximum")
    [('score', 'maximum score')]
    >>> _coordinated("the maximum price and the name", 20, "maximum")
    []
    """
    m = _AND_NOUN.match(low, end)
    if m is None:
        return []
    target, _ = _noun_phrase(low, m.end(), 2)
    first = target.split()[0] if target else ""
    if not first or first in lx.AGGREGATE_WORDS or first in lx.SUPERLATIVES:
        return []
    return [(target, f"{word} {target}")]


def _step_aggregations(ctx: _Ctx) -> None:
    """Aggregate cues (``how many``, ``number of``, ``total``, ``average`` …) → aggregations."""
    low, spec = ctx.low, ctx.spec
    found: list[tuple[int, int, str]] = []
    aggs = ctx.free_matches(lx.AGG_RE, AGG_FINDER)
    for m in aggs if ctx.may_have(_AGG_WORDS) or "#" in low else ():
        func = _agg_func(ctx, m, any(f == "count" for *_, f in found))
        if func:
            found.append((_counted_start(low, m), m.end(), func))
    for term_rx, func in ctx.lexicon.term_rxs:
        for m in term_rx.finditer(low):
            if ctx.free(m.start(), m.end()) and func in {"count", "sum", "avg", "min", "max"}:
                found.append((m.start(), m.end(), func))
    for start, end, func in sorted(found):
        target, tend = _noun_phrase(low, end, 3)
        distinct = False
        if func == "count":
            d = _DISTINCT_AFTER.match(low[end:])
            if d:
                distinct = True
                target, tend = _noun_phrase(low, end + d.end(), 3)
                spec.flags["distinct_counts"] = int(spec.flags.get("distinct_counts", 0)) + 1
        if target.startswith(("number of ", "count of ")):
            target = target.split(" of ", 1)[1]
        shared = "" if target else shared_target(low, end)  # "the average and maximum salary"
        target = target or shared
        text = " ".join(f"{ctx.text[start : max(end, tend)]} {shared}".split())
        word = " ".join(ctx.text[start:end].split())
        also = (  # not "the sum of checking and savings balances": one sum of two
            _coordinated(low, tend, word)
            if func in ("sum", "avg") and target and not low.endswith(" of", 0, end)
            and not low.startswith(" of ", end)
            else []
        )
        arg = ctx.match_column(target)
        if not any(
            a.func == func and a.arg == arg and a.distinct == distinct for a in spec.aggregations
        ):
            spec.aggregations.append(Aggregation(func, arg, distinct, text))
        for t, said in also:  # "the average price and score": the average score too
            if not any(a.text == said for a in spec.aggregations):
                spec.aggregations.append(Aggregation(func, ctx.match_column(t), distinct, said))
        ctx.cue(word)
    if any(a.func == "count" for a in spec.aggregations):
        spec.flags["count_question"] = True
    if any(f in _ANSWER_FUNCS and _ANSWER_LEAD.fullmatch(low, 0, s) for s, _, f in found):
        spec.flags["aggregate_answer"] = True


#: Aggregates that, asked first, are the answer itself ("Number of badges for each user").
_ANSWER_FUNCS = frozenset({"count", "sum", "avg"})
#: What may come before an aggregate that opens the request: nothing, or a request verb
#: and an article ("what is the total …", "show me the number of …", "so, how many …").
_ANSWER_LEAD = re.compile(
    r"\W*(?:(?:so|ok|okay|please|now)\W+)?"
    r"(?:(?:what|which)(?:'s|\s+(?:is|are|was|were))\s+"
    r"|(?:show|list|give|find|return|display|calculate|compute|get|tell|determine|report"
    r"|provide|retrieve)(?:\s+(?:me|us))?\s+)?"
    r"(?:(?:the|a|an|my|our)\s+)?"
)


_RATIO_AFTER = re.compile(r"\s+(?:percent|percentage|%|times)\b")
_COMPARATIVE_AFTER = re.compile(r"\s+(?:more|less|fewer)\b")
_NUMBER_NOUN_AFTER = re.compile(r"\s+(?:number|count|no\.?)\b")
#: "the total average cost": an average, which "total" only stresses.
_AVG_AFTER = re.compile(r"\s+(?:average|avg|mean)\b")
_COMPARISON_AFTER = re.compile(
    r"\s*(?:of\s+)?(?:over|above|under|below|more|less|greater|beyond|within|is|was|are|were)\b"
)
_TIED_AFTER = re.compile(r"\s+(?:of|for|per|by|across|spent|paid|earned|sold|made|in|from)\b")
_CALL_OR_OF_AFTER = re.compile(r"\s*(?:\(|of\b)")


def _agg_func(ctx: _Ctx, m: re.Match[str], has_count: bool) -> str | None:
    """The aggregate an :data:`lx.AGG_RE` match asks for, or None when it names an attribute."""
    low = ctx.low
    kind = m.lastgroup or ""
    start, end = m.start(), m.end()
    prev = _prev_words(low, start, 1)
    p = prev[-1] if prev else ""
    rest = low[end : end + 40]
    value_form = bool(ctx.rx(lx.VALUE_FORM).search(low[max(0, start - 60) : start]))
    if kind == "howmany":
        r = _RATIO_AFTER.match(rest)  # "how many times more", not "how many times has …"
        if r and (r.group(0)[-5:] != "times" or lx.TIMES_RATIO.match(rest, r.end())):
            ctx.spec.flags["ratio"] = True
            return None
        return None if _COMPARATIVE_AFTER.match(rest) else "count"
    if kind == "total_number":
        return "count"
    if kind == "number_sign":
        return "count"  # "# of Questions per Month"
    if kind == "number":
        if p in lx.NUMBER_LABELS or p in lx.NUMBER_OWNERS or rest.startswith(" the "):
            return None
        return "count"
    if kind == "count":
        initial = start == 0 or bool(lx.SENTENCE_START.search(low[max(0, start - 3) : start]))
        nxt = (rest.split() or [""])[0]
        if nxt == "from":
            return None  # "Count from the date the account was created": a start, no count
        lead = p in {"the", "a", "total"} and nxt == "of"
        verb = nxt in {"the", "how", "all", "distinct", "different", "unique", "number", "each"}
        if initial or lead or (verb and p not in lx.DETERMINERS):
            return "count"
        return "count" if _noun_count(_prev_words(low, start, 2), rest) else None
    if kind == "sum":
        phrase = " ".join(m.group(0).split())
        if phrase == "total":
            if p in lx.NUMBER_OWNERS or _NUMBER_NOUN_AFTER.match(rest) or _AVG_AFTER.match(rest):
                return None
            measured = lx.MEASURED_TOTAL.search(low, max(0, start - 30), start)
            if measured and not lx.NOUN_NEXT.match(rest):
                return None  # "the average order total": an order's total, averaged
            _, tend = _noun_phrase(low, end, 3)
            after = low[tend : tend + 14]
            if _COMPARISON_AFTER.match(after):
                return None
            tied = _TIED_AFTER.match(after)
            beside = _LISTED_AFTER.match(low, tend) or _LISTED_BEFORE.search(
                low, max(0, start - 60), start
            )
            first = rest[:1] == " " and _ANSWER_LEAD.fullmatch(low, 0, start)  # "Total X …"
            return "sum" if value_form or tied or beside or first else None
        counted = any(w[:1].isdigit() or w in lx.NUMBER_WORDS for w in _prev_words(low, start, 2))
        if phrase == "in total" and (has_count or counted):
            return None  # "less than 30 characters in total": the number's scope, no sum
        return "sum"
    if kind == "avg":
        if m.group(0) == "mean" and not value_form:
            return None
        return None if p in {"an", "above", "below", "than"} else "avg"
    if kind in {"max", "min"} and m.group(0) in {"max", "min"}:
        if _TWO_ARGUMENTS.match(low, end):
            return None  # "min(questions, answers)": the lesser of two values in a row
        listed = _listed_with_aggregate(low, start, end)  # "min, average, max …"
        return kind if _CALL_OR_OF_AFTER.match(rest) or value_form or listed else None
    return None  # "maximum"/"minimum" are read as superlatives


#: ``min(a, b)``: a function of two values of a row (SQL's LEAST), no aggregate.
_TWO_ARGUMENTS = re.compile(r"\s*\([^(),]+,[^(),]+\)")
_LIST_LINK = re.compile(r"\s*(?:,|/|&|\band\b)\s*")
#: Names of an aggregate other than a total or a count.
_OTHER_AGG = r"(?:min|minimum|max|maximum|avg|average|mean|median)"
#: A link between two listed items: ", ", ", and ", " and ".
_ITEM_LINK = r"(?:,\s*(?:and\s+)?|\s+and\s+)"
#: "total X" listed beside another aggregate ("total enrollment, and average enrollment";
#: "the average price, total revenue"): a total asked for, not a column named "total".
_LISTED_AFTER = re.compile(rf"\s*{_ITEM_LINK}(?:the\s+)?{_OTHER_AGG}\b")
_LISTED_BEFORE = re.compile(rf"\b{_OTHER_AGG}\s+[a-z]+(?:\s+[a-z]+)?\s*{_ITEM_LINK}(?:the\s+)?$")
_AGG_NAME = re.compile(rf"(?:{_OTHER_AGG}|sum|total|count)\b")


_AGG_LIST_BEFORE = re.compile(r"([a-z]+)(?:\s*(?:,|/|&)\s*|\s+and\s+)$")


def _listed_with_aggregate(low: str, start: int, end: int) -> bool:
    """``min``/``max`` listed beside another aggregate's name (``min, average, max and
    variance``, ``max/min``), where alone they may be a word of a name.

    >>> _listed_with_aggregate("min, average, max length", 0, 3)
    True
    >>> _listed_with_aggregate("the max speed", 4, 7)
    False
    """
    after = _LIST_LINK.match(low, end)
    if after and _AGG_NAME.match(low, after.end()):
        return True
    before = _AGG_LIST_BEFORE.search(low[max(0, start - 16) : start])
    return bool(before and _AGG_NAME.fullmatch(before.group(1)))


_WORD_BEFORE = re.compile(r"([a-z]+)\s+$")


def _counted_start(low: str, m: re.Match[str]) -> int:
    """Where an aggregate cue starts: at the noun of ``answer count``, else at the cue."""
    if m.lastgroup != "count":
        return m.start()
    before = _WORD_BEFORE.search(low[max(0, m.start() - 30) : m.start()])
    words = _prev_words(low, m.start(), 2)
    if before and _noun_count(words, low[m.end() : m.end() + 40]):
        return m.start() - len(before.group(0))
    return m.start()


def _noun_count(before: list[str], rest: str) -> bool:
    """``answer count``, ``post count``: a count of the noun before "count" asked for (the
    SQL answers it by a COUNT or by a stored count column), unless the text compares or sets
    it (``a view count above 1000``), aggregates it (``the average room count``) or ranks
    by it (``by view count``).

    >>> _noun_count(["answer"], " by post (2011)"), _noun_count(["view"], " above 1000")
    (True, False)
    >>> _noun_count(["the"], " of users"), _noun_count(["highest", "dock"], "?")
    (False, False)
    """
    noun = before[-1] if before else ""
    if not noun.isalpha() or len(noun) < 3 or noun in lx.PHRASE_STOPS or noun in lx.DETERMINERS:
        return False
    if any(w in lx.NUMBER_OWNERS or w in lx.AGGREGATE_WORDS for w in before):
        return False
    if before[0] == "by" and len(before) > 1:
        return False  # "top askers by view count": the quantity ranks, it is not asked for
    return not lx.COUNT_COMPARED.match(rest)


_HOW_MANY_BEFORE = re.compile(r"how\s+many\s+(?:different\s+)?$")


def _step_distinct(ctx: _Ctx) -> None:
    for m in ctx.free_matches(lx.DISTINCT_RE):
        word = m.group(0)
        if word[0] in "kts":
            before = ctx.low[max(0, m.start() - 20) : m.start()]
            if not _HOW_MANY_BEFORE.search(before):
                continue
        ctx.spec.distinct = True
        ctx.cue(word)


_GROUP_BY_WORDS = re.compile(r"\bgroup(?:ed)?\s+by\b")
#: A second grouping key after the first: "by region and month", "per city and year" (a
#: determiner after "and" starts another item: "by region and the number of orders").
_AND_KEY = re.compile(r",?\s+and\s+(?:by\s+|per\s+)?(?!(?:the|a|an|their|its|his|her|our|my)\b)")
_AGENT_AFTER_BY = re.compile(r"\s*(?:['\"]|[A-Z]|\d)")  # "by user 5": a user, no grouping


def _step_group_by(ctx: _Ctx) -> None:
    """``per X``, ``for each X``, ``grouped by X`` (and ``by X`` right after an aggregate
    or an amount's noun: "revenue by region"); "by X and Y" groups by both."""
    spec, low = ctx.spec, ctx.low
    if not spec.aggregations and not _GROUP_BY_WORDS.search(low) and not ctx.has(lx.FIGURE_NOUNS):
        return
    for m in ctx.free_matches(lx.GROUP_RE):
        cue = " ".join(m.group("cue").casefold().split())
        prev = _prev_words(low, m.start(), 6)  # "the average age of our customers by gender"
        p = prev[-1] if prev else ""
        if cue == "by":  # after an aggregate or an amount's noun ("revenue by region")
            agg_near = any(w in lx.AGGREGATE_WORDS or w in lx.MEASURE_NOUNS for w in prev)
            if not agg_near or p in lx.NOT_GROUP_BY or p.endswith(("ed", "en", "ght")):
                continue
            if ctx.text[m.start("rest")].isupper() or ctx.text[m.start("rest")] in "'\"":
                continue
        if cue == "each" and p in {"for", "in", "of", "on", "by"}:
            continue
        phrase, pend = _noun_phrase(low, m.start("rest"), 3)
        for shorter in (2, 1):  # "each store best viewed in …": a step took "best viewed"
            if phrase and not ctx.free(m.start(), pend):
                phrase, pend = _noun_phrase(low, m.start("rest"), shorter)
        if not phrase or phrase.split()[0] in {"other", "others", "one", "way", "time", "times"}:
            continue
        named = ctx.text[m.start("rest") : pend] != low[m.start("rest") : pend]  # capitals
        if cue == "by" and (named or _AGENT_AFTER_BY.match(ctx.text[pend : pend + 3])):
            continue  # "albums by the artist 'Metallica'", "by the Student_Club": an agent
        if cue == "per" and (phrase.split()[0] in lx.RATE_UNITS or p.isdigit()):
            continue
        if phrase.split()[-1].endswith("ed"):
            continue
        keys = [phrase]
        more = _AND_KEY.match(low, pend)
        if more is not None:  # "revenue by region and month": two keys
            second, second_end = _noun_phrase(low, more.end(), 2)
            if second and not second.split()[-1].endswith("ed"):
                keys.append(second)
                pend = second_end
        for key in keys:
            col = ctx.match_column(key) or key
            if col not in spec.group_by:
                spec.group_by.append(col)
        if cue.endswith(("each", "every")) or (cue == "by" and not plural_head(keys[-1])):
            spec.flags["group_each"] = True  # "for each X", "by X": one row per X, never a unit
        ctx.cue(" ".join(ctx.text[m.start() : pend].split()))


#: A series over periods: "per month", "by year", "by hour of day", "over the years".
_PERIOD_SERIES = re.compile(
    r"\b(?:per|by|each|every|over\s+the)\s+(?:the\s+)?"
    r"(?:(?:hour|time)\s+of\s+(?:the\s+)?day|day\s+of\s+(?:the\s+)?week|weekday|"
    r"years?|months?|weeks?|days?|dates?|hours?|quarters?)\b"
)
_PERIOD_WORDS = frozenset({"per", "by", "each", "every", "over"})
_SORT_BEFORE = frozenset({"sorted", "sort", "ordered", "order", "ranked", "rank", "arranged"})
#: Units before "per": "miles per hour" is a rate, not a series.
_UNIT_BEFORE_PER = lx._words(
    "miles mile kilometers kilometres km meters metres feet words dollars cents calls"
    " requests beats revolutions gallons liters litres"
)


def _step_period_series(ctx: _Ctx) -> None:
    """A question that asks for a series over periods ("Voters in moderator elections per
    year", "Answers by Time of Day") wants a figure for each period, whether or not it
    names the aggregate: the ``period_series`` flag; "sorted by date" is an order and
    "miles per hour" a rate.

    >>> from stef.nl.spec import analyze_text
    >>> [analyze_text(q).spec.flags.get("period_series", False) for q in (
    ...     "Voters in moderator elections per year", "Users sorted by date",
    ...     "Wind speed in miles per hour")]
    [True, False, False]
    """
    if not ctx.words & _PERIOD_WORDS:
        return
    for m in _PERIOD_SERIES.finditer(ctx.low):
        before = _prev_words(ctx.low, m.start(), 2)
        if set(before) & _SORT_BEFORE:
            continue  # "sorted by date": an order
        if before and before[-1] in _UNIT_BEFORE_PER and ctx.low.startswith("per", m.start()):
            continue
        ctx.spec.flags["period_series"] = True
        return


#: A later sentence that asks for a list ("… ? List them by their ID.").
_LIST_AFTER = re.compile(r"[.?!;]\s+(?:please\s+)?(?:list|name|show|give|state|indicate)\b")

_FIRST_WORDS = re.compile(r"\W*([a-z']+)(?:\s+([a-z']+))?")

#: Words between a list opener and the noun it asks for that say nothing of that noun.
_BEFORE_NOUN = lx._words("me us the our my your total q1 q2 q3 q4 ytd mtd qtd are were is was")


def _measure_next(low: str, first: re.Match[str] | None) -> bool:
    """Does the noun after the opening words name an amount ("show me the Q3 revenue")?"""
    words = [first.group(2) or "", *low[first.end() :].split()[:5]] if first else []
    rest = [w.strip("?.,!") for w in words]
    rest = [w for w in rest if w and w not in _BEFORE_NOUN and not w.isdigit()]
    return bool(rest) and rest[0] in lx.MEASURE_NOUNS


def _noun_ratio(low: str, m: re.Match[str]) -> bool:
    """A share named by its measure at the start of the question, then broken down or
    qualified: "Revenue share of each region", "Market share by brand" ("rate" is left
    to its "of"; "the market share of Safari" may be a stored column, and is left alone)?

    >>> _noun_ratio("revenue share of each region", lx.RATIO_RE.search("revenue share of"))
    True
    """
    if m.group(0) not in ("share", "proportion", "fraction", "percentage"):
        return False
    return len(_prev_words(low, m.start(), 2)) == 1 and _OF_OR_BY.match(low, m.end()) is not None


_OF_OR_BY = re.compile(r"\s+(?:of|by|per|for)\s")


def _step_flags(ctx: _Ctx, style: str) -> None:
    spec, low = ctx.spec, ctx.low
    first = _FIRST_WORDS.match(low)
    w1, w2 = (first.group(1), first.group(2) or "") if first else ("", "")
    if style != "hints":
        spec.flags["yes_no"] = w1 in lx.YES_NO_OPENERS
        listed = w1 in lx.LIST_OPENERS or (w1 == "what" and w2 in {"are", "were"})
        spec.flags["list"] = listed and not _measure_next(low, first)
        # "How many races were there in 2005? Name all the races": a list asked for too
        spec.flags["list_after"] = _LIST_AFTER.search(low) is not None
    ratio = ctx.may_have(lx.RATIO_WORDS) or "percent" in low
    for m in ctx.free_matches(lx.RATIO_RE) if ratio else ():
        prev = _prev_words(low, m.start(), 1)
        word = m.group(0).split()[0]
        if word in {"how", "in"} or not prev or prev[-1] in lx.RATIO_LEADS or _noun_ratio(low, m):
            if word == "rate" and not low.startswith(" of", m.end()):
                continue
            spec.flags["ratio"] = True  # asked first ("fraction of …"), it is the answer
            if _ANSWER_LEAD.fullmatch(low, 0, m.start()):
                spec.flags["aggregate_answer"] = True
            ctx.cue(m.group(0))
            break
    if ctx.may_have(lx.DIVIDED_WORDS) and ctx.rx(lx.DIVIDED_RE).search(low):
        spec.flags["division"] = True
    negated = ctx.may_have(lx.NEGATION_WORDS) or "n't" in low
    negations = ctx.rx(lx.NEGATION_ANY).finditer(low) if negated else ()
    if any(ctx.mask[m.start()] == 0 for m in negations) or any(
        f.op in {"!=", "not in", "not like", "not between"} for f in spec.filters
    ):
        spec.flags["negation"] = True
