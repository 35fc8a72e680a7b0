"""R_app: the per-application rules file, validated with clear errors.

>>> rules = Rules.model_validate({"column_synonyms": {"region": ["territory"]}})
>>> rules.synonym_map()["territory"]
'region'
>>> load_rules_dict({"colum_synonyms": {}})
Traceback (most recent call last):
...
stef.errors.RulesError: rules is invalid:
  $.colum_synonyms: unknown key 'colum_synonyms' (did you mean 'column_synonyms'?)
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Any

import sqlglot
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from sqlglot import exp
from sqlglot.tokens import TokenType

from stef.errors import RulesError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FilterPoints(_Strict):
    """Points per filter-alignment class (DESIGN.md defaults)."""

    fully_applied: float = Field(5, ge=0, le=10)
    fully_applied_with_extras: float = Field(4, ge=0, le=10)
    partially_applied: float = Field(2, ge=0, le=10)
    not_applied: float = Field(0, ge=0, le=10)


class VerdictPoints(_Strict):
    """Points per judge verdict (DESIGN.md defaults)."""

    correct: float = Field(5, ge=0, le=10)
    likely_correct: float = Field(4, ge=0, le=10)
    potentially_incorrect: float = Field(2, ge=0, le=10)
    incorrect: float = Field(0, ge=0, le=10)


class ConfidenceTiers(_Strict):
    """Γ: the multiplier for confidence γ. ``high`` applies at γ ≥ ``high_min`` …"""

    high_min: float = Field(0.85, ge=0, le=1)
    medium_min: float = Field(0.65, ge=0, le=1)
    high: float = Field(1.0, ge=0, le=1)
    medium: float = Field(0.8, ge=0, le=1)
    low: float = Field(0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> ConfidenceTiers:
        if self.medium_min > self.high_min:
            raise ValueError("medium_min must not exceed high_min")
        return self


class Scoring(_Strict):
    """Overrides of the score's points and multipliers."""

    filter_points: FilterPoints = FilterPoints()
    verdict_points: VerdictPoints = VerdictPoints()
    leniency_boost: float = Field(1, ge=0, le=10)
    base_cap: float = Field(10, gt=0)
    confidence: ConfidenceTiers = ConfidenceTiers()


#: The prior the offline judge uses when the rules set no ``expected_accuracy``: the share
#: of correct SQL of a production agent (published agents are right on 80-90% of real
#: traffic), not a benchmark's half-and-half. Documented in README and docs/accuracy.md.
DEFAULT_EXPECTED_ACCURACY = 0.85


