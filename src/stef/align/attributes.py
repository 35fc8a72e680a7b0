"""A value the question gives an attribute by name that nothing of the SQL holds: "the
average score of questions with the python tag" answered over all questions
(``attribute_value_unfiltered``).

The question's attribute values come from :func:`stef.nl.attributes.attribute_values`
("the History department", "products in category Electronics", "tagged with ruby"). A
value is answered when a literal of the SQL holds it (``TagName = 'python'``, ``Tags LIKE
'%<python>%'``, ``category IN ('Electronics', 'Toys')``), when a table, column or alias is
named after it (``python_questions``), and — since a code or a run-time parameter may stand
for it — when the SQL filters a column named for the attribute (``category_id = 3``,
``TagName = @tag``) or binds any run-time parameter. Nor is anything said when the SQL
returns the attribute (``SELECT league.name`` for "the name of the football league in the
Netherlands": the phrase names what is asked for).
"""

from __future__ import annotations

import re

from stef.align.counted import (
    check_compared_aggregate,
    check_compared_duration,
    check_counted_comparison,
    check_distinct_count_compared,
)
from stef.align.events import check_event_dates
from stef.align.matching import is_parameter, letters_in_order, name_words, word_variant
from stef.align.measured import check_compared_measure
from stef.align.rates import check_rates
from stef.align.routes import check_route_ends
from stef.align.terms import restatement_lead
from stef.findings import FindingCollector
from stef.nl.attributes import attribute_nouns, attribute_values
from stef.nl.request import requested_items
from stef.spec import Spec

_NON_ALNUM = re.compile(r"[^a-z0-9#+]")


def _squash(text: str) -> str:
    """Letters, digits, ``#`` and ``+`` of ``text``, case-folded: 'pre-modern' is 'premodern'.

    >>> _squash("Pre-Modern"), _squash("%<c#>%")
    ('premodern', 'c#')
    """
    return _NON_ALNUM.sub("", text.casefold())


def _names_attribute(name: str, attribute: str, stem: str) -> bool:
    """Is the identifier ``name`` named for ``attribute``: its stem, or a word of three
    letters or more that abbreviates it (``dept_id`` for department, ``cat_id`` for
    category)?

    >>> _names_attribute("dept_id", "department", "department")
    True
    >>> _names_attribute("tags", "tag", "tag")
    True
    >>> _names_attribute("date", "department", "department")
    False
    """
    if stem in name.casefold():
        return True
    return any(
        3 <= len(w) < len(attribute) and letters_in_order(w, attribute, 2) for w in name_words(name)
    )


def _attribute_read(attribute: str, sql: Spec) -> bool:
    """Does the SQL filter a column named for ``attribute``, or return one (``category``,
    ``league.name``)?"""
    stem = _stem(attribute)  # category, categories
    if any(_names_attribute(f.column or "", attribute, stem) for f in sql.filters):
        return True
    return any(
        any(stem in c.casefold() for c in p.columns) or stem in (p.text or p.expr).casefold()
        for p in sql.projections
    )


def _binds_parameter(sql: Spec) -> bool:
    """Does a filter of the SQL compare with a run-time parameter?

    >>> from stef.spec import Filter
    >>> _binds_parameter(Spec(filters=[Filter("tagname", "=", ("@tag",))]))
    True
    """
    return any(is_parameter(v) for f in sql.filters for v in f.values)


def check_filter_columns(
    sql: Spec, out: FindingCollector, question: str, hints: str | None = None
) -> None:
    """What the SQL filters on, against what the question names: values nothing holds
    (:func:`check_attribute_values`), values on another attribute's column
    (:func:`check_attribute_columns`), a stated comparison on a column named for another
    measure (:func:`stef.align.measured.check_compared_measure`), a stated count on a column
    named for neither the things counted nor a count
    (:func:`stef.align.counted.check_counted_comparison`), a stated duration compared unscaled
    in another unit (:func:`stef.align.counted.check_compared_duration`), a stated total or
    average compared as another aggregate (:func:`stef.align.counted.check_compared_aggregate`),
    a number of distinct things compared as a count of rows
    (:func:`stef.align.counted.check_distinct_count_compared`),
    a route's end on the column of its other end (:func:`stef.align.routes.check_route_ends`),
    a named rate divided upside down or a percentage bound on the other scale
    (:mod:`stef.align.rates`), a dated event bounded on a creation date
    (:mod:`stef.align.events`)."""
    check_attribute_values(sql, out, question)
    if (lead := restatement_lead(question, hints)) is not None:
        check_attribute_values(sql, out, lead)  # a restatement's values are asked too
    check_attribute_columns(sql, out, question)
    check_compared_measure(sql, out, question, hints)
    check_counted_comparison(sql, out, question, hints)
    check_compared_duration(sql, out, question)
    check_compared_aggregate(sql, out, question)
    check_distinct_count_compared(sql, out, question)
    check_route_ends(sql, out, question)
    check_rates(sql, out, question, hints)
    check_event_dates(sql, out, question)


