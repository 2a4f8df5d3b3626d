#!/usr/bin/env python3
"""Run the data-apis array-api-tests conformance suite against an array module.

    python conformance/run.py --suite /path/to/array-api-tests [--module xla_array]
        [--versions 2024.12 2025.12] [--max-examples 100] [--seed 0]
        [--xfails conformance/xfails.txt] [-k EXPR] [--jobs N] [--files test_x.py ...]

For every version, pytest runs inside the suite checkout with ARRAY_API_TESTS_MODULE /
ARRAY_API_TESTS_VERSION set and the project root on PYTHONPATH; results are collected
with pytest-json-report (a requirement of the suite) and summarised per test file.
Exit status: 0 if nothing failed, 1 if any test failed/errored, 2 if a pytest run broke.
Stdlib + pytest only (the suite itself needs hypothesis, ndindex, pytest-json-report).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # project root: makes `import xla_array` work
EXTENSIONS = ("linalg", "fft")
COLUMNS = ("passed", "failed", "xfailed", "xpassed", "skipped")

PROBE = """
import json, array_api_tests as t
print("@@PROBE@@" + json.dumps({"name": t.xp_name,
    "api_version": getattr(t.xp, "__array_api_version__", None),
    "suite_api_version": t.api_version,
    "extensions": [e for e in %r if hasattr(t.xp, e)]}))
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--suite", required=True, type=Path, help="array-api-tests checkout (with its array-api submodule)")
    p.add_argument("--module", default="xla_array", help="value for ARRAY_API_TESTS_MODULE (default: xla_array)")
    p.add_argument("--versions", nargs="+", default=["2024.12", "2025.12"], help="ARRAY_API_TESTS_VERSION values")
    p.add_argument("--max-examples", type=int, default=100)
    p.add_argument("--seed", default="0", help="--hypothesis-seed")
    p.add_argument("--xfails", type=Path, default=HERE / "xfails.txt", help="passed as --xfails-file (if it exists)")
    p.add_argument("--skips", type=Path, default=None, help="passed as --skips-file")
    p.add_argument("-k", dest="kexpr", default=None, help="pytest -k expression")
    p.add_argument("--files", nargs="+", default=None, help="subset of suite test files, e.g. test_sorting_functions.py")
    p.add_argument("--jobs", type=int, default=1, help="run test files as N concurrent pytest processes")
    p.add_argument("--disable-extension", nargs="+", default=[], metavar="EXT",
                   help="also disable these extensions (missing linalg/fft are disabled automatically)")
    p.add_argument("--skip-dtypes", default=None, help="ARRAY_API_TESTS_SKIP_DTYPES, e.g. 'float64,complex128'")
    p.add_argument("--deadline", action="store_true",
                   help="keep Hypothesis' 800ms per-example deadline (default: --disable-deadline, since the "
                        "first call of a new shape/dtype includes XLA compile time)")
    p.add_argument("--report-dir", type=Path, default=HERE / "results",
                   help="raw JSON reports, logs, Hypothesis dirs (default: conformance/results, git-ignored)")
    p.add_argument("--pytest-args", default="", help="extra pytest arguments as one string; write --pytest-args='-x --tb=long' (with '=')")
    return p.parse_args(argv)


def make_env(module, version, seed):
    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = module
    env["ARRAY_API_TESTS_VERSION"] = version
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [x for x in [env.get("PYTHONPATH")] if x])
    env["CONFORMANCE_SEED"] = str(seed)  # read by pytest_runtest_setup below
    env.setdefault("PYTHONHASHSEED", "0")  # set/dict order feeds Hypothesis draws; keep runs comparable
    if module.split(".")[0] == "array_api_strict":
        # array-api-strict reports/behaves as the version its flag selects; keep it in step.
        env.setdefault("ARRAY_API_STRICT_API_VERSION", version)
    return env


