"""What the SQLite and PostgreSQL stores share: checks, rows, rollup deltas, SQL for reads.

Both stores keep the same tables (``evaluations`` of light columns, ``evaluation_docs``,
``findings``, ``rollups``); they differ in placeholders, a few expressions and how they
write. :class:`Dialect` holds the differences; :class:`SQLReader` answers every read of
the :class:`~stef.monitor.store.Store` interface from SQL built here, so a selection
means the same rows on both.

>>> where(Selection(agent="bot", since=0.0), SQLITE)
(' WHERE e.agent = ? AND e.t >= ?', ['bot', 0.0])
>>> where(Selection(metadata={"team": "ops"}), POSTGRES)
(" WHERE (e.metadata ->> 'team') = %s", ['ops'])
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from stef.errors import StefError
from stef.monitor.stats import (
    GROUP_KEYS,
    GroupKey,
    Tally,
    check_group_keys,
    paused_gc,
    to_epoch,
)
from stef.monitor.store.cell_counts import cell_tallies
from stef.monitor.store.cells import Cell, gathered_cells
from stef.monitor.store.codec import decode_doc
from stef.monitor.store.grouped import fold_cells, tally_of_arrays
from stef.monitor.store.keyset import after_clause
from stef.monitor.store.pg_cells import CELL_ARRAY
from stef.monitor.store.rollups import (
    ROLLUP_TABLES,
    RollupDeltas,
    RollupKey,
    RollupTable,
    TallySum,
    negated,
    stored_tally,
)
from stef.monitor.store.selection import Selection
from stef.monitor.store.slices import SPANS, WINDOW_ROWS, ranges

#: Light columns of ``evaluations`` after ``seq``, in the order :func:`build_row` gives them.
COLUMNS = (
    "id",
    "agent",
    "agent_version",
    "app",
    "timestamp",
    "evaluated_at",
    "t",
    "status",
    "score",
    "band",
    "filter_status",
    "verdict",
    "confidence",
    "question_key",
    "metadata",
    "finding_kinds",
)
ORDERS = {
    None: "e.seq",
    "-stored": "e.seq DESC",
    "time": "e.t, e.seq",
    "-time": "e.t DESC, e.seq DESC",
    "score": "e.score IS NULL, e.score, e.seq",
    "-score": "e.score IS NULL, e.score DESC, e.seq",
}
#: Over more windows than this, figures over the rows gather JSON arrays per window even
#: where the database hashes (see :meth:`SQLReader._few_windows`).
MANY_WINDOWS = 200


class StoreError(StefError):
    """The store cannot be opened, or an evaluation cannot be stored."""

    status = "store_error"


def check_evaluation(evaluation: Any) -> str | None:
    """Why a dict is not a storable evaluation, or ``None`` when it is.

    >>> check_evaluation({"id": "x", "status": "ok", "score": 101})
    'score must be a number within [0, 100] when status is ok'
    """
    if not isinstance(evaluation, dict):
        return "an evaluation must be a JSON object"
    if evaluation.get("status") is None and "question" in evaluation and "sql" in evaluation:
        return (
            "this is a record (question and sql), not an evaluation: evaluate it with "
            "`stef eval FILE --store DB`"
        )
    ev_id = evaluation.get("id")
    if not isinstance(ev_id, str) or not ev_id:
        return "field 'id' must be a non-empty string"
    status = evaluation.get("status")
    if not isinstance(status, str) or not status:
        return "field 'status' must be a non-empty string"
    score = evaluation.get("score")
    bad_score = (
        isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 100
    )
    if status == "ok" and bad_score:
        return "score must be a number within [0, 100] when status is ok"
    meta = evaluation.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        return "field 'metadata' must be an object or null"
    for key in ("breakdown", "judgment", "provenance", "nl_spec", "sql_spec", "enrichment"):
        value = evaluation.get(key)
        if value is not None and not isinstance(value, dict):
            return f"field {key!r} must be an object or null, got {type(value).__name__}"
    findings = evaluation.get("findings")
    if findings is not None and (
        not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings)
    ):
        return "field 'findings' must be a list of objects or null"
    return None


def record_time(evaluation: Mapping[str, Any]) -> float:
    """The record's time in epoch seconds: ``timestamp``, else ``evaluated_at``, else 0.

    Raises ``ValueError`` naming the field when the one used is not an ISO 8601 time.

    >>> record_time({"timestamp": None, "evaluated_at": "1970-01-01T00:01:00Z"})
    60.0
    """
    for key in ("timestamp", "evaluated_at"):
        value = evaluation.get(key)
        if value is not None and value != "":
            try:
                t = to_epoch(value)
            except ValueError:
                raise ValueError(f"field {key!r} is not an ISO 8601 time: {value!r}") from None
            assert t is not None
            return t
    return 0.0


def question_key(question: Any) -> str | None:
    """Question text normalised for pairing: lower case, single spaces, no end punctuation.

    >>> question_key("  How many  Orders? ")
    'how many orders'
    """
    if not isinstance(question, str):
        return None
    text = " ".join(question.lower().split()).rstrip("?.!;: ")
    return text or None


def text_of(value: Any) -> str | None:
    """``None`` or ``str(value)``."""
    return None if value is None else str(value)


def json_text(obj: Any) -> str:
    """JSON text of ``obj``: orjson, or the standard library where orjson refuses
    (integers beyond 64 bits, NaN) — a user's metadata must never stop a batch."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, ensure_ascii=False, default=str)


