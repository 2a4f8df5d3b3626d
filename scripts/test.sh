#!/usr/bin/env bash
# Set up a virtual environment (once) and run the whole test suite.
# PYTHON picks the interpreter (default python3); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
tag=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
VENV=${VENV:-.venv$tag}
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[test]"
"$VENV/bin/python" -c 'import jaxlib, sys; print("python", sys.version.split()[0], "jaxlib", jaxlib.__version__)'
exec "$VENV/bin/python" -m pytest -q "$@"
