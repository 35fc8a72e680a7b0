"""How a whole evaluation is kept in ``evaluation_docs.doc``: zstd-compressed JSON.

:func:`encode_doc` writes the evaluation's JSON (orjson) compressed with zstd and a
dictionary shipped with STEF (``stef/data/store_docs_v1.zdict``, trained on evaluations of
public text-to-SQL corpora by ``benchmarks/store_dict.py``); each frame names its
dictionary by id, so a later dictionary is added beside this one, never instead of it.
:func:`decode_doc` is the one way back from a stored value to the evaluation dict, for
every read of both stores; it also reads the JSON text that stores before migration
``0005_compressed_docs`` kept.

>>> blob = encode_doc({"id": "e1", "status": "ok", "score": 80.0})
>>> blob[:4] == ZSTD_MAGIC, decode_doc(blob)
(True, {'id': 'e1', 'status': 'ok', 'score': 80.0})
>>> decode_doc('{"id": "old"}')
{'id': 'old'}
"""

from __future__ import annotations

import json
import threading
from functools import cache
from importlib import resources
from typing import Any

import orjson
import zstandard

from stef.errors import StefError

#: The first four bytes of every zstd frame.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Dictionaries documents may be compressed with, by file; the last one writes.
DICTIONARIES = ("store_docs_v1.zdict",)
#: zstd level of new documents (3: zstd's default; 1 is barely faster on 1-5 KB).
LEVEL = 3

_local = threading.local()


class DocumentError(StefError):
    """A stored document cannot be read (compressed with a dictionary STEF lacks)."""

    status = "store_error"


@cache
def _dictionaries() -> dict[int, zstandard.ZstdCompressionDict]:
    """The shipped dictionaries by their zstd id."""
    out: dict[int, zstandard.ZstdCompressionDict] = {}
    for name in DICTIONARIES:
        data = resources.files("stef").joinpath("data", name).read_bytes()
        d = zstandard.ZstdCompressionDict(data)
        out[d.dict_id()] = d
    return out


def _writing_dict() -> zstandard.ZstdCompressionDict:
    data = resources.files("stef").joinpath("data", DICTIONARIES[-1]).read_bytes()
    return _dictionaries()[zstandard.ZstdCompressionDict(data).dict_id()]


def _compressor() -> zstandard.ZstdCompressor:
    """This thread's compressor (zstd contexts are not shared between threads)."""
    c = getattr(_local, "compressor", None)
    if c is None:
        c = _local.compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=_writing_dict())
    return c


def _decompressor(dict_id: int) -> zstandard.ZstdDecompressor:
    cache: dict[int, zstandard.ZstdDecompressor] | None = getattr(_local, "decompressors", None)
    if cache is None:
        cache = _local.decompressors = {}
    d = cache.get(dict_id)
    if d is None:
        known = _dictionaries()
        if dict_id and dict_id not in known:
            raise DocumentError(
                message=f"stored evaluation is compressed with zstd dictionary {dict_id}, "
                "which this STEF does not have; upgrade STEF to read this store"
            )
        d = cache[dict_id] = zstandard.ZstdDecompressor(dict_data=known.get(dict_id))
    return d


def encode_doc(evaluation: Any) -> bytes:
    """The stored form of a whole evaluation: its JSON, zstd-compressed with the dictionary.

    JSON orjson refuses (integers beyond 64 bits, NaN in a user's metadata) is written by
    the standard library instead, as :func:`~stef.monitor.store.common.json_text` does.
    """
    return compress_json(json_bytes(evaluation))


def json_bytes(evaluation: Any) -> bytes:
    """The JSON of an evaluation as stored (before compression).

    >>> json_bytes({"n": 2**70})
    b'{"n": 1180591620717411303424}'
    """
    try:  # plain first: OPT_NON_STR_KEYS costs half again, and is needed only for odd keys
        return orjson.dumps(evaluation)
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return orjson.dumps(evaluation, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(evaluation, ensure_ascii=False, default=str).encode()


def compress_json(data: bytes) -> bytes:
    """JSON bytes as stored: one zstd frame with the current dictionary."""
    return _compressor().compress(data)


def compress_many(datas: list[bytes]) -> list[bytes]:
    """:func:`compress_json` of each of ``datas`` (the same bytes), in one call: zstd
    compresses them one after the other in C, without a Python call per document (a
    chunk of 5,000 in a third to a half of the time).

    >>> [decode_doc(b) for b in compress_many([b'{"a": 1}', b'[]'])]
    [{'a': 1}, []]
    """
    if not datas:
        return []
    inputs: list[bytes | bytearray | memoryview] = list(datas)
    frames = _compressor().multi_compress_to_buffer(inputs, threads=1)
    return [frames[i].tobytes() for i in range(len(frames))]


def decode_doc(value: bytes | memoryview | str) -> dict[str, Any]:
    """The evaluation dict of a stored ``evaluation_docs.doc`` value.

    A zstd frame (what :func:`encode_doc` writes) or JSON text (stores written before
    migration ``0005_compressed_docs``); a frame whose dictionary this STEF lacks raises
    :class:`DocumentError` saying so.
    """
    if isinstance(value, str):
        return orjson.loads(value)
    data = bytes(value)
    if data[:4] != ZSTD_MAGIC:
        return orjson.loads(data)
    dict_id = zstandard.get_frame_parameters(data).dict_id
    return orjson.loads(_decompressor(dict_id).decompress(data))