def checked(
    batch: Iterable[Mapping[str, Any]], replace: bool
) -> dict[str, tuple[Mapping[str, Any], float]]:
    """Evaluations by id with their record time; an id repeated counts once (the last one
    wins when ``replace``). Raises :class:`StoreError` naming the first invalid one."""
    unique: dict[str, tuple[Mapping[str, Any], float]] = {}
    for ev in batch:
        problem = check_evaluation(ev)
        try:
            t = record_time(ev) if problem is None else 0.0
        except ValueError as exc:
            problem = str(exc)
        if problem:
            raise StoreError(message=f"evaluation {text_of(ev.get('id'))!r}: {problem}")
        if replace or ev["id"] not in unique:
            unique[ev["id"]] = (ev, t)
    return unique


def kinds_text(kinds: Mapping[str, str]) -> str | None:
    """The ``finding_kinds`` column: an evaluation's :func:`finding_kinds` as JSON, by kind.

    >>> kinds_text({"limit_mismatch": "warning", "filter_missing": "error"})
    '{"filter_missing":"error","limit_mismatch":"warning"}'
    """
    return orjson.dumps(dict(sorted(kinds.items()))).decode() if kinds else None


def build_row(
    ev: Mapping[str, Any],
    t: float,
    meta_text: Callable[[Any], str] = json_text,
    kinds: Mapping[str, str] | None = None,
) -> tuple[Any, ...]:
    """The light columns of one evaluation, in :data:`COLUMNS` order (metadata as JSON text,
    written by ``meta_text``; ``kinds`` its :func:`~stef.monitor.stats.finding_kinds`).

    ``timestamp`` and ``evaluated_at`` are left NULL: nothing reads them from the row
    (``t`` is the record time; the texts are in the document), and leaving them out saves
    about 40 bytes per evaluation. The columns stay, for stores written before.
    """
    get = ev.get
    ok = get("status") == "ok"
    bd = (get("breakdown") or {}) if ok else {}
    meta = get("metadata")
    conf = bd.get("confidence")
    agent, version, app, band, filt, verdict = (
        get("agent"),
        get("agent_version"),
        get("app"),
        get("band") if ok else None,
        bd.get("filter_status"),
        bd.get("verdict"),
    )
    return (
        ev["id"],
        agent if agent is None or type(agent) is str else str(agent),
        version if version is None or type(version) is str else str(version),
        app if app is None or type(app) is str else str(app),
        None,
        None,
        t,
        ev["status"],
        float(ev["score"]) if ok else None,
        band if band is None or type(band) is str else str(band),
        filt if filt is None or type(filt) is str else str(filt),
        verdict if verdict is None or type(verdict) is str else str(verdict),
        float(conf) if isinstance(conf, (int, float)) else None,
        question_key(get("question")),
        meta_text(meta) if isinstance(meta, dict) and meta else None,
        kinds_text(kinds) if kinds else None,
    )