def check_attribute_values(sql: Spec, out: FindingCollector, question: str) -> None:
    """Report each attribute value of ``question`` that nothing of ``sql`` holds (see the
    module doc).

    >>> from stef.spec import Filter, Projection
    >>> out = FindingCollector()
    >>> sql = Spec(tables=["posts"], columns=["score"], projections=[Projection("avg", "score")])
    >>> check_attribute_values(sql, out, "Average score of questions with the python tag")
    >>> [(f.kind, f.severity, f.nl) for f in out.findings]
    [('attribute_value_unfiltered', 'warning', 'python tag')]
    >>> out = FindingCollector()
    >>> tagged = Spec(literals=["%<python>%"], filters=[Filter("tags", "like", ("%<python>%",))])
    >>> check_attribute_values(tagged, out, "Average score of questions with the python tag")
    >>> coded = Spec(filters=[Filter("tag_id", "=", ("17",))])
    >>> check_attribute_values(coded, out, "Average score of questions with the python tag")
    >>> out.findings
    []
    """
    values = attribute_values(question)
    if not values or sql.flags.get("parameter_columns") or _binds_parameter(sql):
        return
    held = [_squash(s) for s in sql.literals]
    held += [_squash(v) for f in sql.filters for v in f.values]
    names = [
        _squash(n)
        for n in (*sql.tables, *sql.columns, *(p.alias for p in sql.projections if p.alias))
    ]
    for item in values:
        value = _squash(item.value)
        if len(value) < 2 or any(value in h or word_variant(value, h) for h in held):
            continue
        if any(value in n for n in names) or _attribute_read(item.attribute, sql):
            continue
        out.add(
            "attribute_value_unfiltered",
            "warning",
            f"the question asks for the {item.attribute} {item.value!r}; no filter, literal or"
            " name of the SQL holds it",
            item.text,
            None,
            "filter_alignment",
        )


def check_attribute_columns(sql: Spec, out: FindingCollector, question: str) -> None:
    """A value the question gives one attribute, compared by the SQL with a column named for
    another attribute the question names: "songs whose genre is modern or language is
    English" answered by ``genre = 'english'``, "employees whose title is IT Staff from each
    city" by ``city = 'IT Staff'`` (``filter_wrong_column``). A column named
    for the value's own attribute, or for no attribute of the question, is left alone (a
    ``name`` column may hold any of them).

    >>> from stef.spec import Filter
    >>> out = FindingCollector()
    >>> pairs = [("genre_is", "english"), ("genre_is", "modern")]
    >>> sql = Spec(filters=[Filter(c, "=", (v,)) for c, v in pairs])
    >>> check_attribute_columns(sql, out, "Songs whose genre is modern or language is English")
    >>> [f.message for f in out.findings]
    ["the question gives 'english' the language; the SQL compares it with genre_is, the genre"]
    """
    values = attribute_values(question)
    if not values:
        return
    attributes = {v.attribute for v in values} | attribute_nouns(question)
    # the items asked for are attributes too: "the name … of students whose decision is yes"
    attributes |= {i.head for i in requested_items(question) if len(i.head) >= 4}
    if len(attributes) < 2:
        return
    for item in values:
        value = _squash(item.value)
        for f in sql.filters:
            column = f.column or ""
            if f.op not in ("=", "in", "like") or not column:
                continue
            if not any(_squash(v) == value for v in f.values):
                continue
            if _names_attribute(column, item.attribute, _stem(item.attribute)):
                continue
            other = next(
                (
                    a
                    for a in sorted(attributes - {item.attribute})
                    if _names_attribute(column, a, _stem(a))
                ),
                None,
            )
            if other is None or (other in _GENERIC_NAMES and _tabled(item.attribute, sql)):
                continue  # "the Rock genre" as genres.name: the name of the genre table's row
            out.add(
                "filter_wrong_column",
                "warning",
                f"the question gives {item.value!r} the {item.attribute}; the SQL compares it"
                f" with {column}, the {other}",
                item.text,
                f"{column} = {f.values[0]}",
                "filter_alignment",
            )


#: Names any table's rows may have: a value on one is the row's own where its attribute
#: names a table of the SQL.
_GENERIC_NAMES = frozenset({"name", "title"})


def _tabled(attribute: str, sql: Spec) -> bool:
    """Does a table of the SQL name ``attribute`` (the ``genres`` table for "genre")?"""
    return any(_names_attribute(t, attribute, _stem(attribute)) for t in sql.tables)


def _stem(attribute: str) -> str:
    """The part of ``attribute`` every form of it holds: category for categories."""
    return attribute[:-1] if attribute.endswith("y") else attribute
