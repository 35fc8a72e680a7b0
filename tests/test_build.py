"""The optional mypyc build (``setup.py``, ``STEF_MYPYC=1``) and its pure-Python fallback.

A plain build adds no extension module: the package stays pure Python, which is what the
rest of the suite tests. ``.ci/run`` builds the compiled wheel and runs the suite and the
evaluations digest against it as well (docs/performance.md, "mypyc").
"""

from __future__ import annotations

import copy
import importlib.util
import pickle
import sys
from pathlib import Path
from types import ModuleType

import pytest

import stef.sql.walk
from stef.align.precision import Fires, PrecisionGate
from stef.evaluator import Evaluator
from stef.findings import Finding
from stef.rules import Rules
from stef.score import Breakdown
from stef.spec import Aggregation, Filter, OrderKey, Projection

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def setup_py() -> ModuleType:
    pytest.importorskip("setuptools")  # setup.py imports it
    return _load(ROOT / "setup.py", "stef_setup_py")


def test_a_plain_build_compiles_nothing(setup_py: ModuleType, monkeypatch) -> None:
    monkeypatch.delenv("STEF_MYPYC", raising=False)
    assert setup_py._ext_modules() == []


def test_the_compiled_modules_are_the_analysis_modules(setup_py: ModuleType) -> None:
    mods = setup_py.compiled_modules()
    assert len(mods) == len(set(mods)) and all((ROOT / m).is_file() for m in mods)
    assert {m.split("/")[2] for m in mods if m.count("/") == 3} == {"nl", "align", "sql", "judges"}
    assert "src/stef/sql/walk.py" in mods and "src/stef/nl/spec.py" in mods
    # the data classes, the symbolic judge and the record reader (session 17); their
    # frozen classes pickle through __reduce__ (test_frozen_classes_pickle_and_copy)
    for module in ("spec", "findings", "score", "record", "align/precision", "judges/symbolic"):
        assert f"src/stef/{module}.py" in mods
    # pure: the evaluator's __getstate__ reads __dict__; users subclass Judge
    assert not any(m.endswith(("stef/evaluator.py", "judges/base.py")) for m in mods)


@pytest.mark.parametrize(
    "value",
    [
        Filter("region", "=", ("north",), "region = 'North'", "where", "year", "capitalised", True),
        Aggregation("count", "x", True, "COUNT(DISTINCT x)"),
        Projection("x", "y", ("x",), False, "x AS y"),
        OrderKey("x", "desc", True, "x DESC", False),
        Finding("filter_missing", "error", "m", "nl", "sql", "rule"),
        Breakdown("fully_applied", 40.0, "correct", 40.0, 0.0, 0.9, 1.0, 80.0, 80.0),
        Fires(1, 2, 3, 4),
        PrecisionGate({"filter_extra": "lift 0.99"}, {"name": "x"}),
    ],
    ids=lambda v: type(v).__name__,
)
def test_frozen_classes_pickle_and_copy(value: object) -> None:
    """Each frozen class pickles and copies through its constructor (``__reduce__``), as a
    compiled frozen class must: mypyc's refuses the field-by-field restore."""
    for twin in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert twin == value and type(twin) is type(value)
        assert repr(twin) == repr(value)


def test_the_backend_asks_for_mypy_only_for_the_mypyc_build(monkeypatch) -> None:
    pytest.importorskip("setuptools")  # a venv of Python 3.12+ comes without it
    sys.path.insert(0, str(ROOT / "_build"))
    try:
        backend = _load(ROOT / "_build" / "stef_backend.py", "stef_backend_under_test")
    finally:
        sys.path.remove(str(ROOT / "_build"))
    monkeypatch.setenv("STEF_MYPYC", "1")
    assert any(r.startswith("mypy") for r in backend.get_requires_for_build_wheel())
    with pytest.raises(RuntimeError, match="wheels only"):
        backend.get_requires_for_build_editable()  # compiled modules would shadow sources
    monkeypatch.delenv("STEF_MYPYC")
    # setuptools' own answer (it runs setup.py egg_info in the working directory: stubbed)
    monkeypatch.setattr(backend._setuptools, "get_requires_for_build_wheel", lambda c=None: [])
    assert backend.get_requires_for_build_wheel() == []
    assert backend.build_wheel is not None and backend.build_sdist is not None


def test_an_evaluator_with_benign_filters_pickles() -> None:
    """What a worker process gets; holds compiled and pure objects alike."""
    rules = Rules.model_validate({"benign_filters": ["is_deleted = 0"]})
    ev = Evaluator(rules=rules)
    twin = pickle.loads(pickle.dumps(ev))
    sql = "SELECT COUNT(*) FROM users WHERE is_deleted = 0"
    record = {"question": "How many users?", "sql": sql}
    a, b = ev.evaluate_record(record), twin.evaluate_record(record)
    assert a["score"] == b["score"] and a["findings"] == b["findings"]


def test_which_build_is_running_is_visible() -> None:
    """A compiled module is an extension module; its source stays beside it."""
    path = Path(stef.sql.walk.__file__ or "")
    assert path.suffix in (".py", ".so", ".pyd")
    assert path.with_name("walk.py").is_file()


def test_a_fresh_copy_of_a_spec_holds_every_field() -> None:
    """``_fresh`` names each field of ``Spec`` (a compiled Spec has no ``__dict__``): a new
    field must be added there too."""
    from dataclasses import fields

    from stef.nl.spec import _fresh
    from stef.spec import Spec

    values = {f.name: f.type for f in fields(Spec)}
    spec = Spec()
    for i, name in enumerate(values):
        old = getattr(spec, name)
        if type(old) in (list, dict):
            new: object = [f"v{i}"] if type(old) is list else {f"k{i}": i}
        else:  # a compiled Spec checks the types
            new = True if type(old) is bool else i + 1
        setattr(spec, name, new)
    spec.joins = [{"type": "inner"}]
    twin = _fresh(spec)
    assert twin == spec
    for name in values:
        value = getattr(spec, name)
        if type(value) in (list, dict):
            assert getattr(twin, name) is not value, name
    assert twin.joins[0] is not spec.joins[0]
