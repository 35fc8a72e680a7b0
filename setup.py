"""Optional mypyc build of STEF's analysis modules (see docs/performance.md, "mypyc").

A plain build (``pip install .``, ``pip install -e .``) is pure Python, as it always was:
this file then adds nothing to what ``pyproject.toml`` declares. With ``STEF_MYPYC=1`` in
the environment, the modules of :data:`COMPILED` are compiled with mypyc into extension
modules beside their sources (a platform wheel), which Python imports in their place::

    STEF_MYPYC=1 pip wheel --no-deps -w dist .

The build backend (``_build/stef_backend.py``) then asks for mypy as a build requirement.
The sources stay in the wheel, and the pure-Python package is what the test suite checks;
``.ci/run`` also builds the compiled wheel and checks that it evaluates every row of the
data files exactly as the pure package does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent

#: Packages whose every module is compiled, the modules left out of them, and the modules
#: compiled outside them: the data classes, the symbolic judge and the record reader. A
#: frozen dataclass that is pickled or copied (an evaluator sent to a worker process
#: carries a PrecisionGate; users copy findings) defines ``__reduce__``: mypyc's frozen
#: classes refuse the default field-by-field restore. The evaluator stays pure (its
#: ``__getstate__`` reads ``__dict__``), and so does ``stef.judges.base`` (users subclass
#: ``Judge``).
COMPILED_PACKAGES = ("stef/nl", "stef/align", "stef/sql")
LEFT_OUT: frozenset[str] = frozenset()
COMPILED_ALSO = (
    "stef/findings.py",
    "stef/judges/symbolic.py",
    "stef/judges/weights.py",
    "stef/record.py",
    "stef/score.py",
    "stef/spec.py",
)


def compiled_modules(root: Path = ROOT) -> list[str]:
    """The source files the mypyc build compiles, relative to ``root``, sorted."""
    out = []
    for package in COMPILED_PACKAGES:
        for path in sorted((root / "src" / package).glob("*.py")):
            rel = path.relative_to(root / "src").as_posix()
            if rel not in LEFT_OUT:
                out.append(f"src/{rel}")
    return sorted([*out, *(f"src/{rel}" for rel in COMPILED_ALSO)])


def _ext_modules() -> list[Any]:
    if os.environ.get("STEF_MYPYC", "") not in ("1", "true", "yes"):
        return []
    from mypyc.build import mypycify

    return mypycify(
        ["--config-file", str(ROOT / "pyproject.toml"), *compiled_modules()],
        opt_level="3",
        group_name="stef_native",
    )


if __name__ == "__main__":
    setup(ext_modules=_ext_modules())
