"""Stored evaluation documents: zstd-compressed, one decoder, and stores written before
migration ``0005_compressed_docs`` migrated and read as before (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import orjson
import psycopg
import pytest
import zstandard

from stef.monitor.stats import tally_evaluations
from stef.monitor.store import open_store
from stef.monitor.store.codec import ZSTD_MAGIC, DocumentError, decode_doc, encode_doc, json_bytes

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import figures_by_key, make_evaluations


@pytest.fixture
def evaluations():
    return make_evaluations(
        200, seed=7, error_rate=0.05, metadata={"team": "ops", "big": 2**70}
    ) + make_evaluations(100, seed=8, agent_version="1.4", app="hr", step_s=90.0)




PENDING = [
    "0005_compressed_docs",
    "0006_row_finding_kinds",
    "0007_fine_rollups",
    "0008_row_cells",
    "0009_pg_row_cells",
]


def _as_before_0005(target: str) -> None:
    """Turn a store into what STEF wrote before 0005: documents as JSON text, no
    ``finding_kinds`` column, no 10-minute rollups, no cell ids, 0005 to 0009 not
    applied."""
    if target.startswith("postgresql://"):
        with psycopg.connect(target, autocommit=True) as conn, conn.transaction():
            docs = conn.execute("SELECT seq, doc FROM evaluation_docs").fetchall()
            conn.execute("DROP TABLE evaluation_docs")
            conn.execute("CREATE TABLE evaluation_docs (seq BIGINT PRIMARY KEY, doc TEXT NOT NULL)")
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO evaluation_docs VALUES (%s, %s)",
                    [(seq, orjson.dumps(decode_doc(doc)).decode()) for seq, doc in docs],
                )
            conn.execute("ALTER TABLE evaluations DROP COLUMN finding_kinds")
            conn.execute("ALTER TABLE evaluations DROP COLUMN cell")
            conn.execute("DROP TABLE rollups_10m")
            conn.execute("DROP TABLE cells")
            conn.execute("DELETE FROM schema_migrations WHERE name >= '0005'")
        return
    conn = sqlite3.connect(target, isolation_level=None)
    conn.execute("BEGIN")
    docs = conn.execute("SELECT seq, doc FROM evaluation_docs").fetchall()
    conn.execute("DROP TABLE evaluation_docs")
    conn.execute("CREATE TABLE evaluation_docs (seq INTEGER PRIMARY KEY, doc TEXT NOT NULL)")
    conn.executemany(
        "INSERT INTO evaluation_docs VALUES (?, ?)",
        [(seq, orjson.dumps(decode_doc(doc)).decode()) for seq, doc in docs],
    )
    conn.execute("ALTER TABLE evaluations DROP COLUMN finding_kinds")
    conn.execute("ALTER TABLE evaluations DROP COLUMN cell")
    conn.execute("DROP TABLE rollups_10m")
    conn.execute("DROP TABLE cells")
    conn.execute("DELETE FROM schema_migrations WHERE name >= '0005'")
    conn.execute("COMMIT")
    conn.close()


def _raw_docs(target: str) -> list[bytes]:
    if target.startswith("postgresql://"):
        with psycopg.connect(target) as conn:
            return [
                bytes(r[0]) for r in conn.execute("SELECT doc FROM evaluation_docs ORDER BY seq")
            ]
    with sqlite3.connect(target) as conn:
        return [r[0] for r in conn.execute("SELECT doc FROM evaluation_docs ORDER BY seq")]


def test_an_old_store_migrates_to_compressed_documents_and_reads_the_same(
    store_target, evaluations
):
    store = open_store(store_target)
    assert store.write(evaluations) == 300
    store.close()
    _as_before_0005(store_target)
    old = open_store(store_target, migrate=False)
    assert old.pending_migrations() == PENDING
    # Before migrating, the text documents read as ever.
    assert [e["id"] for e in old.query(limit=3)] == [e["id"] for e in evaluations[:3]]
    old.close()

    store = open_store(store_target)
    assert store.migrated == PENDING
    assert list(store.query()) == evaluations
    raw = _raw_docs(store_target)
    assert len(raw) == 300 and all(d[:4] == ZSTD_MAGIC for d in raw)
    # Figures from rollups (the 10-minute ones backfilled from the rows), and from the
    # rows (the backfilled finding kinds included).
    for by, window in (
        (["agent", "agent_version"], 86400.0),
        (["agent", "app"], 1800.0),
        (["metadata.team"], 1800.0),
    ):
        assert figures_by_key(store.tallies(by=by, window=window)) == figures_by_key(
            tally_evaluations(evaluations, by=by, window=window)
        )
    # Writing, replacing and reading go on as on a new store.
    changed = {**evaluations[0], "score": 0.0, "band": "poor"}
    assert store.write([changed], replace=True) == 0
    assert next(store.query(order_by="score", limit=1))["id"] == evaluations[0]["id"]
    store.close()


def test_stored_documents_take_under_half_their_json(store_target, evaluations):
    store = open_store(store_target)
    store.write(evaluations)
    store.close()
    stored = sum(len(d) for d in _raw_docs(store_target))
    json_size = sum(len(json_bytes(e)) for e in evaluations)
    assert stored < json_size / 2, (stored, json_size)


def test_decode_doc_reads_frames_and_text_and_names_an_unknown_dictionary():
    ev = {"id": "e1", "status": "ok", "score": 80.0, "question": "How many orders?"}
    assert decode_doc(encode_doc(ev)) == ev
    assert decode_doc(memoryview(encode_doc(ev))) == ev
    assert decode_doc(orjson.dumps(ev)) == ev
    assert decode_doc(orjson.dumps(ev).decode()) == ev
    # A frame without a dictionary (dict id 0) reads too.
    assert decode_doc(zstandard.ZstdCompressor().compress(orjson.dumps(ev))) == ev
    samples = [orjson.dumps({**ev, "id": f"e{i}", "n": i}) for i in range(2000)]
    other = zstandard.train_dictionary(1024, samples)
    foreign = zstandard.ZstdCompressor(dict_data=other).compress(orjson.dumps(ev))
    with pytest.raises(DocumentError) as info:
        decode_doc(foreign)
    assert info.value.message == (
        f"stored evaluation is compressed with zstd dictionary {other.dict_id()}, which this "
        "STEF does not have; upgrade STEF to read this store"
    )
