"""Train the zstd dictionary the store compresses evaluation documents with.

How ``src/stef/data/store_docs_v1.zdict`` was made: evaluate the first ``--per`` records
of each corpus in ``shared/data`` (five public text-to-SQL corpora, real questions and
SQL, nothing synthetic) with the default evaluator, and train a ``--size`` byte zstd
dictionary on the evaluation JSON. The synthetic evaluations of ``benchmarks/store.py``
are *not* in the training set, so the benchmark's sizes are not flattered by it.

A shipped dictionary must never change: stored documents name it by its id. A new one
gets a new file and a new entry in ``stef.monitor.store.codec.DICTIONARIES``.

Run: ``.venv/bin/python benchmarks/store_dict.py --out /tmp/store_docs_v2.zdict``.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import orjson
import zstandard

from stef import Evaluator

CORPORA = ("beaver_dw", "kaggledbqa_fewshot", "nl2sql_bugs", "sede_val", "splash")
DIALECTS = {"sede_val": "tsql"}  # the others are SQLite SQL


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", default=str(Path(__file__).resolve().parent.parent / "../shared/data")
    )
    ap.add_argument("--per", type=int, default=120, help="records per corpus")
    ap.add_argument("--size", type=int, default=16384, help="dictionary bytes")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    samples: list[bytes] = []
    for corpus in CORPORA:
        evaluator = Evaluator()
        with open(Path(args.data) / f"{corpus}.jsonl", "rb") as fh:
            for line in itertools.islice(fh, args.per):
                record = orjson.loads(line)
                record.setdefault("dialect", DIALECTS.get(corpus, "sqlite"))
                samples.append(orjson.dumps(evaluator.evaluate_record(record)))
    # zstd's trainer wants many samples; the same ones repeated train the same dictionary.
    d = zstandard.train_dictionary(args.size, samples * 4, level=3)
    Path(args.out).write_bytes(d.as_bytes())
    print(f"{len(samples)} evaluations, dictionary {len(d.as_bytes())} bytes, id {d.dict_id()}")


if __name__ == "__main__":
    main()