@dataclass(frozen=True)
class Dialect:
    """The SQL that differs between the two stores."""

    #: the parameter placeholder
    mark: str
    #: SQL text of metadata key ``key`` as text (booleans as 'true'/'false')
    meta_expr: Callable[[str], str]
    #: SQL of the start of the window of ``width`` seconds holding ``e.t``
    bucket: Callable[[float], str]
    #: the aggregate summing a nullable column to 0.0 when all are NULL
    total: str
    #: the aggregate making a JSON array (text) of an expression over the group's rows
    #: (those where the condition holds, when one is given)
    array: Callable[[str, str | None], str]
    #: whether grouping by many columns is cheap (a hash aggregate): figures over the rows
    #: then group by every counted column, else by the group alone with JSON arrays
    hash_aggregate: bool = False
    #: rows per time range figures over the rows are grouped in (``None``: all at once)
    slice_rows: int | None = None
    #: rows per range where windows hold fewer than ``slice_rows`` (``None``:
    #: ``slice_rows``; :func:`~stef.monitor.store.slices.ranges`)
    window_rows: int | None = None
    #: the aggregate gathering a group's cell ids (``evaluations.cell``,
    #: :mod:`~stef.monitor.store.cells`) into a list or JSON array text (``None``: rows
    #: carry none); figures over the rows grouped by the group alone then gather it
    cells: str | None = None
    #: ``bucket`` computed in Python, as the database computes it (``None``: not given)
    bucket_of: Callable[[float, float], float] | None = None
    #: SQL to group rows by metadata key ``key`` with (``None``: ``meta_expr`` itself): an
    #: expression whose equal values give equal ``meta_expr`` values, which is then read
    #: once per group rather than computed for every row
    meta_group: Callable[[str], str] | None = None


def _sqlite_path(key: str) -> str:
    return '$."' + key.replace('"', '""').replace("'", "''") + '"'


def _sqlite_meta(key: str) -> str:
    path = _sqlite_path(key)
    return (
        f"CASE json_type(e.metadata, '{path}') WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
        f"ELSE CAST(json_extract(e.metadata, '{path}') AS TEXT) END"
    )


def _sqlite_meta_group(key: str) -> str:
    """The JSON text of the value at ``key`` (``->``: one JSON parse per row, where
    :func:`_sqlite_meta` takes two and a CASE): equal texts are equal values, so equal
    :func:`_sqlite_meta` values, which SQLite then computes once per group."""
    return f"(e.metadata -> '{_sqlite_path(key)}')"


def _pg_meta(key: str) -> str:
    # A literal in the SQL text: quotes doubled, and % doubled for psycopg's placeholders.
    return "(e.metadata ->> '" + key.replace("'", "''").replace("%", "%%") + "')"


SQLITE = Dialect(
    mark="?",
    meta_expr=_sqlite_meta,
    bucket=lambda w: f"(CAST(e.t / {w!r} AS INTEGER) * {w!r})",
    total="total",
    array=lambda x, cond: f"json_group_array({x})" + (f" FILTER (WHERE {cond})" if cond else ""),
    slice_rows=30_000,
    window_rows=WINDOW_ROWS,
    cells="json_group_array(e.cell)",
    # CAST(t / w AS INTEGER) * w: the quotient truncated toward zero, times w
    bucket_of=lambda t, w: int(t / w) * w,
    meta_group=_sqlite_meta_group,
)
POSTGRES = Dialect(
    mark="%s",
    meta_expr=_pg_meta,
    bucket=lambda w: f"(floor(e.t / {w!r}) * {w!r})",
    total="sum",
    array=lambda x, cond: (
        f"(json_agg({x})" + (f" FILTER (WHERE {cond})" if cond else "") + ")::text"
    ),
    hash_aggregate=True,
    cells=CELL_ARRAY,
)


