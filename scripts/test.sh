#!/usr/bin/env bash
# Set up a virtual environment (once) with the test extra and run the whole test suite.
# PYTHON picks the interpreter (a command or a path; default python3); arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=scripts/test.sh
source scripts/_venv.sh
setup_venv "[test]"
"$VENV_PY" -c 'import jaxlib, sys
print("python", sys.version.split()[0], "jaxlib", jaxlib.__version__)'
say "running the test suite with pytest (several minutes; pass -x, -k or files to narrow it)"
exec "$VENV_PY" -m pytest -q "$@"
