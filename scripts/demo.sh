#!/usr/bin/env bash
# Set up a virtual environment (once) and run the demo (examples/demo.py).
# PYTHON picks the interpreter (a command or a path; default python3); arguments go to the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=scripts/demo.sh
source scripts/_venv.sh
setup_venv ""
say "running examples/demo.py: k-means on 1M points with xla_array and NumPy (~15-30 s)"
exec "$VENV_PY" examples/demo.py "$@"