class Rules(_Strict):
    """One application's rules. Every key is optional; unknown keys are errors."""

    app: str | None = Field(None, description="Application name these rules belong to.")
    description: str | None = None
    column_synonyms: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Canonical column name -> synonyms used in questions or SQL.",
    )
    value_synonyms: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Canonical value -> other spellings ('US': ['usa', 'united states']).",
    )
    context_terms: list[str] = Field(
        default_factory=list,
        description="Names of the application's own world that questions use without asking "
        "for a filter: the site, company, product or database ('Stack Overflow', 'Acme'). "
        "A capitalised phrase of the question that is one of them is never a filter value.",
    )
    benign_filters: list[str] = Field(
        default_factory=list,
        description="SQL predicates added automatically and never penalised; '?' is any value.",
    )
    benign_group_by: list[str] = Field(
        default_factory=list, description="Columns whose presence in GROUP BY is never penalised."
    )
    safety_limit_min: int = Field(
        1000, ge=1, description="A LIMIT at or above this is a safety limit, not a top-k."
    )
    term_functions: dict[str, str] = Field(
        default_factory=dict,
        description="NL term -> SQL aggregate/function ('headcount': 'count').",
    )
    judge_instructions: list[str] = Field(
        default_factory=list, description="Free-text rules injected into the judge prompt."
    )
    expected_accuracy: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="Share of correct SQL expected from this agent (e.g. from an audit); the "
        "offline judge's probabilities move from its training base rate to this prior. "
        "Unset: DEFAULT_EXPECTED_ACCURACY (0.85), a production agent's share.",
    )
    scoring: Scoring = Scoring()

    @field_validator("judge_instructions", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("benign_filters")
    @classmethod
    def _parse_predicates(cls, v: list[str]) -> list[str]:
        for i, pred in enumerate(v):
            try:
                parse_benign_predicate(pred)
            except ValueError as e:
                shown = pred if len(pred) <= 80 else pred[:60] + f"… [{len(pred):,} characters]"
                raise ValueError(f"item {i} ({shown!r}): {e}") from None
        return v

    @field_validator("column_synonyms", "value_synonyms")
    @classmethod
    def _no_conflicts(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for canon, syns in v.items():
            if not canon.strip():
                raise ValueError("canonical name must not be empty")
            for s in syns:
                key = term_key(s)
                if not key:
                    raise ValueError(f"synonym {s!r} of {canon!r} is empty")
                if key in seen and seen[key] != canon:
                    raise ValueError(f"synonym {s!r} is given for both {seen[key]!r} and {canon!r}")
                seen[key] = canon
        return v

    def synonym_map(self) -> dict[str, str]:
        """Lower-case synonym (and canonical name) -> lower-case canonical column name."""
        out: dict[str, str] = {}
        for canon, syns in self.column_synonyms.items():
            c = term_key(canon)
            out[c] = c
            for s in syns:
                out[term_key(s)] = c
        return out

    def value_map(self) -> dict[str, str]:
        """Lower-case value spelling -> lower-case canonical value."""
        out: dict[str, str] = {}
        for canon, syns in self.value_synonyms.items():
            c = term_key(canon)
            for s in syns:
                out[term_key(s)] = c
        return out

    def context_keys(self) -> frozenset[str]:
        """The context terms as the question reader compares values: case-folded, single
        spaces.

        >>> sorted(Rules(context_terms=["Stack  Overflow", "ACME"]).context_keys())
        ['acme', 'stack overflow']
        """
        return frozenset(term_key(t) for t in self.context_terms if t.strip())

    def sha256(self) -> str:
        """Hash of the rules' canonical JSON (defaults included): provenance of a score."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


def term_key(name: str) -> str:
    """A synonym or context term as the question reader looks it up: case-folded, single
    spaces.

    >>> term_key("  Sales\tArea ")
    'sales area'
    """
    return " ".join(name.split()).casefold()


#: Deepest parenthesis nesting of a benign-filter predicate.
MAX_PREDICATE_NESTING = 100


def parse_benign_predicate(pred: str) -> exp.Expression:
    """Parse one benign-filter predicate; ``?`` stands for any value.

    >>> parse_benign_predicate("tenant_id = ?").sql()
    'tenant_id = ?'
    >>> parse_benign_predicate("tenant_id = ? ORDER BY b")
    Traceback (most recent call last):
    ...
    ValueError: not a single predicate: it goes on with ORDER
    """
    if not pred or not pred.strip():
        raise ValueError("empty predicate")
    try:
        depth = deepest = 0
        for tok in sqlglot.tokenize(pred):
            if tok.token_type == TokenType.L_PAREN:
                depth += 1
                deepest = max(deepest, depth)
            elif tok.token_type == TokenType.R_PAREN:
                depth -= 1
        if deepest > MAX_PREDICATE_NESTING:
            raise ValueError(f"nested {deepest} parentheses deep (at most {MAX_PREDICATE_NESTING})")
        tree = sqlglot.parse_one(f"SELECT 1 WHERE {pred}")
    except sqlglot.errors.SqlglotError as e:
        raise ValueError(f"not a SQL predicate: {str(e).splitlines()[0]}") from None
    except RecursionError:
        raise ValueError("not a SQL predicate: nested too deeply") from None
    where = tree.args.get("where") if isinstance(tree, exp.Select) else None
    if where is None:
        raise ValueError("not a SQL predicate")
    extra = [k for k, v in tree.args.items() if v and k not in ("expressions", "where")]
    if extra:
        raise ValueError(f"not a single predicate: it goes on with {extra[0].upper()}")
    cond = where.this
    if not cond.find(exp.Column):
        raise ValueError("predicate names no column")
    return cond


def _json_path(loc: tuple[int | str, ...]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _fields_at(loc: tuple[int | str, ...]) -> list[str]:
    model: Any = Rules
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None or not isinstance(field.annotation, type):
            return []
        model = field.annotation
        if not issubclass(model, BaseModel):
            return []
    return list(model.model_fields)


def _problems(err: ValidationError) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        loc = tuple(e["loc"])
        if e["type"] == "extra_forbidden":
            key = str(loc[-1])
            msg = f"unknown key {key!r}"
            close = difflib.get_close_matches(key, _fields_at(loc[:-1]), n=1, cutoff=0.6)
            if close:
                msg += f" (did you mean {close[0]!r}?)"
        else:
            msg = e["msg"].removeprefix("Value error, ")
        problems.append((_json_path(loc), msg))
    return problems


def load_rules_dict(data: Any, source: str = "rules") -> Rules:
    """Validate a parsed rules object; raise :class:`RulesError` listing every problem."""
    if not isinstance(data, dict):
        raise RulesError([("$", f"expected a JSON object, got {type(data).__name__}")], source)
    try:
        return Rules.model_validate(data)
    except ValidationError as e:
        raise RulesError(_problems(e), source) from None


def load_rules(path: str | Path | None) -> Rules:
    """Read and validate a rules file; ``None`` gives the defaults."""
    if path is None:
        return Rules()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise RulesError([("$", f"cannot read file: {e.strerror or e}")], str(p)) from None
    except UnicodeDecodeError as e:
        raise RulesError(
            [("$", f"not UTF-8 text (byte {e.start}: {e.object[e.start : e.start + 1]!r})")],
            str(p),
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RulesError(
            [("$", f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}")], str(p)
        ) from None
    except RecursionError:
        raise RulesError([("$", "malformed JSON: nested too deeply")], str(p)) from None
    return load_rules_dict(data, str(p))


def rules_json_schema() -> dict[str, Any]:
    """The published JSON Schema of the rules file."""
    schema = Rules.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "STEF application rules (R_app)"
    return schema
