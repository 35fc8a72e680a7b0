"""The rules file: validation with JSON paths, did-you-mean, schema, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from stef.cli import main
from stef.errors import RulesError
from stef.rules import Rules, load_rules, load_rules_dict, rules_json_schema

ROOT = Path(__file__).parent.parent
INVALID = Path(__file__).parent / "fixtures" / "rules" / "invalid.json"


def test_example_rules_are_valid() -> None:
    r = load_rules(ROOT / "examples" / "rules.json")
    assert r.synonym_map()["territory"] == "region"
    assert r.safety_limit_min == 1000
    assert r.benign_filters == ["is_deleted = 0", "tenant_id = ?"]
    assert r.context_keys() == frozenset({"acme"})


def test_context_terms_must_be_strings() -> None:
    with pytest.raises(RulesError) as info:
        load_rules_dict({"context_terms": ["Acme", 7]})
    assert info.value.problems == [("$.context_terms[1]", "Input should be a valid string")]


def test_every_problem_is_reported_with_its_path() -> None:
    with pytest.raises(RulesError) as info:
        load_rules(INVALID)
    problems = dict(info.value.problems)
    assert (
        problems["$.colum_synonyms"]
        == "unknown key 'colum_synonyms' (did you mean 'column_synonyms'?)"
    )
    assert problems["$.scoring.filter_points.fully_aplied"] == (
        "unknown key 'fully_aplied' (did you mean 'fully_applied'?)"
    )
    assert problems["$.safety_limit_min"] == "Input should be greater than or equal to 1"
    assert problems["$.term_functions.headcount"] == "Input should be a valid string"
    assert problems["$.scoring.confidence"] == "medium_min must not exceed high_min"
    assert problems["$.benign_filters"].startswith("item 1 ('tenant_id = '): not a SQL predicate")
    assert len(problems) == 6


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text('{"safety_limit_min": 10,\n  "app": }')
    with pytest.raises(RulesError) as info:
        load_rules(p)
    assert info.value.problems == [("$", "malformed JSON at line 2 column 10: Expecting value")]


def test_top_level_must_be_object() -> None:
    with pytest.raises(RulesError) as info:
        load_rules_dict(["x"])
    assert info.value.problems == [("$", "expected a JSON object, got list")]


def test_conflicting_synonym_is_rejected() -> None:
    with pytest.raises(RulesError) as info:
        load_rules_dict({"column_synonyms": {"region": ["area"], "zone": ["Area"]}})
    assert info.value.problems == [
        ("$.column_synonyms", "synonym 'Area' is given for both 'region' and 'zone'")
    ]


def test_judge_instructions_accept_one_string() -> None:
    assert load_rules_dict({"judge_instructions": "be strict"}).judge_instructions == ["be strict"]


def test_hash_changes_with_content_only() -> None:
    a = Rules.model_validate({"safety_limit_min": 500}).sha256()
    b = Rules.model_validate({"safety_limit_min": 500}).sha256()
    c = Rules.model_validate({"safety_limit_min": 501}).sha256()
    assert a == b != c


def test_schema_is_published_and_strict() -> None:
    s = rules_json_schema()
    assert s["additionalProperties"] is False
    assert {
        "column_synonyms",
        "context_terms",
        "benign_filters",
        "benign_group_by",
        "safety_limit_min",
        "term_functions",
        "judge_instructions",
        "scoring",
    } <= set(s["properties"])


def test_cli_rules_check_lists_problems_and_exits_2() -> None:
    res = CliRunner().invoke(main, ["rules", "check", str(INVALID)])
    assert res.exit_code == 2
    assert (
        "$.colum_synonyms: unknown key 'colum_synonyms' (did you mean 'column_synonyms'?)"
        in res.output
    )
    ok = CliRunner().invoke(main, ["rules", "check", str(ROOT / "examples" / "rules.json")])
    assert ok.exit_code == 0 and "valid" in ok.output


def test_cli_rules_schema_is_json() -> None:
    res = CliRunner().invoke(main, ["rules", "schema"])
    assert res.exit_code == 0
    assert json.loads(res.output)["title"] == "STEF application rules (R_app)"


def test_eval_refuses_invalid_rules_before_reading_records(tmp_path: Path) -> None:
    records = tmp_path / "in.jsonl"
    records.write_text('{"question": "q", "sql": "SELECT 1"}\n')
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["eval", str(records), "--rules", str(INVALID), "-o", str(out)])
    assert res.exit_code == 2
    assert "did you mean 'column_synonyms'" in res.output
    assert not out.exists()
