"""The store's public import path, kept for user code: ``from stef.store import open_store``.

The store lives in :mod:`stef.monitor.store`; this module re-exports its interface.

>>> from stef.store import open_store, Store
>>> open_store is __import__("stef.monitor.store", fromlist=["open_store"]).open_store
True
"""

from stef.monitor.store import (
    Selection,
    SelectionError,
    SQLiteStore,
    Store,
    StoreError,
    check_evaluation,
    open_store,
    question_key,
)

__all__ = [
    "SQLiteStore",
    "Selection",
    "SelectionError",
    "Store",
    "StoreError",
    "check_evaluation",
    "open_store",
    "question_key",
]
