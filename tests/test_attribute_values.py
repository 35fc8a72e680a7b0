"""The values a question gives an attribute by name (stef.nl.attributes), read from its
phrasing alone: what ``attribute_value_unfiltered`` checks against the SQL."""

from __future__ import annotations

import pytest

from stef.nl.attributes import attribute_values

#: (question, the (value, attribute) pairs read from it)
CASES = [
    ("Average score of questions with the python tag", [("python", "tag")]),
    ("Most voted questions tagged with Ruby", [("ruby", "tag")]),
    ("Questions tagged python and django", [("python", "tag")]),
    ("Posts with the [python] tag", [("python", "tag")]),
    ("Users with Yearling badge", [("yearling", "badge")]),
    ("How many users are on the pro plan?", [("pro", "plan")]),
    ("List products in category Electronics.", [("electronics", "category")]),
    ("display all the information about the department Marketing.", [("marketing", "department")]),
    ("The student in the History department with the most credits", [("history", "department")]),
    # the noun is asked for, or qualifies another noun: no value
    ("What is the border color of the card?", []),
    ("What is the name of the football league name?", []),
    ("Posts per month in the functional languages' tags", []),
    ("Show flights in the alphabetical order of the departure city.", []),
    # qualifiers, participles, superlatives and numbers name no value
    ("Which department has the most students?", []),
    ("Find the busiest city of each country", []),
    ("List all races and the hosting country", []),
    ("Revenue for each category", []),
    ("Questions in the top 10 tags", []),
    # an answer format is no attribute value
    ("Show monthly revenue in the format YYYY-MM", []),
    # a lower-case word after the noun is a value only after a tag
    ("Count tickets with priority high opened this month", []),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_attribute_values(question: str, expected: list[tuple[str, str]]) -> None:
    assert [(a.value, a.attribute) for a in attribute_values(question)] == expected
