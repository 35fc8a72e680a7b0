"""Time extract_sql_spec against bare sqlglot.parse_one on the NL2SQL-Bugs SQL.

Run: .venv/bin/python benchmarks/sqlspec_speed.py [path.jsonl] [dialect]
Prints CPU seconds for each (best of 3, interleaved per query) and the ratio
extract/parse (extraction includes its own parse).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time

import sqlglot

from stef.errors import SqlError
from stef.sql.spec import extract_sql_spec


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/nl2sql_bugs.jsonl"
    dialect = sys.argv[2] if len(sys.argv) > 2 else "sqlite"
    with open(path, encoding="utf-8") as fh:
        sqls = [json.loads(line)["sql"] for line in fh]

    # Interleave the two per query and count CPU time, so load on a shared machine hits both alike.
    best = {"parse_one": float("inf"), "extract_sql_spec": float("inf")}
    for _ in range(3):
        spent = {"parse_one": 0.0, "extract_sql_spec": 0.0}
        for sql in sqls:
            t0 = time.process_time()
            with contextlib.suppress(sqlglot.errors.SqlglotError):
                sqlglot.parse_one(sql, read=dialect)
            t1 = time.process_time()
            with contextlib.suppress(SqlError):
                extract_sql_spec(sql, dialect)
            t2 = time.process_time()
            spent["parse_one"] += t1 - t0
            spent["extract_sql_spec"] += t2 - t1
        for key, value in spent.items():
            best[key] = min(best[key], value)
    for name, seconds in best.items():
        print(f"{name:>17}: {seconds:.3f} s for {len(sqls)} queries")
    print(f"ratio extract/parse: {best['extract_sql_spec'] / best['parse_one']:.2f}")


if __name__ == "__main__":
    main()
