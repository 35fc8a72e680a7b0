"""Keyset pagination (``Store.page``) on both backends: walking the pages of any order gives
exactly the evaluations ``query`` gives, in the same order; a bad position is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stef.monitor.store import Selection, StoreError, open_store

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "monitor"))
from monitor_factory import make_evaluations


@pytest.mark.parametrize("order_by", [None, "-stored", "time", "-time", "score", "-score"])
def test_walking_the_pages_gives_what_query_gives(store_target, order_by):
    # Scores tie often and are null for error records; 2 records share each second.
    evs = make_evaluations(150, seed=3, error_rate=0.1, step_s=0.5)
    store = open_store(store_target)
    store.write(evs)
    sel = Selection(agent="sql-bot")
    walked, after, pages = [], None, 0
    while True:
        page, after = store.page(sel, order_by=order_by, limit=37, after=after)
        walked += [e["id"] for e in page]
        pages += 1
        if after is None:
            break
    assert walked == [e["id"] for e in store.query(selection=sel, order_by=order_by)]
    assert (len(walked), pages) == (150, 5)
    store.close()


def test_a_position_not_given_by_a_page_is_refused(store_target):
    store = open_store(store_target)
    with pytest.raises(StoreError) as info:
        store.page(order_by="time", after=["x", 1.0, None])
    assert info.value.message == "a page position is [seq, t, score] as a page returned it"
    assert store.page(order_by="time", limit=5) == ([], None)
    store.close()


def test_the_api_list_pages_by_keyset_and_refuses_a_cursor_of_another_sort(tmp_path):
    from stef.service import queries
    from stef.service.auth import Principal
    from stef.service.errors import ApiError

    store = open_store(tmp_path / "stef.db")
    store.write(make_evaluations(120, seed=5, error_rate=0.1))
    who = Principal("read", None, "t")
    seen, cursor = [], None
    while True:
        q = queries.list_query({"sort": "-score", "limit": "50", "cursor": cursor})
        page = queries.list_evaluations(store, q, who)
        assert page["total"] == 120
        seen += [e["id"] for e in page["evaluations"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [e["id"] for e in store.query(order_by="-score")]
    first = queries.list_evaluations(
        store, queries.list_query({"sort": "time", "limit": "10"}), who
    )
    with pytest.raises(ApiError) as info:
        queries.list_query({"sort": "-time", "cursor": first["next_cursor"]})
    assert str(info.value) == "cursor is not one this service gave out"
    store.close()
