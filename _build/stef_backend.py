"""STEF's build backend: setuptools' own, asking for mypy too when ``STEF_MYPYC=1``.

A plain build needs only what ``[build-system] requires`` lists. The optional mypyc build
(see ``setup.py``) also needs mypy (which brings mypyc) and, for mypy's pydantic plugin and
the types of the compiled modules, pydantic and sqlglot. This is setuptools' documented
way of adding build requirements on the fly.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook, unchanged)

#: What the mypyc build needs besides setuptools (mypy's version decides the C it writes).
MYPYC_REQUIRES = ["mypy>=1.10", "pydantic>=2.7,<3", "sqlglot[c]==30.30.0"]


def _mypyc() -> bool:
    return os.environ.get("STEF_MYPYC", "") in ("1", "true", "yes")


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    # setuptools finds its requirements by running setup.py, which with STEF_MYPYC=1
    # imports mypyc: not there yet, so the list is given here (setup.py has no others)
    if _mypyc():
        return ["wheel", *MYPYC_REQUIRES]
    return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    _no_compiled_editable()
    return _setuptools.get_requires_for_build_editable(config_settings)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _no_compiled_editable()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)


def _no_compiled_editable() -> None:
    """An editable install compiles in place: the modules would shadow their sources,
    and an edit of a source would silently not count."""
    if _mypyc():
        raise RuntimeError(
            "STEF_MYPYC=1 builds wheels only; unset it for an editable install "
            "(pip install -e .), which stays pure Python"
        )
