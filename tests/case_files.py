"""Readers of the fixture files of cases written as blocks of ``# key: value`` lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_sql_cases(path: Path, json_keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """Blocks separated by a blank line: ``# key: value`` lines (JSON for ``json_keys``)
    and the SQL (the other lines, a trailing ';' dropped). Blocks without a title are
    comments."""
    cases = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        meta: dict[str, Any] = {}
        sql: list[str] = []
        for line in block.strip().splitlines():
            if line.startswith("# ") and ": " in line:
                key, _, value = line[2:].partition(": ")
                meta[key] = json.loads(value) if key in json_keys else value
            elif not line.startswith("#"):
                sql.append(line)
        if "title" in meta:
            meta["sql"] = "\n".join(sql).rstrip(";")
            cases.append(meta)
    return cases
