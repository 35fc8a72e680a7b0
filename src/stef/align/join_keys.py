"""Join keys: which two columns can refer to each other (an id never to a name, two ids
only when they share a word or one names the other's table), and the findings of joins
and ``IN (SELECT …)`` pairs that cannot (``key_pair_mismatch``, ``in_subquery_mismatch``,
``join_key_other_table``, ``join_on_own_ids``).

>>> from stef.spec import Spec
>>> from stef.findings import FindingCollector
>>> out = FindingCollector()
>>> check_keys(Spec(flags={"in_subquery_keys": [("name", "musical_id")]}), out)
>>> check_keys(Spec(tables=["person", "personfriend"], flags={"in_subquery_keys": [
...     ("friend", "name")]}), out)
>>> [f.kind for f in out.findings]
['in_subquery_mismatch', 'key_pair_mismatch']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from stef.align.formats import NAME_WORDS, descriptive
from stef.findings import FindingCollector
from stef.nl.request import singular
from stef.spec import Spec


@lru_cache(maxsize=16384)
def _words(name: str) -> tuple[str, ...]:
    """The words of a schema name, singular (memoised: names come back with every record).

    >>> _words("Store_Names")
    ('store', 'name')
    """
    return tuple(singular(w) for w in NAME_WORDS.split(name.casefold()) if w)


def _id_like(name: str) -> bool:
    low = name.casefold()
    return low == "id" or low.endswith("id")


def _word_set(name: str) -> set[str]:
    """The words of three letters or more of a lower-case name, ``id`` aside."""
    return {w for w in _words(name) if len(w) >= 3 and w != "id"}


def _share_a_word(a: str, b: str) -> bool:
    """Do two lower-case names share a word of three letters or more (``id`` aside), or
    does one hold the other?"""
    return bool(_word_set(a) & _word_set(b)) or a in b or b in a


def keys_related(a: str, b: str) -> bool:
    """Could two key columns refer to each other? An id never refers to a name or a
    title; two other columns must share a word (``link_to_major`` = ``major_id``).

    >>> keys_related("name", "musical_id"), keys_related("stuid", "stu_id")
    (False, True)
    >>> keys_related("cust_name", "cust_id"), keys_related("link_to_major", "major_id")
    (False, True)
    >>> keys_related("city", "city_name"), keys_related("owner", "breed_code")
    (True, False)
    """
    ca, cb = a.casefold(), b.casefold()
    if ca == cb:
        return True
    ida, idb = _id_like(ca), _id_like(cb)
    if (ida and descriptive(cb)) or (idb and descriptive(ca)):
        return False
    if ida and idb:
        return True
    return _share_a_word(ca, cb) or ida != idb


def _names_a_table(a: str, b: str, sql: Spec) -> bool:
    """Does a word (four letters or more) of column ``a`` or ``b`` name a table of the query?

    >>> _names_a_table("friend", "name", Spec(tables=["PersonFriend"]))
    True
    """
    tables = [t.casefold() for t in sql.tables]
    return any(w in t for n in (a, b) for w in _words(n) if len(w) >= 4 for t in tables)


def _own_key(column: str, table: str) -> bool:
    """Is ``column`` the key a table names itself by (``id``, ``event_id`` in ``event``)?

    >>> _own_key("event_id", "event"), _own_key("matchid", "matches"), _own_key("userid", "posts")
    (True, True, False)
    """
    c = column.casefold()
    t = NAME_WORDS.sub("", table.casefold())
    return c == "id" or NAME_WORDS.sub("", c) in (t + "id", singular(t) + "id")


def join_keys_related(left: str, right: str, tables: Sequence[str]) -> bool:
    """Could ``tables[0].left = tables[1].right`` link a row to the row it refers to?
    Besides :func:`keys_related`, two differently named ids link only when they share a
    word or one is its table's own key and the other names that table
    (``cardkingdomid`` = ``mcmid`` does not).

    >>> join_keys_related("cardkingdomid", "mcmid", ["cards", "sets"])
    False
    >>> join_keys_related("id", "team_api_id", ["team", "match"])
    True

    An own key links only to a key that names its table: neither ``client.client_id =
    loan.account_id`` nor two tables' own keys (``client.client_id = loan.loan_id``) do.

    >>> join_keys_related("client_id", "account_id", ["client", "loan"])
    False
    >>> join_keys_related("client_id", "loan_id", ["client", "loan"])
    False
    >>> join_keys_related("id", "userid", ["posts", "badges"])
    False

    A parent key refers to its own table's rows: ``posts.parentid = posttags.postid``.

    >>> join_keys_related("parentid", "postid", ["posts", "posttags"])
    True
    """
    a, b = left.casefold(), right.casefold()
    if (_parent_key(a) and _names_table(b, tables[0])) or (
        _parent_key(b) and _names_table(a, tables[1])
    ):
        return True  # posts.parentid = posttags.postid: both are ids of posts
    if _holds_code(a, tables[0], b) or _holds_code(b, tables[1], a):
        return True  # products.manufacturer = manufacturers.code
    if not keys_related(left, right):
        return False
    if a == b or not (_id_like(a) and _id_like(b)):
        return True
    own_a = _own_key(a, tables[0]) or _initials_key(a, tables[0])
    own_b = _own_key(b, tables[1]) or _initials_key(b, tables[1])
    if not (own_a or own_b):
        return _share_a_word(a, b)
    return (
        (own_a and (_names_table(b, tables[0]) or _initials_key(b, tables[0])))
        or (own_b and (_names_table(a, tables[1]) or _initials_key(a, tables[1])))
        or bool(_word_set(a) & _word_set(b))
    )


_ID_SUFFIX = re.compile(r"_?id$")
#: Endings of a table's own key that has no "id" (``code``, ``ssn``, ``fac_room_key``).
_KEY_ENDINGS = ("key", "code", "ssn", "number")


def _holds_code(key: str, table: str, other: str) -> bool:
    """Is lower-case ``key`` its table's own key without "id" (``code``, ``ssn``,
    ``airportcode`` in ``airports``), and ``other`` a column that may hold it (no key, no
    name: ``manufacturer``, ``office_location``)?

    >>> _holds_code("code", "manufacturers", "manufacturer")
    True
    >>> _holds_code("breed_code", "dogs", "owner"), _holds_code("code", "genre", "g_name")
    (False, False)
    """
    if not key.endswith(_KEY_ENDINGS) or _id_like(other) or other.endswith(_KEY_ENDINGS):
        return False
    if descriptive(other):
        return False
    end = next(e for e in _KEY_ENDINGS if key.endswith(e))
    stem = NAME_WORDS.sub("", key[: -len(end)])
    name = NAME_WORDS.sub("", table.casefold())
    return not stem or (len(stem) >= 3 and (stem in name or singular(name) in stem))


def _initials_key(column: str, table: str) -> bool:
    """Is a lower-case id its table's own key by the table's initial (``aid`` in
    ``albums``, ``s_id`` for ``student``)?

    >>> _initials_key("aid", "albums"), _initials_key("i_id", "instructor")
    (True, True)
    >>> _initials_key("uuid", "users")
    False
    """
    stem = NAME_WORDS.sub("", _ID_SUFFIX.sub("", column))
    initials = "".join(w[0] for w in NAME_WORDS.split(table.casefold()) if w)
    return 0 < len(stem) <= 2 and stem == initials[: len(stem)]


def _parent_key(column: str) -> bool:
    """Is a lower-case column a reference to a parent row of its own table (``parentid``,
    ``parent_id``)?"""
    return column.startswith("parent") and _id_like(column)


def _dated(column: str) -> bool:
    """Does a lower-case column hold a date or a time (``creationdate``, ``created_at``)?"""
    return "date" in column or "time" in column or column.endswith("_at")


def _names_table(key: str, table: str) -> bool:
    """Does a key column name ``table`` (``owneruserid`` → ``users``, ``hero_id`` →
    ``superhero``), so that it may refer to that table's own key?

    >>> _names_table("owneruserid", "users"), _names_table("account_id", "client")
    (True, False)
    """
    stem = NAME_WORDS.sub("", _ID_SUFFIX.sub("", key.casefold()))
    name = NAME_WORDS.sub("", table.casefold())
    if _share_a_word(key.casefold(), table.casefold()):
        return True
    return len(stem) >= 3 and (stem in name or name in stem or singular(name) in stem)


#: Tables of people, and the roles a row names one of them by (``owner_id``, ``assignee_id``).
_PEOPLE = frozenset(
    {"user", "employee", "person", "people", "member", "staff", "contact", "agent", "account"}
)
_ROLES = frozenset(
    {
        *("owner", "manager", "assignee", "author", "creator", "reporter", "reviewer"),
        *("approver", "sender", "recipient", "requester", "supervisor", "host", "organizer"),
        *("mentor", "referrer", "lead", "rep", "editor", "closer"),
    }
)
_ROLE_KEY = re.compile(r"(?P<role>[a-z]+?)_?(?:user_?)?id")


def _person_role(left: str, right: str, tables: Sequence[str]) -> bool:
    """Does one side name a person by a role (``owner_id``, ``assigneeuserid``) and the other
    hold the own key of a table of people (``users.id``)? A reference, whatever the words.

    >>> _person_role("id", "owner_id", ["users", "opportunities"])
    True
    >>> _person_role("id", "product_id", ["users", "orders"])
    False
    """
    for key, table, other in ((left, tables[0], right), (right, tables[1], left)):
        m = _ROLE_KEY.fullmatch(other.casefold())
        if m and m.group("role") in _ROLES and _own_key(key, table):
            return singular(NAME_WORDS.sub("", table.casefold())) in _PEOPLE
    return False


def key_of_another_table(
    left: str, right: str, tables: Sequence[str], query_tables: Sequence[str]
) -> str | None:
    """The third table of the query that one side of ``tables[0].left = tables[1].right``
    refers to by its name (``connected.atom_id`` joined to ``bond.molecule_id`` while the
    query reads ``atom``), when the other side is no key of that table: a row joined to a
    row of a table its key does not point at. Only base tables (a derived table's columns
    carry other tables' names) and never two keys that name one table.

    >>> key_of_another_table("molecule_id", "atom_id", ["bond", "connected"],
    ...                      ["bond", "connected", "atom"])
    'atom'
    >>> key_of_another_table("id", "userid", ["users", "badges"], ["users", "badges", "posts"])
    """
    if not all(t in query_tables for t in tables) or left.casefold() == right.casefold():
        return None
    for key, own, other, peer in ((left, *tables, right), (right, *tables[::-1], left)):
        if not _id_like(key.casefold()) or _own_key(key, own) or _names_table(key, other):
            continue
        for t in query_tables:
            if t not in tables and _names_table(key, t) and not _names_table(peer, t):
                return t
    return None


def check_keys(sql: Spec, out: FindingCollector) -> None:
    """``x IN (SELECT y …)`` and join conditions whose two columns cannot refer to each
    other (an id compared with a name, two unrelated ids); and two tables joined on
    their own ``id`` columns, which links rows only when one table extends the other."""
    for outer, inner in sql.flags.get("in_subquery_keys") or ():
        if not keys_related(outer, inner):
            # a column named for a table of the query may refer to its rows by any of
            # their columns (``friend IN (SELECT name FROM person)`` beside personfriend)
            by_table = _names_a_table(outer, inner, sql)
            out.add(
                "key_pair_mismatch" if by_table else "in_subquery_mismatch",
                "warning",
                f"{outer} IN (SELECT {inner} …) compares columns that cannot refer to each other",
                None,
                f"{outer} IN (SELECT {inner} …)",
                "structure",
            )
    for j in sql.joins:
        tables = j.get("tables") or []
        left, right = j.get("left") or "", j.get("right") or ""
        if len(tables) != 2 or tables[0] == tables[1] or not left or not right:
            continue
        text = f"{tables[0]}.{left} = {tables[1]}.{right}"
        named = key_of_another_table(left, right, tables, sql.tables)
        if named:
            out.add(
                "join_key_other_table",
                "error",
                f"{text} joins a key that refers to {named!r}, another table of the query",
                None,
                text,
                "structure",
            )
        elif _own_key(left, tables[0]) and _own_key(right, tables[1]):
            ids = left.casefold() == right.casefold() == "id"
            out.add(  # client.client_id = loan.loan_id: each table's own key, as id = id
                "join_on_own_ids",
                "warning",
                f"{text} joins two tables on their own {'ids' if ids else 'keys'}",
                None,
                text,
                "structure",
            )
        elif (
            not join_keys_related(left, right, tables)
            and all(t in sql.tables for t in tables)  # a derived table's columns are others'
            and not (_dated(left.casefold()) and _dated(right.casefold()))  # dates, no keys
            and not _person_role(left, right, tables)
        ):
            out.add(
                "key_pair_mismatch",
                "warning",
                f"{text} joins columns that cannot refer to each other",
                None,
                text,
                "structure",
            )
