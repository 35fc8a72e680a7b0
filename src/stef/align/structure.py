"""Structural checks that need no question: redundant or bridge-only tables, integer
division, identical set-operation sides, cartesian joins, duplicate outputs, aggregates in
WHERE and nested aggregates (flags set by :mod:`stef.sql.spec`), and a LIKE pattern compared
with ``=``; the conditions that cannot say what they mean are :mod:`stef.align.conditions`'s.
"""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Any

from stef.align.conditions import check_conditions
from stef.align.join_keys import _own_key as own_key
from stef.align.matching import canon_col, name_words, pinned_columns, written_strings
from stef.findings import FindingCollector
from stef.nl.lexicon import _words
from stef.spec import Filter, Spec

#: Words of an output's alias and the aggregates they describe.
_ALIAS_FUNCS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"count", "cnt", "num", "number", "nb", "counts"}), frozenset({"count"})),
    (frozenset({"avg", "average", "mean"}), frozenset({"avg"})),
    (
        frozenset({"max", "maximum", "highest", "largest", "biggest", "longest", "latest"}),
        frozenset({"max"}),
    ),
    (
        frozenset({"min", "minimum", "lowest", "smallest", "shortest", "earliest", "fewest"}),
        frozenset({"min"}),
    ),
    (frozenset({"sum", "total"}), frozenset({"sum", "count"})),
)


#: A column holding a quantity (``answercount``, ``num_views``, ``qty``): its SUM is a count.
_STORED_QUANTITY = re.compile(
    r"(?:count|cnt|total|num\w*|s|quantity|qty)$|(?:^|[._])(?:num|n|total)_"
)

#: The aggregates an alias can contradict.
_ALIASABLE = frozenset({"count", "sum", "avg", "max", "min"})


#: Words of an output's name that say it is an amount of money, never a number of rows.
_MONEY = frozenset(
    {"revenue", "revenues", "spend", "spending", "spent", "cost", "costs", "price", "prices"}
    | {"profit", "profits", "income", "gmv", "salary", "payroll", "balance", "earnings"}
)


def alias_functions(alias: str) -> frozenset[str]:
    """The aggregates an output's name describes (empty when it names none).

    >>> sorted(alias_functions("Total_Number_Of_Floors")), sorted(alias_functions("highest_floor"))
    (['count', 'sum'], ['max'])
    >>> alias_functions("department")
    frozenset()
    """
    words = {w.casefold() for w in name_words(alias)}
    out: frozenset[str] = frozenset()
    for names, funcs in _ALIAS_FUNCS:
        if words & names:
            out |= funcs
    return out


def _check_fanned_sums(flags: dict[str, Any], out: FindingCollector) -> None:
    """A SUM of a table's column over a join that repeats its rows (``sum_fanouts``)."""
    for total, entity, child in flags.get("sum_fanouts") or ():
        out.add(
            "sum_fanout",
            "warning",
            f"{total} adds each {entity}'s value once per joined {child} row (the join repeats"
            f" each {entity})",
            None,
            total,
            "structure",
        )