def probe(suite, env):
    """Import the module the way the suite does; report its version and extensions."""
    r = subprocess.run([sys.executable, "-c", PROBE % (EXTENSIONS,)], cwd=suite, env=env,
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("@@PROBE@@"):
            return json.loads(line[len("@@PROBE@@"):])
    sys.exit(f"error: could not import the module through the suite:\n{r.stdout}{r.stderr}")


def pytest_runtest_setup(item):
    """Hook used when this file is loaded as a pytest plugin (-p conformance.run).

    Some suite tests are not @given tests and draw with strategy.example(), which shuffles
    with the global `random` (ignores --hypothesis-seed); seed it per test for stable runs."""
    seed = os.environ.get("CONFORMANCE_SEED")
    if seed is not None:
        random.seed(f"{seed}:{item.nodeid}")


def build_cmd(args, targets, report, disabled):
    cmd = [sys.executable, "-m", "pytest", *targets, "-p", "no:cacheprovider", "-p", "conformance.run",
           "-q", "--tb=short", "--continue-on-collection-errors",
           f"--max-examples={args.max_examples}", f"--hypothesis-seed={args.seed}"]
    if disabled:  # nargs="+" option: keep it before another option
        cmd += ["--disable-extension", *disabled]
    cmd += ["--json-report", f"--json-report-file={report}",
            "--json-report-omit", "log", "streams", "warnings", "keywords", "traceback",
            "--json-report-indent=0"]
    if args.xfails and args.xfails.exists():
        cmd.append(f"--xfails-file={args.xfails.resolve()}")
    if args.skips:
        cmd.append(f"--skips-file={args.skips.resolve()}")
    if args.kexpr:
        cmd += ["-k", args.kexpr]
    if not args.deadline:
        cmd.append("--disable-deadline")
    return cmd + args.pytest_args.split()


def run_one(args, env, targets, report, disabled):
    log = report.with_suffix(".log")
    # Hypothesis caches literals it mines from local source under its storage dir
    # (default <suite>/.hypothesis); a cached run generates different examples from a
    # fresh one, so give each pytest process a fresh dir: same seed -> same examples.
    hyp = report.with_suffix(".hypothesis")
    shutil.rmtree(hyp, ignore_errors=True)
    report.unlink(missing_ok=True)
    env = dict(env, HYPOTHESIS_STORAGE_DIRECTORY=str(hyp))
    with open(log, "w") as fh:
        fh.write(" ".join(build_cmd(args, targets, report, disabled)) + "\n\n")
        fh.flush()
        rc = subprocess.call(build_cmd(args, targets, report, disabled), cwd=args.suite, env=env,
                             stdout=fh, stderr=subprocess.STDOUT)
    tests = []
    if report.exists():
        data = json.loads(report.read_text())
        tests = data.get("tests", [])
        # a test file that fails to import: count it as one errored "test"
        tests += [{"nodeid": c["nodeid"], "outcome": "error",
                   "setup": {"outcome": "failed", "longrepr": c.get("longrepr", "")}}
                  for c in data.get("collectors", []) if c.get("outcome") == "failed"]
    # 0 ok, 1 some tests failed, 5 nothing collected (e.g. -k deselected a whole file)
    broken = rc not in (0, 1, 5)
    if broken:
        tail = log.read_text().splitlines()[-30:]
        print(f"!! pytest exited {rc} for {' '.join(targets)} (log: {log})\n   " + "\n   ".join(tail))
    return tests, broken


def crash_message(t):
    for stage in ("setup", "call", "teardown"):
        st = t.get(stage) or {}
        if st.get("outcome") == "failed":
            crash = (st.get("crash") or {}).get("message", "").strip()
            lines = crash.splitlines()[:1] or str(st.get("longrepr", "")).strip().splitlines()[-1:]
            return lines[0][:160] if lines else ""
    return ""


def run_version(args, version, report_dir):
    env = make_env(args.module, version, args.seed)
    if args.skip_dtypes:
        env["ARRAY_API_TESTS_SKIP_DTYPES"] = args.skip_dtypes
    info = probe(args.suite, env)
    disabled = sorted({e for e in EXTENSIONS if e not in info["extensions"]} | set(args.disable_extension))
    print(f"\n=== {info['name']}  ARRAY_API_TESTS_VERSION={version}  "
          f"(module __array_api_version__={info['api_version']}, suite uses {info['suite_api_version']})")
    if info["api_version"] != version:
        print(f"    note: module reports __array_api_version__={info['api_version']!r}, not {version!r}")
    print(f"    extensions: present={info['extensions'] or '-'} disabled={disabled or '-'}")
    files = args.files
    if files is None and args.jobs > 1:
        files = sorted(p.name for p in (args.suite / "array_api_tests").glob("test_*.py"))
    if files is None:
        batches = [["array_api_tests"]]
    else:
        batches = [[f if "/" in f else f"array_api_tests/{f}"] for f in files]
        if args.jobs <= 1:
            batches = [[b[0] for b in batches]]
    if args.jobs > 1:
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # several processes, one GPU
    t0 = time.time()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futs = [pool.submit(run_one, args, env, b, report_dir / f"{version}-{i:02d}.json", disabled)
                for i, b in enumerate(batches)]
        results = [f.result() for f in futs]
    elapsed = time.time() - t0
    tests = [t for ts, _ in results for t in ts]
    broken = any(b for _, b in results)
    return tests, broken, elapsed


def summarise(version, tests, elapsed):
    table = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    failing = []
    for t in tests:
        fname = t["nodeid"].split("::")[0].removeprefix("array_api_tests/")
        outcome = t["outcome"]
        if outcome == "error":
            outcome = "failed"
        table[fname][outcome if outcome in COLUMNS else "failed"] += 1
        if outcome == "failed":
            failing.append((t["nodeid"], t["outcome"], crash_message(t)))
    width = max([len("file"), len("TOTAL")] + [len(f) for f in table])
    header = f"{'file':<{width}} | " + " | ".join(f"{c:>7}" for c in COLUMNS)
    print(header + "\n" + "-" * len(header))
    totals = dict.fromkeys(COLUMNS, 0)
    for fname in sorted(table):
        row = table[fname]
        for c in COLUMNS:
            totals[c] += row[c]
        print(f"{fname:<{width}} | " + " | ".join(f"{row[c]:>7}" for c in COLUMNS))
    print("-" * len(header))
    print(f"{'TOTAL':<{width}} | " + " | ".join(f"{totals[c]:>7}" for c in COLUMNS))
    print(f"{len(tests)} tests in {elapsed:.0f}s (version {version})")
    if failing:
        print(f"\nfailing tests ({len(failing)}), version {version}:")
        for nodeid, outcome, msg in sorted(failing):
            tag = " [error]" if outcome == "error" else ""
            print(f"  {nodeid}{tag}\n      {msg}")
    return totals, failing


def main(argv=None):
    args = parse_args(argv)
    args.suite = args.suite.resolve()
    if not (args.suite / "array_api_tests").is_dir():
        sys.exit(f"error: {args.suite} is not an array-api-tests checkout")
    if not any((args.suite / "array-api" / "spec").glob("20*")):
        sys.exit(f"error: {args.suite}/array-api is empty: check out the pinned array-api submodule")
    report_dir = args.report_dir.resolve()
    report_dir.mkdir(parents=True, exist_ok=True)
    any_failed = any_broken = False
    overall = []
    for version in args.versions:
        tests, broken, elapsed = run_version(args, version, report_dir)
        totals, failing = summarise(version, tests, elapsed)
        overall.append((version, totals, len(failing), elapsed))
        any_failed |= bool(failing)
        any_broken |= broken or not tests
    print("\n=== summary (" + args.module + f", max-examples={args.max_examples}, seed={args.seed})")
    for version, totals, _nfail, elapsed in overall:
        print(f"  {version}: " + ", ".join(f"{totals[c]} {c}" for c in COLUMNS) + f"  [{elapsed:.0f}s]")
    print(f"raw reports and logs: {report_dir}")
    return 2 if any_broken else (1 if any_failed else 0)


if __name__ == "__main__":
    sys.exit(main())
