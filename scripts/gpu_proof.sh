#!/usr/bin/env bash
# The GPU proof (issue 30), on a machine with an NVIDIA GPU, jaxlib and its CUDA PJRT plugin
# (jax-cuda12/13-pjrt of jaxlib's version): which device xla_array finds, a smoke test of
# every family of ops, the test suite with the GPU as the default device, bench.py beside
# jax.jit, matmul precision, the GPU memory settings, the array-API conformance suite.
#   OUT=/tmp/gpu STEPS="env smoke tests" bash scripts/gpu_proof.sh
# Each step writes $OUT/<step>.txt under its own time limit (T_<step> seconds). Wheels of
# missing pure-Python test needs may be put in .whl/ (installed into /tmp/site first); an
# array-api-tests checkout in $AAT (default .gpu/aat; git-ignored, carried) enables the
# conformance step: the suite's array_api_tests/, conftest.py and pytest.ini, and of its pinned
# array-api submodule src/ and spec/<version>/API_specification (the signatures it reads).
# The conformance reports go to $OUT/aat_reports.tgz, also when the step is cut by its limit.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_proof}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# several processes share the GPU (pytest workers, xla_array beside jax): no preallocation
export XLA_ARRAY_GPU_PREALLOCATE=${XLA_ARRAY_GPU_PREALLOCATE:-false}
export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
AAT=${AAT:-.gpu/aat}

step_build() {  # the native CPU kernels, against this machine's jaxlib headers
    "$PY" setup.py -q build_ext --inplace -j 8
}
step_env() {
    nvidia-smi; "$PY" -V; uname -a; nproc
    "$PY" -m pip list 2>/dev/null | grep -iE "^(jax|numpy|scipy|scikit|ml.dtypes|hypothesis|pytest|nvidia-cu)"
    "$PY" -c "import jax_plugins.xla_cuda13 as m, jax_cuda13_plugin as k, os; print(os.listdir(m.__path__[0]), os.listdir(k.__path__[0]))"
    "$PY" -c "import xla_array as xp, time; t=time.perf_counter(); i=xp.__array_namespace_info__(); print(i.devices(), i.default_device(), f'{time.perf_counter()-t:.2f}s')"
}
step_smoke() { "$PY" benchmarks/bench_gpu.py smoke --json "$OUT/smoke.json"; }
step_precision() { "$PY" benchmarks/bench_gpu.py memory precision --json "$OUT/gpu.json"; }
step_bench() {
    "$PY" benchmarks/bench.py --only "${BENCH_ONLY:-1,2,3,4,5,6,7}" --repeats 7 \
        --contenders numpy,jax_jit,xla_array --no-overheads --json "$OUT/bench.json"
}
step_tests() {
    # TESTS_FILE: test ids, one per line (e.g. the failures of an earlier run)
    local tests=${TESTS:-tests}
    [ -n "${TESTS_FILE:-}" ] && tests=$(cat "$TESTS_FILE")
    "$PY" -m pytest -p xdist -n "${JOBS:-14}" -v --tb=short -rfE \
        --timeout="${TEST_TIMEOUT:-120}" -p no:cacheprovider $tests
}
step_conformance() {
    [ -d "$AAT" ] || { echo "no array-api-tests checkout in $AAT"; return 0; }
    # AAT_FILES: a subset of the suite's test files (default: all)
    "$PY" conformance/run.py --suite "$AAT" --versions 2025.12 --max-examples 20 --seed 0 \
        --jobs "${JOBS:-14}" --report-dir /tmp/aat_reports ${AAT_FILES:+--files $AAT_FILES}
}
for s in ${STEPS:-build env smoke precision bench tests conformance}; do
    t=T_$s
    echo "=== $s (limit ${!t:-600}s) $(date +%T)"
    timeout -k 5 "${!t:-600}" bash -c "$(declare -f step_$s); $(declare -p PY OUT AAT); step_$s" \
        >"$OUT/$s.txt" 2>&1
    echo "=== $s rc=$? $(date +%T)"; tail -n 3 "$OUT/$s.txt"
    if [ "$s" = conformance ] && [ -d /tmp/aat_reports ]; then
        tar czf "$OUT/aat_reports.tgz" -C /tmp aat_reports
    fi
done