def _check_unused_child(sql: Spec, out: FindingCollector, question: str) -> None:
    """An average, a total or a count of a column over a join to a table the SQL reads
    nothing of, whose key refers to another table's own key (``comments.postid = posts.id``):
    each post comes back once per comment, so ``AVG(posts.score)`` weighs a post by its
    comments and ``COUNT(posts.owneruserid)`` counts it once per comment
    (``aggregate_fanout``). Not where the question names that table (an average over "all
    trips" may mean one per trip), the SQL groups, or an aggregate is DISTINCT.

    >>> from stef.spec import Aggregation
    >>> sql = Spec(tables=["users", "posts", "comments"], flags={"redundant_tables": ["comments"]},
    ...     joins=[{"left": "id", "right": "postid", "tables": ["posts", "comments"]}],
    ...     aggregations=[Aggregation("avg", "score", False, "AVG(posts.score)")])
    >>> out = FindingCollector()
    >>> _check_unused_child(sql, out, "What is the average score of csgillespie's posts?")
    >>> print(out.findings[0].message)  # doctest: +NORMALIZE_WHITESPACE
    AVG(posts.score) takes each posts row once per joined comments row, and the SQL reads
    nothing of comments
    """
    redundant = sql.flags.get("redundant_tables")  # most queries have none: read it first
    aggs = [a for a in sql.aggregations if a.func in ("avg", "count", "sum")] if redundant else []
    if not aggs or sql.group_by or sql.subqueries or sql.ctes or sql.flags.get("sum_fanouts"):
        return  # one SELECT only; a SUM's fan-out is ``sum_fanout``'s
    if any(a.distinct or not _PLAIN_ARG.fullmatch(a.arg or "") for a in aggs):
        return  # DISTINCT, COUNT(*), ``SUM(CASE WHEN … THEN 1 END)``: rows, not a column
    asked = _QUESTION_WORD.findall(question.casefold())
    for table in redundant or ():
        for j in sql.joins:
            tables = [t.casefold() for t in j.get("tables") or ()]
            if len(tables) != 2 or table.casefold() not in tables or tables[0] == tables[1]:
                continue
            mine = 1 if tables[1] == table.casefold() else 0
            cols = (j.get("left") or "", j.get("right") or "")
            parent = tables[1 - mine]
            if not own_key(cols[1 - mine], parent) or own_key(cols[mine], table):
                continue
            head = (name_words(table.casefold()) or [table.casefold()])[-1]
            if any(w.startswith(head[:5]) for w in asked):
                continue  # "the average latitude of the starting points of all trips"
            out.add(
                "aggregate_fanout",
                "warning",
                f"{aggs[0].text} takes each {parent} row once per joined {table} row, and the"
                f" SQL reads nothing of {table}",
                None,
                aggs[0].text,
                "structure",
            )
            return


_QUESTION_WORD = re.compile(r"[a-z]{3,}")
_PLAIN_ARG = re.compile(r"[a-z_][a-z0-9_]*", re.I)


def _check_outer_star_counts(flags: dict[str, Any], out: FindingCollector) -> None:
    """``COUNT(*)`` per parent over a LEFT JOIN to its children (``outer_star_counts``): a
    parent with no child keeps one row of NULLs, which COUNT(*) counts (the first)."""
    for child in (flags.get("outer_star_counts") or ())[:1]:
        out.add(
            "count_star_outer_join",
            "warning",
            f"COUNT(*) counts the row a LEFT JOIN keeps for a group with no {child}: such a"
            f" group counts 1, not 0 (COUNT of a column of {child} counts 0)",
            None,
            "COUNT(*)",
            "structure",
        )


def _check_zero_counts(flags: dict[str, Any], out: FindingCollector) -> None:
    """A COUNT of a column the WHERE keeps NULL (``zero_counts``): always 0 (the first)."""
    for count in (flags.get("zero_counts") or ())[:1]:
        out.add(
            "count_always_zero",
            "error",
            f"{count} counts a column the WHERE keeps NULL, and COUNT skips NULLs: it is always"
            " 0 (COUNT(*) counts the rows)",
            None,
            count,
            "structure",
        )


def _junction(table: str, tables: list[str]) -> bool:
    """Is ``table`` named for two other tables of the query (``posttags`` beside ``posts``
    and ``tags``, ``film_actor`` beside ``film`` and ``actor``): a many-to-many table,
    whose only use is to link them?

    >>> _junction("posttags", ["posts", "posttags", "tags"]), _junction("tmp", ["a", "b"])
    (True, False)
    """
    low = table.casefold()
    others = {
        t.casefold().rsplit(".", 1)[-1].rstrip("s") for t in tables if t.casefold() != low
    }
    return sum(1 for t in others if len(t) >= 3 and t in low) >= 2


#: Words of an enriched question, for the tables it names.
_HINT_WORD = re.compile(r"[a-z][a-z0-9]*")


