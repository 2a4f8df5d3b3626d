"""Run SciPy's and array-api-extra's own array-API tests with xla_array and with
array_api_strict, and print a per-suite table (passed / failed / skipped / xfailed, wall time)
followed by every failing test id with the first line of its error.

    python conformance/peers.py                         # every SciPy submodule, both backends
    python conformance/peers.py --suites special fft --backends xla_array
    python conformance/peers.py --aae /work/aae         # array-api-extra checkout (its tests/)
    python conformance/peers.py --suites stats -k "not test_mode" --pytest-args='-x'

SciPy's tests come from the installed SciPy (`--pyargs scipy.<submodule>`, only the tests that
use the `xp` fixture: `-m array_api_backends`); array-api-extra's from a checkout of its
repository at the release installed or given (`--aae DIR`: DIR/tests, DIR/src on the path).
xla_array is injected by the plugins `scipy_xla.py` and `aae_xla.py` of this folder; strict runs
with the suites' own settings. Raw JSON reports land in `--report-dir`
(default conformance/results/peers/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCIPY_SUITES = ("special", "fft", "stats", "signal", "ndimage", "integrate", "interpolate",
                "optimize", "differentiate", "_lib", "cluster", "linalg", "spatial", "constants")
BACKENDS = ("xla_array", "array_api_strict")


def _command(suite: str, backend: str, args) -> tuple[list[str], dict[str, str], Path]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(HERE)] + ([str(Path(args.aae) / "src")] if suite == "aae" else [])
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("PYTHONHASHSEED", "0")
    report = Path(args.report_dir) / f"{suite}-{backend}.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN",
           "--json-report", f"--json-report-file={report}", "--json-report-omit", "keywords",
           "collectors", "streams", "log", "warnings"]
    if suite == "aae":
        cwd = Path(args.aae)
        cmd += ["tests"]
        if backend == "xla_array":
            cmd += ["-p", "aae_xla"]
        else:
            cmd += ["-k", "array_api_strict and not strictest"]
    else:
        cwd = Path(args.report_dir)
        cmd += ["--pyargs", f"scipy.{suite}", "-m", "array_api_backends"]
        if backend == "xla_array":
            env["SCIPY_ARRAY_API"] = "1"
            cmd += ["-p", "scipy_xla"]
        else:
            env["SCIPY_ARRAY_API"] = json.dumps([backend])
    if args.k:
        cmd += ["-k", args.k]
    cmd += args.pytest_args.split()
    return cmd, env, cwd


def _summarize(report: Path) -> tuple[dict[str, int], list[str]]:
    data = json.loads(report.read_text())
    counts = {k: data["summary"].get(k, 0) for k in
              ("passed", "failed", "error", "skipped", "xfailed", "xpassed")}
    failures = []
    for test in data.get("tests", []):
        if test["outcome"] in ("failed", "error"):
            stage = next((test[s] for s in ("setup", "call", "teardown")
                          if test.get(s, {}).get("outcome") == "failed"), {})
            crash = (stage.get("crash") or {}).get("message", "").strip().splitlines()
            failures.append(f"{test['nodeid']}: {crash[0][:200] if crash else '?'}")
    return counts, failures


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suites", nargs="*", default=None,
                   help=f"SciPy submodules (default all: {' '.join(SCIPY_SUITES)}) and/or 'aae'")
    p.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    p.add_argument("--aae", default=None, help="array-api-extra checkout; adds the 'aae' suite")
    p.add_argument("-k", default=None)
    p.add_argument("--pytest-args", default="")
    p.add_argument("--report-dir", default=str(HERE / "results" / "peers"))
    args = p.parse_args(argv)
    suites = list(args.suites) if args.suites is not None else list(SCIPY_SUITES)
    if args.aae and "aae" not in suites:
        suites.append("aae")
    if "aae" in suites and not args.aae:
        p.error("the 'aae' suite needs --aae DIR (an array-api-extra checkout)")
    Path(args.report_dir).mkdir(parents=True, exist_ok=True)

    rows, listing, status = [], [], 0
    for suite in suites:
        for backend in args.backends:
            cmd, env, cwd = _command(suite, backend, args)
            report = Path(args.report_dir) / f"{suite}-{backend}.json"
            report.unlink(missing_ok=True)
            start = time.perf_counter()
            log = Path(args.report_dir) / f"{suite}-{backend}.log"
            with open(log, "w") as out:
                rc = subprocess.call(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
            wall = time.perf_counter() - start
            if not report.exists():
                rows.append(f"| {suite} | {backend} | pytest exited {rc}, no report ({log}) |")
                status = 2
                continue
            counts, failures = _summarize(report)
            failed = counts["failed"] + counts["error"]
            rows.append(f"| {suite} | {backend} | {counts['passed']} | {failed} | "
                        f"{counts['skipped']} | {counts['xfailed']} | {wall:.0f} s |")
            print(rows[-1], flush=True)
            listing += [f"{backend}  {f}" for f in failures]
            status = max(status, 1 if failed else 0)
    print("\n| suite | backend | passed | failed | skipped | xfailed | wall |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if listing:
        print("\nfailures:\n" + "\n".join(listing))
    return status


if __name__ == "__main__":
    sys.exit(main())
