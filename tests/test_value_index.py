"""The index that compares a question's number only with the SQL values it can match
(issue 13, item 5) finds exactly what comparing it with every value finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stef.align.hints import _digit_or_dot, _dot_digit, _ValueIndex
from stef.align.matching import occurs, values_match

NUMBER = st.from_regex(r"-?[0-9]{1,6}(\.[0-9]{1,2})?", fullmatch=True) | st.sampled_from(
    ["1e3", "2013", "201304", "13", "0", "-5", "1_000", "50", "1996"]
)
VALUE = st.text(alphabet="0123456789-%_ .'\"`abs:", max_size=12) | st.sampled_from(
    ["2013-04", "2013-04-01", "agent 13", "1990s", "%2013%", "201%", "-5", "13.5", "", "north"]
)


@settings(max_examples=400, deadline=None)
@given(NUMBER, st.sets(VALUE, max_size=12), st.lists(VALUE, max_size=4))
def test_the_index_finds_what_a_scan_of_every_value_finds(
    v: str, values: set[str], names: list[str]
) -> None:
    index = _ValueIndex(values, names)
    candidates = index.could_match(v)
    assert {s for s in values if values_match(v, s)} <= set(candidates) <= values
    assert any(values_match(v, s) for s in candidates) == any(values_match(v, s) for s in values)
    texts = [*values, *names]
    assert sorted(index.containing(v)) == sorted(s for s in texts if v in s)
    hits = [occurs(v, s, _digit_or_dot, str.isdecimal, _dot_digit) for s in texts]
    assert any(hits) == any(
        occurs(v, s, _digit_or_dot, str.isdecimal, _dot_digit) for s in index.containing(v)
    )


def test_a_value_holding_a_nul_is_still_found() -> None:
    index = _ValueIndex({"a\x0013", "7"}, ["x13\x00"])
    assert sorted(index.containing("13")) == ["a\x0013", "x13\x00"]
    assert index.could_match("13") == ["a\x0013"]


def test_a_number_finds_a_value_it_equals_written_otherwise() -> None:
    # 4.0 equals '04' (values_match compares them as numbers), though neither one's digits
    # hold the other's: the index keys each number under its plain form too
    index = _ValueIndex({"04", "7"}, [])
    assert index.could_match("4.0") == ["04"]
    assert values_match("4.0", "04")