def check_structure(
    sql: Spec, out: FindingCollector, question: str = "", hints: str | None = None
) -> None:
    flags = sql.flags
    _check_zero_counts(flags, out)
    _check_outer_star_counts(flags, out)
    for table in flags.get("redundant_tables") or ():
        out.add(
            "table_redundant",
            "warning",
            f"table {table!r} is joined but none of its columns is used",
            None,
            table,
            "structure",
        )
    said = {w.rstrip("s") for w in _HINT_WORD.findall(hints.casefold())} if hints else set()
    for table in flags.get("bridge_tables") or ():
        if said and all(w.casefold().rstrip("s") in said for w in name_words(table)):
            continue  # the agent's enrichment names the table it joins through
        if _junction(table, sql.tables):
            continue  # posttags between posts and tags: a many-to-many table, made to link
        out.add(
            "table_bridge_only",
            "warning",
            f"table {table!r} only links two other tables; none of its columns is used",
            None,
            table,
            "structure",
        )
    _check_fanned_sums(flags, out)
    _check_unused_child(sql, out, question)
    _check_aggregate_outputs(flags, out, pinned_columns(sql))
    _check_branch_counts(flags, out)
    _check_label_sums(sql, out)
    _check_integer_division(flags, out)
    _check_or_precedence(flags, out)
    _check_compared_literals(sql, out, question)
    _check_set_operations(sql, out)
    check_conditions(sql, out)
    if flags.get("cartesian_join"):
        out.add(
            "cartesian_join",
            "warning",
            "tables are joined with no linking condition",
            None,
            ", ".join(sql.tables),
            "structure",
        )
    if flags.get("duplicate_projections"):
        out.add(
            "duplicate_projection",
            "warning",
            "the same expression is selected twice",
            None,
            None,
            "structure",
        )
    if flags.get("aggregate_in_where"):
        out.add(
            "aggregate_in_where",
            "error",
            "an aggregate appears in WHERE (it belongs in HAVING)",
            None,
            None,
            "structure",
        )
    if flags.get("nested_aggregate"):
        out.add(
            "nested_aggregate",
            "warning",
            "an aggregate is nested inside another",
            None,
            None,
            "structure",
        )


def _check_or_precedence(flags: dict[str, Any], out: FindingCollector) -> None:
    """``a = 1 AND b IS NULL OR b = '*'``: see :func:`stef.sql.predicates.or_precedence`."""
    if precedence := flags.get("or_precedence"):
        out.add(
            "or_precedence",
            "error",
            "AND binds tighter than OR: the OR's lone condition keeps rows whatever the AND "
            "chain beside it says; parentheses around the two conditions on the same column "
            "were probably meant",
            None,
            precedence,
            "structure",
        )


def _check_compared_literals(sql: Spec, out: FindingCollector, question: str) -> None:
    """String literals a condition compares in a way no row can match: a LIKE pattern
    under ``=`` and a text compared with a column named for a number."""
    written = written_strings(sql)
    if written:  # a format ('%Y%m%d') or a number is no literal compared
        _check_wildcards(sql, written, out, question)
        _check_value_types(sql, written, out)
    _check_numbered_names(sql, written, out)


#: A percentage written as text (``'10%'``, ``'12.5 %'``): a value, not a pattern, where the
#: question states it as written ("the 10% discount code"), else a pattern ("post codes
#: starting with 4" as ``= '4%'``).
_PERCENT_TEXT = re.compile(r"-?\d+(?:\.\d+)?\s*%")


def _check_wildcards(
    sql: Spec, written: frozenset[str], out: FindingCollector, question: str = ""
) -> None:
    """A LIKE pattern compared with ``=``, ``<>`` or ``IN`` (``start_date = '8/%'``): only
    LIKE reads ``%`` as a wildcard, so the condition looks for the text as written. An error
    where the pattern is all the condition holds; a warning for one value of a longer IN list
    (the other values still match). A percentage is a value where ``question`` states it as
    written (:data:`_PERCENT_TEXT`).

    >>> from stef.spec import Filter
    >>> out, written = FindingCollector(), frozenset({"8/%", "10%", "4%"})
    >>> _check_wildcards(Spec(filters=[Filter("d", "=", ("8/%",), "d = '8/%'")]), written, out)
    >>> like, percent = Filter("d", "like", ("8/%",)), Filter("r", "=", ("10%",))
    >>> _check_wildcards(Spec(filters=[like, percent]), written, out, "the 10% rate")
    >>> zip_code = Filter("zip", "=", ("4%",), "zip = '4%'")
    >>> _check_wildcards(Spec(filters=[zip_code]), written, out, "zip codes starting with 4")
    >>> [f.message.split(":")[0] for f in out.findings]
    ["d = '8/%' compares with '='", "zip = '4%' compares with '='"]
    """
    patterns = {v for v in written if "%" in v}
    for f in sql.filters if patterns else ():
        if f.op not in ("=", "!=", "in", "not in", "<", ">", "<=", ">="):
            continue  # "duration < '4:%'" for "approximately 4 minutes"
        pattern = next(
            (
                v
                for v in f.values
                if v in patterns and not (_PERCENT_TEXT.fullmatch(v) and v in question)
            ),
            None,
        )
        if pattern is None:
            continue
        op = {"=": "'='", "!=": "'<>'"}.get(f.op, f.op.upper())
        alone = all("%" in v for v in f.values)
        out.add(
            "wildcard_without_like",
            "error" if alone else "warning",
            f"{f.text} compares with {op}: '%' is a wildcard only in LIKE, so it keeps the rows "
            f"whose value is {pattern!r} as written",
            None,
            f.text,
            "structure",
        )


