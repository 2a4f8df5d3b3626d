#!/usr/bin/env bash
# ruff (style, imports, bugbear) over the repository and mypy over the package, in the same
# virtual environment as the tests (PYTHON picks the interpreter, as for test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=scripts/lint.sh
source scripts/_venv.sh
setup_venv "[test]"
say "ruff check"
"$VENV_PY" -m ruff check xla_array tests benchmarks conformance examples
say "mypy xla_array"
"$VENV_PY" -m mypy xla_array
