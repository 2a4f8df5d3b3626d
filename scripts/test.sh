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
# Hypothesis's examples change with the date (the seed is printed: HYPOTHESIS_SEED=N reruns
# them); -rs lists every skip with its reason; a test module that collects nothing or is
# skipped whole (a dependency missing) fails the run (tests/conftest.py).
SEED=${HYPOTHESIS_SEED:-$(date -u +%Y%m%d)}
say "running the test suite with pytest (several minutes; pass -x, -k or files to narrow it);" \
    "hypothesis seed $SEED"
exec "$VENV_PY" -m pytest -q -rs --fail-empty-modules --hypothesis-seed="$SEED" "$@"