#: Last words of a column name that hold a number: a year, a price, an age, a count.
_NUMBER_HEADS = _words(
    """year years price prices cost costs amount amounts salary salaries qty quantity total
    age ages weight height budget revenue capacity population count fee fees duration"""
)
#: First words of a name that make it a flag whatever it ends with (``is_offered_this_year``).
_FLAG_LEADS = _words("is has flag")


def _check_value_types(sql: Spec, written: frozenset[str], out: FindingCollector) -> None:
    """A column named for a number compared with a text that holds no digit (``Year = 'San
    Jose State University'``, ``price = 'cumin'``): no row can hold it, and the value most
    likely belongs to another column.

    >>> from stef.spec import Filter
    >>> out, written = FindingCollector(), frozenset({"glenn", "y"})
    >>> year = Filter("year", "=", ("glenn",), "Year = 'Glenn'")
    >>> flag = Filter("is_this_year", "=", ("y",))
    >>> _check_value_types(Spec(filters=[year, flag]), written, out)
    >>> [f.message for f in out.findings]
    ["year holds numbers (a year); the SQL compares it with the text 'glenn'"]
    """
    for f in sql.filters:
        if f.op in (">", ">=", "<", "<=") and f.column and _check_size_text(f, written, out):
            continue
        if f.op not in ("=", "!=", "in", "not in") or not f.column:
            continue
        if f.func and f.func not in _SAME_TYPE:
            continue  # RIGHT(email, 9) = 'gmail.com': a part of the value, not the value
        words = name_words(f.column)
        if ("email" in words or words[-1:] == ["mail"]) and _check_email(f, written, out):
            continue
        if words and words[-1] in _DATE_HEADS and _check_date_text(f, written, out):
            continue
        if not words or words[-1] not in _NUMBER_HEADS or words[0] in _FLAG_LEADS:
            continue
        text = next(
            (v for v in f.values if v in written and v.strip() and not any(map(str.isdigit, v))),
            None,
        )
        if text is not None and "%" not in text:
            out.add(
                "value_type_mismatch",
                "error",
                f"{f.column} holds numbers (a {words[-1]}); the SQL compares it with the text"
                f" {text!r}",
                None,
                f.text,
                "structure",
            )


#: Functions whose result holds what their argument holds (a case-folded, trimmed value).
_SAME_TYPE = frozenset({"lower", "upper", "trim", "ltrim", "rtrim", "lcase", "ucase"})


def _check_numbered_names(sql: Spec, written: frozenset[str], out: FindingCollector) -> None:
    """A column named for a name compared with a bare number (``DName = 520``,
    ``supplier_name = 3``): a name is text, so the number is most likely the value of
    another column (the department's number, the supplier's id). A number written as text
    (``name = '520'``) is left alone.

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> dept = Filter("dname", "=", ("520",), "T2.DName = 520")
    >>> _check_numbered_names(Spec(filters=[dept]), frozenset(), out)
    >>> [f.message for f in out.findings]
    ['dname holds names; the SQL compares it with the number 520']
    """
    for f in sql.filters:
        if f.op not in ("=", "!=", "in", "not in") or not f.column or not f.values:
            continue
        if not f.column.endswith("name") or f.func or any(v in written for v in f.values):
            continue
        if all(_NUMBER.fullmatch(v) for v in f.values):
            out.add(
                "value_type_mismatch",
                "error",
                f"{f.column} holds names; the SQL compares it with the number {f.values[0]}",
                None,
                f.text,
                "structure",
            )


