"""Places written as codes: a question names a country or a state ("Germany", "Texas"), the
SQL compares the ISO 3166 code a warehouse stores (``country = 'DE'``, ``'DEU'``,
``state = 'TX'``). The codes come from :mod:`pycountry` (the ISO 3166-1 countries and the
ISO 3166-2 subdivisions it packages; nothing is fetched), read the first time a code meets
a place name, so a run that never compares one pays nothing.

>>> place_code("germany", "de"), place_code("germany", "deu"), place_code("texas", "tx")
(True, True, True)
>>> place_code("germany", "fr"), place_code("texas", "ca"), place_code("de", "germany")
(False, False, False)
>>> other_place("germany", "fr"), other_place("germany", "de"), other_place("texas", "ca")
(True, False, True)
"""

from __future__ import annotations

from functools import lru_cache

#: Everyday names of countries that ISO 3166 names otherwise.
_ALIASES = {
    "uk": "united kingdom",
    "britain": "united kingdom",
    "great britain": "united kingdom",
    "usa": "united states",
    "america": "united states",
    "uae": "united arab emirates",
    "south korea": "korea, republic of",
}


def place_code(name: str, code: str) -> bool:
    """Is ``code`` (case-folded, two or three letters) an ISO 3166 code of the country or
    the subdivision that ``name`` (case-folded) names?

    >>> place_code("uk", "gb"), place_code("usa", "us")
    (True, True)
    """
    name = _ALIASES.get(name, name)
    if not (2 <= len(code) <= 3 and code.isalpha() and len(name) >= 4):
        return False
    if not name.replace(" ", "").replace("-", "").isalpha():
        return False
    return code in _codes().get(name, ())


def other_place(name: str, code: str) -> bool:
    """Is ``code`` the code of another place of the kind ``name`` names: a country's code for
    another country ("Germany" as ``'FR'``), a state's for another state ("Texas" as
    ``'CA'``)?"""
    name = _ALIASES.get(name, name)
    if not (2 <= len(code) <= 3 and code.isalpha() and len(name) >= 4):
        return False
    codes = _codes().get(name)
    if not codes or code in codes:
        return False
    kinds = _kinds()
    return any(code in kinds[kind] for kind in ("country", "subdivision") if name in kinds[kind])


@lru_cache(maxsize=1)
def _kinds() -> dict[str, frozenset[str]]:
    """The names and the codes of each kind of place: ``country`` and ``subdivision``."""
    import pycountry

    countries = {c.alpha_2.casefold() for c in pycountry.countries}
    countries |= {c.alpha_3.casefold() for c in pycountry.countries}
    countries |= {
        str(getattr(c, a)).casefold()
        for c in pycountry.countries
        for a in ("name", "official_name", "common_name")
        if getattr(c, a, None)
    }
    subs = {s.code.split("-", 1)[1].casefold() for s in pycountry.subdivisions}
    subs |= {s.name.casefold() for s in pycountry.subdivisions}
    return {"country": frozenset(countries), "subdivision": frozenset(subs)}


@lru_cache(maxsize=1)
def _codes() -> dict[str, frozenset[str]]:
    """Case-folded place name → the case-folded codes it goes by: a country's alpha-2 and
    alpha-3 codes under its name, official name and common name; a subdivision's code
    within its country (``tx`` of ``US-TX``) under its name."""
    import pycountry  # ~0.1 s with its data: only when a code meets a place name

    out: dict[str, set[str]] = {}
    for c in pycountry.countries:
        codes = {c.alpha_2.casefold(), c.alpha_3.casefold()}
        for attr in ("name", "official_name", "common_name"):
            label = getattr(c, attr, None)
            if label:
                out.setdefault(label.casefold(), set()).update(codes)
    for s in pycountry.subdivisions:
        out.setdefault(s.name.casefold(), set()).add(s.code.split("-", 1)[1].casefold())
    return {k: frozenset(v) for k, v in out.items()}
