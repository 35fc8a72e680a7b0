"""Settings of the LLM endpoint: command-line flags, then environment, then a config file.

Environment variables: ``STEF_LLM_BASE_URL``, ``STEF_LLM_MODEL``, ``STEF_LLM_API_KEY`` and
``STEF_LLM_CONFIG`` (path of a TOML or JSON file holding any :class:`LLMSettings` field).
The API key is kept out of ``repr`` and :meth:`LLMSettings.public`.

>>> s = resolve_settings({"model": "m", "api_key": "sk-secret"}, env={})
>>> s.model, "sk-secret" in repr(s), s.public()["api_key"]
('m', False, '[set]')
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from stef.errors import StefError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ENV_PREFIX = "STEF_LLM_"


def default_cache_path() -> Path:
    """Where the LLM answer cache lives unless ``--cache`` says otherwise.

    ``$STEF_CACHE_DIR`` or ``$XDG_CACHE_HOME/stef`` or ``~/.cache/stef``.
    """
    root = os.environ.get("STEF_CACHE_DIR")
    if root:
        return Path(root) / "llm-cache.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "stef" / "llm-cache.sqlite"


class LLMSettings(BaseModel):
    """Everything the LLM client and judge need; bounded so a typo fails early."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = Field(None, description="OpenAI-compatible base URL, e.g. .../v1")
    model: str | None = None
    api_key: SecretStr | None = Field(None, repr=False)
    samples: int = Field(1, ge=1, le=20, description="Self-consistency: answers per record.")
    temperature: float | None = Field(None, ge=0, le=2, description="None: 0, or 0.7 if k>1.")
    concurrency: int = Field(4, ge=1, le=256)
    timeout: float = Field(120.0, gt=0, description="Seconds per HTTP request.")
    max_retries: int = Field(3, ge=0, le=20)
    max_tokens: int = Field(512, ge=16, le=32768)
    cache: Path | None = Field(None, description="SQLite cache file (default under ~/.cache).")
    use_cache: bool = True
    circuit_failures: int = Field(5, ge=1, description="Failed attempts in a row that open it.")
    circuit_reset: float = Field(30.0, gt=0, description="Seconds before a trial request.")

    def effective_temperature(self) -> float:
        """The sampling temperature: explicit, else 0 for one sample and 0.7 for several."""
        if self.temperature is not None:
            return self.temperature
        return 0.0 if self.samples == 1 else 0.7

    def cache_path(self) -> Path | None:
        """The cache file, or ``None`` when caching is off."""
        if not self.use_cache:
            return None
        return self.cache or default_cache_path()

    def key(self) -> str | None:
        """The API key in clear, for the Authorization header only."""
        return self.api_key.get_secret_value() if self.api_key else None

    def public(self) -> dict[str, Any]:
        """Settings safe to print or store: the key is only said to be set or not."""
        d = self.model_dump(mode="json", exclude={"api_key"})
        d["api_key"] = "[set]" if self.api_key else None
        return d


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise StefError(
            "invalid_config", f"cannot read LLM config {path}: {e.strerror or e}"
        ) from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise StefError("invalid_config", f"LLM config {path} is malformed: {e}") from None
    if not isinstance(data, dict):
        raise StefError("invalid_config", f"LLM config {path} must hold an object/table")
    section = data.get("llm", data)
    return dict(section) if isinstance(section, Mapping) else {}


def resolve_settings(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_file: str | Path | None = None,
) -> LLMSettings:
    """Merge settings: flags (``None`` = unset) over environment over config file.

    >>> resolve_settings({"model": None}, env={"STEF_LLM_MODEL": "qwen"}).model
    'qwen'
    >>> resolve_settings({"samples": 0}, env={})
    Traceback (most recent call last):
    ...
    stef.errors.StefError: invalid LLM settings: samples: Input should be greater than or equal to 1
    """
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    if path:
        merged.update(_read_config_file(Path(path)))
    for name in ("base_url", "model", "api_key"):
        value = env.get(ENV_PREFIX + name.upper())
        if value:
            merged[name] = value
    for name, value in (flags or {}).items():
        if value is not None and name in LLMSettings.model_fields:
            merged[name] = value
    try:
        return LLMSettings.model_validate(merged)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()
        )
        raise StefError("invalid_config", f"invalid LLM settings: {problems}") from None