#: A number as a filter holds it (``520``, ``-3``, ``2.5``).
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _check_size_text(f: Filter, written: frozenset[str], out: FindingCollector) -> bool:
    """A column compared by size with a word (``age > 'engineer'``): the word is a value of
    another column that the comparison should have looked up (a subquery's MAX, a join)."""
    words = [v for v in f.values if v in written and len(v.strip()) > 1 and "%" not in v]
    text = next((v for v in words if not any(map(str.isdigit, v))), None)
    if text is None:
        return False
    out.add(
        "text_compared_by_size",
        "error",
        f"{f.text} compares {f.column} by size with the word {text!r}",
        None,
        f.text,
        "structure",
    )
    return True


#: Last words of a column name that hold a date or a time.
_DATE_HEADS = _words("date time timestamp datetime")
#: Texts that stand for a missing value, which a date column may hold as written.
_NULL_TEXTS = frozenset({"null", "none", "n/a", "na", "nan", "unknown"})


def _check_date_text(f: Filter, written: frozenset[str], out: FindingCollector) -> bool:
    """A date or time column compared with a text that holds no digit (``end_date = 'Palo
    Alto'``): no date equals it; the value belongs to another column. A text that stands for
    a missing value (``'null'``) is left alone."""
    text = next(
        (
            v
            for v in f.values
            if v in written
            and v.strip()
            and not any(map(str.isdigit, v))
            and v.strip().casefold() not in _NULL_TEXTS
            and "%" not in v
        ),
        None,
    )
    if text is None:
        return False
    out.add(
        "value_type_mismatch",
        "error",
        f"{f.column} holds dates; the SQL compares it with the text {text!r}",
        None,
        f.text,
        "structure",
    )
    return True


def _check_email(f: Filter, written: frozenset[str], out: FindingCollector) -> bool:
    """An e-mail column compared with a text that holds no ``@`` (``email_address =
    'Lockmanfurt'``): no address can equal it; the value belongs to another column."""
    text = next((v for v in f.values if v in written and "@" not in v and "%" not in v), None)
    if text is None or not text.strip():
        return False
    out.add(
        "value_type_mismatch",
        "error",
        f"{f.column} holds e-mail addresses; the SQL compares it with the text {text!r}",
        None,
        f.text,
        "structure",
    )
    return True


def _check_branch_counts(flags: dict[str, Any], out: FindingCollector) -> None:
    """One output name that counts a column DISTINCT in one place and every row of it in
    another: a grand-total branch of a set operation that repeats the rows' distinct count
    without DISTINCT (``COUNT(DISTINCT session) AS n_sessions`` per group, ``COUNT(session)``
    in the total row).

    >>> out = FindingCollector()
    >>> _check_branch_counts({"aggregate_aliases": [["n", "count", "distinct s.k"],
    ...                                              ["n", "count", "k"]]}, out)
    >>> [f.kind for f in out.findings]
    ['branch_count_mismatch']
    """
    seen: dict[tuple[str, str], set[bool]] = {}
    for name, func, arg in flags.get("aggregate_aliases") or ():
        if func != "count":
            continue
        distinct = arg.startswith("distinct ")
        column = arg.removeprefix("distinct ").rsplit(".", 1)[-1]
        seen.setdefault((name, column), set()).add(distinct)
    for (name, column), kinds in seen.items():
        if len(kinds) == 2:
            out.add(
                "branch_count_mismatch",
                "warning",
                f"output {name!r} counts distinct {column} in one place and every row of it"
                " in another",
                None,
                name,
                "structure",
            )
            return


#: Output-name words that say each value is counted once.
_DISTINCT_WORDS = frozenset({"unique", "distinct", "different"})


def _check_distinct_aliases(flags: dict[str, Any], out: FindingCollector) -> None:
    """An output named for a distinct count (``unique_courses``, ``[Distinct Users]``) that
    counts every row: ``COUNT(s.subject_id) AS unique_courses``.

    >>> out = FindingCollector()
    >>> _check_distinct_aliases({"aggregate_aliases": [["unique_courses", "count", "s.id"]]}, out)
    >>> [f.kind for f in out.findings]
    ['alias_distinct_mismatch']
    """
    for alias, func, arg in flags.get("aggregate_aliases") or ():
        if func != "count" or arg.startswith("distinct ") or "case" in arg:
            continue
        if {w.casefold() for w in name_words(alias)} & _DISTINCT_WORDS:
            out.add(
                "alias_distinct_mismatch",
                "warning",
                f"output {alias!r} is named for a distinct count but counts every row",
                None,
                alias,
                "structure",
            )
            return