def _grouping(keys: Sequence[str]) -> str:
    """`` GROUP BY`` ``keys`` (empty for none)."""
    return f" GROUP BY {', '.join(keys)}" if keys else ""


def where(
    sel: Selection, dialect: Dialect, *extra: str, sliced: str | None = None
) -> tuple[str, list[Any]]:
    """`` WHERE …`` over ``evaluations e`` for ``sel`` (empty when it selects all).

    ``sliced`` names the column a scan is cut in ranges of (:meth:`SQLReader._slices`):
    a finding selection then looks a row's finding up by its ``seq`` (``"t"``), or reads
    the findings of the range alone (``"seq"``: the last two parameters, after those
    returned, are the range again), instead of gathering every row with the finding
    once per range.
    """
    mark = dialect.mark
    clauses: list[str] = list(extra)
    params: list[Any] = []
    for key in ("agent", "agent_version", "app", "status"):
        value = getattr(sel, key)
        if value is not None:
            clauses.append(f"e.{key} = {mark}")
            params.append(value)
    if sel.since is not None:
        clauses.append(f"e.t >= {mark}")
        params.append(sel.since)
    if sel.until is not None:
        clauses.append(f"e.t < {mark}")
        params.append(sel.until)
    for key, value in sorted(sel.metadata.items()):
        clauses.append(f"{dialect.meta_expr(key)} = {mark}")
        params.append(value)
    if sel.finding is not None:
        found = f"SELECT f2.seq FROM findings f2 WHERE f2.kind = {mark}"
        if sliced == "t":
            clauses.append(f"EXISTS ({found} AND f2.seq = e.seq)")
        elif sliced == "seq":
            clauses.append(f"e.seq IN ({found} AND f2.seq >= {mark} AND f2.seq < {mark})")
        else:
            clauses.append(f"e.seq IN ({found})")
        params.append(sel.finding)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def as_selection(selection: Selection | Mapping[str, Any] | None) -> Selection:
    """A :class:`Selection` from a selection, a mapping of its keys, or ``None`` (all)."""
    if selection is None:
        return Selection()
    if isinstance(selection, Selection):
        return selection
    return Selection.from_mapping(selection, now=time.time())


def rollups_cover(sel: Selection, by: Sequence[str], window: float | None) -> bool:
    """Whether rollups answer this selection, grouping and window exactly."""
    return covering_rollups(sel, by, window) is not None


def covering_rollups(sel: Selection, by: Sequence[str], window: float | None) -> RollupTable | None:
    """The coarsest rollup table that answers this selection, grouping and window exactly
    (hourly for whole hours, 10-minute for whole 10 minutes), or ``None``.

    >>> covering_rollups(Selection(), ["agent"], 1800.0).name
    'rollups_10m'
    >>> covering_rollups(Selection(status="ok"), [], None) is None
    True
    """
    if not (
        all(k in GROUP_KEYS for k in by)
        and sel.status is None
        and sel.finding is None
        and not sel.metadata
    ):
        return None
    for table in ROLLUP_TABLES:
        if all(x is None or float(x) % table.width == 0 for x in (window, sel.since, sel.until)):
            return table
    return None


