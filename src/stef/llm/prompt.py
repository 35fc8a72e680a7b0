"""Versioned prompt templates (Jinja2 files in ``stef/prompts``) rendered to chat messages.

A template has two blocks: ``system`` (fixed instructions, rendered first) and ``user``
(the record). Its version is the file name; its sha256 enters cache keys, so editing a
template without bumping its version still invalidates cached answers.

>>> p = load_prompt("judge_v1")
>>> p.version
'judge_v1'
>>> msgs = p.render(question="Q", sql="SELECT 1", nl_spec="{}", sql_spec="{}",
...                 filter_status="fully_applied", findings=[], judge_instructions=[])
>>> [m["role"] for m in msgs], msgs[1]["content"].splitlines()[0]
(['system', 'user'], 'Question: Q')
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("stef", "prompts"),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=False,
)


@dataclass(frozen=True)
class Prompt:
    """A loaded template: ``version`` (its name) and ``sha256`` (of its source)."""

    version: str
    sha256: str
    template: jinja2.Template

    def render(self, **context: Any) -> list[dict[str, str]]:
        """Render the ``system`` and ``user`` blocks as two chat messages."""
        ctx = self.template.new_context(context)
        out = []
        for role in ("system", "user"):
            text = "".join(self.template.blocks[role](ctx)).strip()
            out.append({"role": role, "content": text})
        return out


@cache
def load_prompt(version: str) -> Prompt:
    """Load ``stef/prompts/<version>.j2``."""
    source = resources.files("stef").joinpath("prompts", f"{version}.j2").read_text("utf-8")
    template = _ENV.get_template(f"{version}.j2")
    for block in ("system", "user"):
        if block not in template.blocks:
            raise ValueError(f"prompt {version} has no {block!r} block")
    return Prompt(version, hashlib.sha256(source.encode()).hexdigest(), template)


def compact(value: Any) -> Any:
    """Drop empty values and quoting text from a spec dict, for a short prompt.

    >>> compact({"filters": [{"column": "a", "values": ["x"], "text": "a = 'x'"}], "limit": None})
    {'filters': [{'column': 'a', 'values': ['x']}]}
    """
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ("text", "cues"):
                continue
            v = compact(v)
            if v in (None, [], {}, "", False, 0):
                continue
            out[k] = v
        return out
    if isinstance(value, (list, tuple)):
        return [compact(v) for v in value]
    return value


def compact_json(value: Any) -> str:
    """Compact JSON of :func:`compact` ``(value)``.

    >>> compact_json({"group_by": ["region"], "distinct": False})
    '{"group_by":["region"]}'
    """
    return json.dumps(compact(value), separators=(",", ":"), ensure_ascii=False)