def _check_aggregate_outputs(
    flags: dict[str, Any], out: FindingCollector, pinned: Container[str] = ()
) -> None:
    """Outputs whose name says another aggregate, and bare columns beside an aggregate; a
    hidden grouping key that a WHERE holds to one value (``pinned``, canonical names) repeats
    no label."""
    carried = set(flags.get("carried_aliases") or ())
    for alias, func, arg in flags.get("aggregate_aliases") or ():
        said = alias_functions(alias) if alias not in carried else frozenset()
        if "case" in arg or "count(" in arg or (alias_functions(arg) & said and func != "avg"):
            continue  # SUM(CASE … THEN 1 END) counts; MAX(member_count) is a count (an
            # average of totals is no total)
        if said == {"count"} and func == "sum" and _STORED_QUANTITY.search(arg):
            continue  # SUM(favoritecount) AS FavoriteCount: a sum of counts is a count
        if said and func in _ALIASABLE and func not in said:
            out.add(
                "alias_aggregate_mismatch",
                "warning",
                f"output {alias!r} is named for {'/'.join(sorted(said)).upper()} "
                f"but computed with {func.upper()}",
                None,
                alias,
                "structure",
            )
            break
        if func == "count" and not said and {w.casefold() for w in name_words(alias)} & _MONEY:
            out.add(  # COUNT(*) AS revenue: a number of rows named for an amount of money
                "alias_aggregate_mismatch",
                "warning",
                f"output {alias!r} is named for an amount but computed with COUNT",
                None,
                alias,
                "structure",
            )
            break
    _check_distinct_aliases(flags, out)
    if flags.get("unlabelled_groups"):
        out.add(
            "groups_unlabelled",
            "warning",
            "the SQL groups rows but outputs only aggregates: nothing tells its rows apart",
            None,
            None,
            "structure",
        )
    hidden = [k for k in flags.get("unshown_group_keys") or () if canon_col(k) not in pinned]
    if hidden:
        out.add(
            "group_key_unshown",
            "warning",
            f"the SQL groups by {hidden[0]!r} but no output shows it: the rows of one label"
            " repeat, one per value of it",
            None,
            hidden[0],
            "structure",
        )
    ungrouped = flags.get("ungrouped_columns") or ()
    if ungrouped:
        out.add(
            "ungrouped_column",
            "warning",
            f"column {ungrouped[0]!r} is selected beside an aggregate with no GROUP BY: "
            "its value is one arbitrary row's",
            None,
            ungrouped[0],
            "structure",
        )
    bare = flags.get("bare_under_group") or ()
    if bare and not any(f.kind == "group_key_unshown" for f in out.findings):  # one defect
        out.add(
            "column_not_grouped",
            "warning",
            f"column {bare[0]!r} is selected beside a GROUP BY that neither holds it nor a key"
            " that determines it: its value is one arbitrary row's of each group",
            None,
            bare[0],
            "structure",
        )


def _check_set_operations(sql: Spec, out: FindingCollector) -> None:
    """Both sides of a set operation the same query (``set_operation_identical``), or an
    INTERSECT or EXCEPT of two sides that return different things
    (``set_operation_mismatch``, :mod:`stef.sql.setops`)."""
    if sql.flags.get("identical_set_sides"):
        out.add(
            "set_operation_identical",
            "error",
            "both sides of the set operation are the same query",
            None,
            " ".join(sql.set_operations).upper(),
            "structure",
        )
    for operation, left, right in sql.flags.get("unmatched_set_sides") or ():
        out.add(
            "set_operation_mismatch",
            "error",
            f"{operation.upper()} sets {left} against {right}: its two sides return different"
            " things, so it compares values that cannot match",
            None,
            f"{left} {operation.upper()} {right}",
            "structure",
        )
        return


#: Last words of a column that labels rows rather than measuring them.
_LABELS = frozenset(
    {
        "id",
        "name",
        "title",
        "code",
        "key",
        "email",
        "phone",
        "address",
        "desc",
        "description",
        "number",
        "isbn",
    }
)


#: Words that end in "id" and name no identifier (``amount_paid``, ``is_valid``).
_NOT_IDS = _words(
    """paid prepaid unpaid overpaid underpaid repaid valid invalid void avoid fluid liquid
    solid hybrid acid grid humid rapid raid said laid amid lipid pyramid"""
)