class SQLReader:
    """The reads of the store interface, over ``evaluations``, ``findings`` and ``rollups``.

    A subclass sets :attr:`dialect` and gives :meth:`_fetch` (all rows of a statement)
    and :meth:`_stream` (rows as they come, for large results).
    """

    dialect: Dialect = SQLITE

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _stream(self, sql: str, params: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        yield from self._fetch(sql, params)

    def _fetch_grouped(
        self, sql: str, params: Sequence[Any], ordered: bool = False, ranged: bool = False
    ) -> list[tuple[Any, ...]]:
        """All rows of a many-column GROUP BY (a store may tell its planner to hash it;
        ``ordered``: each group's rows aggregated in the table's order, also where
        ``ranged``, a range of the rows read through an index)."""
        return self._fetch(sql, params)

    def count(self, selection: Selection | Mapping[str, Any] | None = None) -> int:
        """How many stored evaluations match ``selection``."""
        clause, params = where(as_selection(selection), self.dialect)
        return int(self._fetch(f"SELECT count(*) FROM evaluations e{clause}", params)[0][0])

    def query(
        self,
        *,
        order_by: str | None = None,
        limit: int | None = None,
        **selection: Any,
    ) -> Iterator[dict[str, Any]]:
        """Stored evaluations (whole dicts) matching ``selection`` keywords.

        Keywords: ``agent``, ``agent_version``, ``app``, ``status``, ``finding``, ``since``,
        ``until`` (epoch seconds or ISO/duration text), ``metadata={...}`` or
        ``**{"metadata.KEY": value}``, or ``selection=Selection(...)``; ``order_by`` is
        ``time``, ``-time``, ``score``, ``-score`` or ``-stored`` (newest stored first;
        default: storage order).
        """
        sel = selection.pop("selection", None) or Selection.from_kwargs(
            now=time.time(), **selection
        )
        if order_by not in ORDERS:
            raise StoreError(message=f"order_by must be one of {sorted(o for o in ORDERS if o)}")
        clause, params = where(sel, self.dialect)
        sql = (
            f"SELECT d.doc FROM evaluations e JOIN evaluation_docs d ON d.seq = e.seq{clause} "
            f"ORDER BY {ORDERS[order_by]}"
        )
        if limit is not None:
            sql += f" LIMIT {self.dialect.mark}"
            params.append(int(limit))
        for (doc,) in self._stream(sql, params):
            yield decode_doc(doc)

    def page(
        self,
        selection: Selection | Mapping[str, Any] | None = None,
        *,
        order_by: str | None = None,
        limit: int = 50,
        after: Sequence[Any] | None = None,
    ) -> tuple[list[dict[str, Any]], list[Any] | None]:
        """One page of whole evaluations and the position to pass as ``after`` for the
        next one (``None`` after the last page): keyset pagination, as fast on page 1,000
        as on page 1. Orders as :meth:`query`.

        A position from another order, or not one a page gave, raises :class:`StoreError`.
        """
        if order_by not in ORDERS:
            raise StoreError(message=f"order_by must be one of {sorted(o for o in ORDERS if o)}")
        extra: list[str] = []
        extra_params: list[Any] = []
        if after is not None:
            try:
                cond, extra_params = after_clause(order_by, after, self.dialect.mark)
            except ValueError as exc:
                raise StoreError(message=str(exc)) from None
            extra.append(cond)
        clause, params = where(as_selection(selection), self.dialect, *extra)
        sql = (
            "SELECT e.seq, e.t, e.score, d.doc FROM evaluations e "
            f"JOIN evaluation_docs d ON d.seq = e.seq{clause} "
            f"ORDER BY {ORDERS[order_by]} LIMIT {self.dialect.mark}"
        )
        rows = self._fetch(sql, [*extra_params, *params, int(limit) + 1])
        more = len(rows) > limit
        rows = rows[:limit]
        last = [int(rows[-1][0]), float(rows[-1][1]), rows[-1][2]] if more else None
        return [decode_doc(r[3]) for r in rows], last

    def get(self, evaluation_id: str) -> dict[str, Any] | None:
        """The stored evaluation whose id is ``evaluation_id`` (the whole dict, decoded as
        :meth:`query` decodes it), or ``None`` when no evaluation has that id."""
        key = evaluation_id
        if self.dialect is POSTGRES:  # PostgreSQL keeps a NUL in an id as U+FFFD
            key = key.replace("\x00", "\ufffd")
        sql = (
            "SELECT d.doc FROM evaluations e JOIN evaluation_docs d ON d.seq = e.seq "
            f"WHERE e.id = {self.dialect.mark}"
        )
        rows = self._fetch(sql, [key])
        return decode_doc(rows[0][0]) if rows else None

    def score_pairs(
        self, selection: Selection | Mapping[str, Any] | None
    ) -> list[tuple[str | None, float]]:
        """(normalised question, score) of every evaluated record in ``selection``."""
        clause, params = where(as_selection(selection), self.dialect, "e.status = 'ok'")
        sql = f"SELECT e.question_key, e.score FROM evaluations e{clause}"
        return [(q, float(s)) for q, s in self._fetch(sql, params)]

    def latest_time(self, selection: Selection | Mapping[str, Any] | None = None) -> float | None:
        """The latest record time in ``selection`` (epoch seconds), or ``None`` when empty."""
        clause, params = where(as_selection(selection), self.dialect)
        value = self._fetch(f"SELECT max(e.t) FROM evaluations e{clause}", params)[0][0]
        return None if value is None else float(value)

    def tallies(
        self,
        selection: Selection | Mapping[str, Any] | None = None,
        by: Sequence[str] = (),
        window: float | None = None,
    ) -> dict[GroupKey, Tally]:
        """Tallies per (group values, window start), as
        :func:`stef.monitor.stats.tally_evaluations`.

        Summed from hourly rollups when the selection and grouping allow it, else
        grouped in SQL over the evaluation columns.
        """
        sel = as_selection(selection)
        check_group_keys(by)
        table = covering_rollups(sel, by, window)
        with paused_gc():  # many small dicts, no cycles (see paused_gc)
            if table is not None:
                return self._tallies_from_rollups(sel, by, window, table)
            return self._tallies_from_rows(sel, by, window)

    def _tallies_from_rollups(
        self,
        sel: Selection,
        by: Sequence[str],
        window: float | None,
        table: RollupTable = ROLLUP_TABLES[0],
    ) -> dict[GroupKey, Tally]:
        mark = self.dialect.mark
        start = table.start
        clauses, params = [], []
        for key in ("agent", "agent_version", "app"):
            if getattr(sel, key) is not None:
                clauses.append(f"{key} = {mark}")
                params.append(getattr(sel, key))
        if sel.since is not None:
            clauses.append(f"{start} >= {mark}")
            params.append(sel.since)
        if sel.until is not None:
            clauses.append(f"{start} < {mark}")
            params.append(sel.until)
        clause = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        # Group values by position (the columns of ``by``, then the start): one stored
        # tally per group, the common case of windows as wide as the table's buckets, is
        # turned into a Tally as it is; several are summed as plain dicts (TallySum).
        n = len(by)
        cols = "".join(f"{k}, " for k in by)
        sql = f"SELECT {cols}{start}, tally FROM {table.name}{clause}"
        groups: dict[GroupKey, Any] = {}
        floor = math.floor
        for row in self._stream(sql, params):
            at = None if window is None else floor(float(row[n]) / window) * window
            gkey = (tuple(row[:n]), at)
            seen = groups.get(gkey)
            if seen is None:
                groups[gkey] = row[n + 1]
            else:
                if type(seen) is not TallySum:
                    seen = groups[gkey] = TallySum.of(orjson.loads(seen))
                seen.add(orjson.loads(row[n + 1]))
        tallies = {
            k: s.tally() if type(s) is TallySum else stored_tally(orjson.loads(s))
            for k, s in groups.items()
        }
        return {k: t for k, t in tallies.items() if t.records > 0}

    def _tallies_from_rows(
        self, sel: Selection, by: Sequence[str], window: float | None
    ) -> dict[GroupKey, Tally]:
        """One scan of ``evaluations`` grouped in SQL (finding kinds from the rows'
        ``finding_kinds``): by the group and every counted column where the database
        hashes (PostgreSQL), else by the group alone with the counted columns gathered as
        JSON arrays (SQLite: one array of the rows' cell ids), which keeps the sort narrow."""
        clause, params = where(sel, self.dialect)
        groups = [
            f"e.{k}" if k in GROUP_KEYS else self.dialect.meta_expr(k[len("metadata.") :])
            for k in by
        ]
        if window is not None:
            groups.append(self.dialect.bucket(float(window)))
        n, nby = len(groups), len(by)
        lead = "".join(f"{g}, " for g in groups)
        # What the sliced scans group by: the columns, a bucket, and for a metadata key
        # the dialect's cheaper equivalent (``meta_group``) where it has one.
        meta_group = self.dialect.meta_group
        keys = [
            meta_group(k[len("metadata.") :]) if meta_group and k not in GROUP_KEYS else g
            for k, g in zip(by, groups, strict=False)
        ] + groups[nby:]
        ok = "e.status = 'ok'"
        conf = (
            f"{self.dialect.total}(e.confidence) FILTER (WHERE {ok}), "
            f"count(e.confidence) FILTER (WHERE {ok})"
        )
        if self.dialect.hash_aggregate and self._few_windows(sel, window):
            cells = "e.status, e.score, e.band, e.filter_status, e.verdict, e.finding_kinds"
            all_ = ", ".join(str(i) for i in range(1, n + 7))
            sql = (
                f"SELECT {lead}{cells}, count(*), {conf} FROM evaluations e{clause} GROUP BY {all_}"
            )
            return fold_cells(self._fetch_grouped(sql, params), n, nby, window is not None)
        if self.dialect.cells:
            from_cells = self._tallies_from_cells(sel, window, lead, keys, nby, conf)
            if from_cells is not None:
                return from_cells
        arr = self.dialect.array
        parts = [
            "count(*)",
            arr("e.status", None),
            *(arr(f"e.{c}", ok) for c in ("score", "band", "filter_status", "verdict")),
            arr("e.finding_kinds", "e.finding_kinds IS NOT NULL"),
            conf,
        ]
        kinds: dict[str, list[tuple[str, bool]]] = {}
        out: dict[GroupKey, Tally] = {}
        for row in self._sliced_groups(sel, window, lead, keys, ", ".join(parts)):
            key = (tuple(row[:nby]), float(row[n - 1]) if window is not None else None)
            tally = tally_of_arrays(row[n:], kinds)
            if key in out:
                out[key].merge(tally)
            else:
                out[key] = tally
        return out

    def _tallies_from_cells(
        self,
        sel: Selection,
        window: float | None,
        lead: str,
        keys: Sequence[str],
        nby: int,
        conf: str,
    ) -> dict[GroupKey, Tally] | None:
        """Figures over the rows from each group's cell ids (``None`` when a row has none:
        written by a STEF before migration ``0008_row_cells``, PostgreSQL's ``0009``)."""
        parts = f"count(*), {self.dialect.cells}, {conf}"
        rows = self._sliced_groups(sel, window, lead, keys, parts)
        sums = gathered_cells(rows, len(keys), nby, window is not None)
        if sums is None:
            return None
        return cell_tallies(sums, self._cells())

    def _cells(self) -> Mapping[int, Cell]:
        """Every stored cell by id (a store whose dialect keeps cell ids gives this)."""
        raise NotImplementedError

    def _sliced_groups(
        self, sel: Selection, window: float | None, lead: str, keys: Sequence[str], parts: str
    ) -> Iterator[tuple[Any, ...]]:
        """Rows ``lead`` + ``parts`` grouped by ``keys`` (as many as ``lead`` has columns,
        the last of them the window start when ``window``), slice by slice
        (:meth:`_slices`); a slice with no rows gives none. A time slice that lies in one
        window groups by the others alone, its window start passed in (what the dialect's
        ``bucket`` would compute for every one of its rows). One group may come in several
        rows (of several slices, or of ``keys`` that differ where ``lead`` does not)."""
        mark = self.dialect.mark
        column = self._slice_column(sel, window)
        n = len(keys)
        sliced, params = where(
            sel, self.dialect, f"e.{column} >= {mark}", f"e.{column} < {mark}", sliced=column
        )
        again = sel.finding is not None and column == "seq"  # the range, for the findings
        sql = f"SELECT {lead}{parts} FROM evaluations e{sliced}{_grouping(keys)}"
        one_window, bucket_of, width = None, self.dialect.bucket_of, 0.0
        if window is not None and bucket_of is not None and column == "t":
            width = float(window)
            others = lead[: lead.rindex(self.dialect.bucket(width))]
            one_window = (
                f"SELECT {others}{mark}, {parts} FROM evaluations e{sliced}{_grouping(keys[:-1])}"
            )
        slices = self._slices(sel, window)
        ranged = len(slices) > 1
        for lo, hi in slices:
            at = None
            if one_window is not None and bucket_of is not None and -math.inf < lo < hi < math.inf:
                at = bucket_of(lo, width)
                if at != bucket_of(math.nextafter(hi, -math.inf), width):
                    at = None  # the slice straddles two windows
            tail = [lo, hi] if again else []
            if one_window is None or at is None:
                rows = self._fetch_grouped(sql, [lo, hi, *params, *tail], True, ranged)
            else:
                rows = self._fetch_grouped(one_window, [at, lo, hi, *params, *tail], True, ranged)
            for row in rows:
                if row[n]:  # no group: an empty selection still gives one row
                    yield row

    def _slice_column(self, sel: Selection, window: float | None) -> str:
        """What :meth:`_slices` cuts: ``seq`` (ranges of the table itself, read without an
        index) for a selection of all times and no window, else the record time ``t``
        (through its index; a range lies in one window where it can)."""
        return "seq" if window is None and sel.since is None and sel.until is None else "t"

    def _slices(self, sel: Selection, window: float | None) -> list[tuple[float, float]]:
        """Ranges of :meth:`_slice_column` to scan one after the other
        (:func:`~stef.monitor.store.slices.ranges`: about :attr:`Dialect.slice_rows` rows
        each), or one range holding everything where the dialect does not slice. Each
        range is grouped on its own: SQLite sorts a few thousand rows at a time, in
        memory, instead of a million at once, and the tallies of a group merge."""
        per = self.dialect.slice_rows
        if per is None:
            return [(-math.inf, math.inf)]
        return self._ranges(sel, window, per)

    def _ranges(
        self, sel: Selection, window: float | None, per: int, split: bool = True
    ) -> list[tuple[float, float]]:
        """:func:`~stef.monitor.store.slices.ranges` of this store's rows, ~``per`` each."""
        spans = self._fetch(SPANS, ())[0]
        column, rows = self._slice_column(sel, window), self.dialect.window_rows
        return ranges(spans, column, sel, window, per, window_rows=rows, split=split)

    def _few_windows(self, sel: Selection, window: float | None) -> bool:
        """Whether ``window`` cuts the selection's time span into at most
        :data:`MANY_WINDOWS` windows (the span from the index on ``t``, or the selection's
        ``since``/``until``). Grouping by every counted column returns a row per distinct
        cell, which over many windows costs more than the JSON arrays of one row each."""
        if window is None:
            return True
        lo, hi = sel.since, sel.until
        if lo is None or hi is None:
            first, last = self._fetch("SELECT min(t), max(t) FROM evaluations", ())[0]
            lo = first if lo is None else lo
            hi = last if hi is None else hi
        if lo is None or hi is None:
            return True
        return (float(hi) - float(lo)) / float(window) <= MANY_WINDOWS

    def _prune_boundary(self, before: float) -> tuple[dict[str, int], RollupDeltas]:
        """For pruning records before ``before``: per rollup table, the first bucket start
        that survives, and what the records of that bucket before ``before`` take from
        its rollups.

        Rollups of earlier buckets hold only pruned records and go whole.
        """
        starts: dict[str, int] = {}
        deltas: RollupDeltas = {}
        for table in ROLLUP_TABLES:
            start = int(before // table.width) * table.width
            starts[table.name] = start
            delta: dict[RollupKey, Tally] = {}
            deltas[table.name] = delta
            if start < before:
                sel = Selection(since=float(start), until=float(before))
                for (values, _), tally in self._tallies_from_rows(sel, GROUP_KEYS, None).items():
                    agent, version, app = values
                    delta[(agent, version, app, start)] = negated(tally)
        return starts, deltas