def _labels_rows(word: str) -> bool:
    """Does a column's last word name a label: ``id``, ``name`` … or an identifier run
    together with its entity (``userid``, ``owneruserid``, ``postid``)?

    >>> [_labels_rows(w) for w in ("id", "title", "owneruserid", "paid", "score")]
    [True, True, True, False, False]
    """
    w = word.casefold()
    return w in _LABELS or (len(w) >= 5 and w.endswith("id") and w not in _NOT_IDS)


#: Words that end in "date" and name no date.
_NOT_DATES = frozenset({"candidate", "validate", "consolidate", "accommodate", "liquidate"})


def _names_date(word: str) -> bool:
    """Does a column's last word name a calendar date (``start_date``, ``creationdate``)?

    >>> [_names_date(w) for w in ("date", "creationdate", "candidate", "update", "days")]
    [True, True, False, False, False]
    """
    w = word.casefold()
    return w in ("date", "datetime", "timestamp", "birthday") or (
        len(w) >= 8 and w.endswith("date") and w not in _NOT_DATES
    )


def _check_label_sums(sql: Spec, out: FindingCollector) -> None:
    """A SUM or AVG over a column that labels rows (``SUM(DISTINCT full_name)``,
    ``AVG(mit_id)``, ``SUM(owneruserid)``): labels are counted, not added up. Otherwise a
    SUM or AVG of DISTINCT values (``SUM(DISTINCT amount)``): equal values of different
    rows count once, so two orders of 10 add up to 10 (``aggregate_of_distinct``). A SUM or
    AVG over a date (``AVG(start_date)``) adds up no amount (``aggregate_of_date``)."""
    keys = set(sql.flags.get("join_keys") or ())
    for a in (*sql.aggregations, *sql.window_aggregations):
        words = name_words(a.arg or "")
        bare = a.arg is not None and "(" not in a.arg  # LENGTH(title) measures a label
        joined = bare and (a.arg or "").rsplit(".", 1)[-1] in keys  # a key it joins on
        if a.func in ("sum", "avg") and bare and words and (_labels_rows(words[-1]) or joined):
            out.add(
                "aggregate_of_label",
                "warning",
                f"{a.func.upper()} adds up {a.arg!r}, a column that labels rows",
                None,
                a.text,
                "structure",
            )
            return
        column = bare and not any(map((a.arg or "").__contains__, " +-*/|"))
        if a.func in ("sum", "avg") and column and words and _names_date(words[-1]):
            out.add(
                "aggregate_of_date",
                "error",
                f"{a.func.upper()} adds up {a.arg!r}, a date: dates are compared, counted or"
                " subtracted, not added up",
                None,
                a.text,
                "structure",
            )
            return
    for a in (*sql.aggregations, *sql.window_aggregations):
        if a.func in ("sum", "avg") and a.distinct:
            out.add(
                "aggregate_of_distinct",
                "warning",
                f"{a.func.upper()}(DISTINCT …) adds each distinct value of {a.arg!r} once:"
                " equal values of different rows count once",
                None,
                a.text,
                "structure",
            )
            return


def check_star_arguments(sql: Spec, out: FindingCollector) -> None:
    """``AVG(*)``, ``SUM(*)``, ``MAX(*)``: only COUNT takes ``*``; no engine runs the others."""
    for a in (*sql.aggregations, *sql.window_aggregations):
        if a.func in ("sum", "avg", "min", "max") and a.arg == "*" and "*" in a.text:
            out.add(
                "aggregate_of_star",
                "error",
                f"{a.text} is no valid SQL: only COUNT takes *",
                None,
                a.text,
                "aggregation",
            )
            return


def _check_integer_division(flags: dict[str, Any], out: FindingCollector) -> None:
    """A share of whole-number counts truncated to 0 (``share_truncated``), else any
    division of integers the dialect truncates (``integer_division``)."""
    if flags.get("share_truncated"):
        out.add(
            "share_truncated",
            "error",
            "a count of some rows is divided by a count of rows, both whole numbers: the"
            " dialect truncates the share to 0 (or 1); a CAST or 100.0 * keeps the fraction",
            None,
            None,
            "structure",
        )
    elif flags.get("integer_division"):
        out.add(
            "integer_division",
            "warning",
            "integer operands are divided without a CAST: the dialect truncates the result",
            None,
            None,
            "structure",
        )
