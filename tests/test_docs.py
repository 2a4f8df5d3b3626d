"""The examples of README.md and docs/*.md run, in page order, and print what the pages say.

Every ```python block of a page runs, in page order, in one namespace per page, in a
subprocess of its own (this file run as a script: ``python tests/test_docs.py PAGE``) whose
on-disk compile cache (``XLA_ARRAY_CACHE_DIR``) starts empty, so compile counts are those of
a first run. A page states what its examples print in two ways, both checked:

- ``print(...)  # -> TEXT``: a comment starting with ``->`` on a line of a ``print`` call is
  what that call prints. An explanation may follow the printed text, after ``: ``, ``; `` or
  two spaces (``# -> 30 2: every flushed chunk ...``). A print that runs several times (in a
  loop) must match every time.
- a ```text block that starts on the line after a ```python block ends is everything that
  block prints.

In both, runs of whitespace compare equal and ``...`` stands for any text (doctest's
NORMALIZE_WHITESPACE and ELLIPSIS). Other comments and blocks explain; they are not checked.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import doctest
import importlib.util
import io
import linecache
import os
import re
import subprocess
import sys
import time
import tokenize
import traceback

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pages() -> list[str]:
    """README.md and the docs/*.md pages that have ```python blocks (repository paths)."""
    docs = sorted(f"docs/{n}" for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
    pages = []
    for page in ["README.md"] + docs:
        with open(os.path.join(ROOT, page)) as f:
            if "```python\n" in f.read():
                pages.append(page)
    return pages


PAGES = _pages()
# what a page needs beyond xla_array's dependencies: modules (skipped without them), and the
# environment it is written for (devices.md: four CPU devices, set before the first array)
NEEDS = {"docs/sklearn_scipy.md": ("sklearn",)}
ENV = {"docs/devices.md": {"XLA_ARRAY_CPU_DEVICES": "4"}}

_FENCE = re.compile(r"^```(\w*)\s*$")
_ARROW = re.compile(r"^#\s*->\s?(.*)$")
_SEPARATOR = re.compile(r": |; |  ")
_CHECKER = doctest.OutputChecker()
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


# ------------------------------------------------------------------ checker (subprocess side)
def blocks(text: str) -> list[tuple[str, int, int, str]]:
    """The fenced blocks of a Markdown page: (info string, first content line, closing fence
    line, content), lines counted from 1."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        start = i + 1
        end = start
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        out.append((m.group(1), start + 1, end + 1, "\n".join(lines[start:end]) + "\n"))
        i = end + 1
    return out


def says(printed: str, comment: str) -> bool:
    """Whether ``printed`` is what ``comment`` (the text after ``# ->``) says: the whole
    comment, or the comment up to one of its separators."""
    cuts = [len(comment)] + [m.start() for m in _SEPARATOR.finditer(comment)]
    return any(_CHECKER.check_output(comment[:i].strip() + "\n", printed, _FLAGS)
               for i in cuts)


def _expectations(code: str, first: int, where: str) -> tuple[dict, list[str]]:
    """``{(first line, last line) of a print call: (comment line, text)}`` for the ``# ->``
    comments of a block starting at page line ``first``, and the misplaced ones."""
    calls = [(n.lineno + first - 1, n.end_lineno + first - 1)
             for n in ast.walk(ast.parse(code))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"]
    found, errors = {}, []
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        m = _ARROW.match(tok.string) if tok.type == tokenize.COMMENT else None
        if m is None:
            continue
        line = tok.start[0] + first - 1
        around = [c for c in calls if c[0] <= line <= c[1]]
        if not around:
            errors.append(f"{where}:{line}: a '# ->' comment on a line without print()")
            continue
        found[min(around, key=lambda c: c[1] - c[0])] = (line, m.group(1))
    return found, errors


def run_page(path: str, name: str) -> list[str]:
    """Run the python blocks of the page at ``path`` (called ``name`` in messages, tracebacks
    and recorded source lines) in order in one namespace; the failures, in words."""
    with open(path) as f:
        text = f.read()
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    printed: list[tuple[int, str]] = []
    real_print = builtins.print

    def recording_print(*args, sep=" ", end="\n", file=None, flush=False):
        """print, remembering what each call from the page wrote to stdout, by line."""
        if file is not None and file is not sys.stdout:
            real_print(*args, sep=sep, end=end, file=file, flush=flush)
            return
        buf = io.StringIO()
        real_print(*args, sep=sep, end=end, file=buf)
        sys.stdout.write(buf.getvalue())
        caller = sys._getframe(1)
        if caller.f_code.co_filename == name:
            printed.append((caller.f_lineno, buf.getvalue()))

    namespace = {"__name__": "__main__", "print": recording_print}
    failures: list[str] = []
    found = blocks(text)
    for k, (info, first, last, code) in enumerate(found):
        if info != "python":
            continue
        expected, errors = _expectations(code, first, name)
        failures += errors
        del printed[:]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile("\n" * (first - 1) + code, name, "exec"), namespace)
        except BaseException:  # noqa: BLE001 - reported; the later blocks depend on this one
            failures.append(f"{name}:{first}: the block raised\n{traceback.format_exc()}")
            return failures
        for (lo, hi), (line, want) in expected.items():
            got = [t for ln, t in printed if lo <= ln <= hi]
            if not got:
                failures.append(f"{name}:{line}: printed nothing; the page says {want!r}")
            failures += [f"{name}:{line}: printed {t.rstrip()!r}; the page says {want!r}"
                         for t in got if not says(t, want)]
        after = found[k + 1] if k + 1 < len(found) else ("", 0, 0, "")
        shown = after[0] == "text" and after[1] == last + 2  # (its fence: the next line)
        if shown and not _CHECKER.check_output(after[3], out.getvalue(), _FLAGS):
            failures.append(f"{name}:{after[1]}: the block above printed\n{out.getvalue()}"
                            f"which is not what the page shows:\n{after[3]}")
    return failures


def main(page: str) -> int:
    """Check one page (a path); print the failures; 0 when there are none."""
    t0 = time.perf_counter()
    name = os.path.relpath(os.path.abspath(page), ROOT)
    if name.startswith(".."):  # a page outside the repository: its file name
        name = os.path.basename(page)
    failures = run_page(page, name)
    for f in failures:
        print(f)
    print(f"{name}: {len(failures)} failures, {time.perf_counter() - t0:.1f} s")
    return 1 if failures else 0


# ------------------------------------------------------------------ pytest side
def check(page: str, tmp_path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``page`` checked in a subprocess with an empty on-disk cache under ``tmp_path``, and
    every other setting a user's default (not the suite's ``host_first="check"``: the pages
    show what a user sees), on the CPU, which the pages' printed values are written for (on
    a GPU machine too, where the GPU would be the default device)."""
    full_env = dict(os.environ, XLA_ARRAY_CACHE_DIR=str(tmp_path / "cache"),
                    XLA_ARRAY_DEFAULT_DEVICE="cpu", **(env or {}))
    full_env.pop("XLA_ARRAY_HOST_FIRST", None)
    return subprocess.run([sys.executable, os.path.abspath(__file__), page], cwd=tmp_path,
                          env=full_env, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_print_what_the_page_says(page, tmp_path):
    """The page's examples run in order and print what it says (see the module's text)."""
    missing = [m for m in NEEDS.get(page, ()) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{page} needs {', '.join(missing)}")
    proc = check(os.path.join(ROOT, page), tmp_path, ENV.get(page))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_checker_catches_wrong_outputs(tmp_path):
    """A page whose stated outputs are wrong, misplaced or never printed fails, naming the
    lines; right ones (explanations after a separator, ``...``, whitespace) pass."""
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```python\n"
        "x = 2\n"
        "print(x + 1)          # -> 3: an explanation\n"
        "print([x] * 3)        # -> [2,   2, ...]\n"
        "print(x * 10)         # -> 2\n"
        "print(x + 1)          # -> 30 2\n"
        "for i in range(2):\n"
        "    print(i)          # -> 0\n"
        "if x < 0:\n"
        "    print(x)          # -> 2\n"
        "y = x                 # -> 2\n"
        "```\n\n```python\n"
        "print('a')\nprint('b')\n"
        "```\n```text\na\nc\n```\n")
    failures = run_page(str(page), "page.md")
    assert [f.split(":", 2)[1] for f in failures] == ["13", "7", "8", "10", "12", "21"], \
        failures
    assert "printed '20'; the page says '2'" in failures[1]
    assert "printed '3'; the page says '30 2'" in failures[2]  # (a start is not enough)
    assert "printed '1'" in failures[3] and "printed nothing" in failures[4]
    assert "without print()" in failures[0] and "printed\na\nb\n" in failures[5]
    page.write_text("```python\nprint(1)  # -> 1\nraise KeyError('k')\n```\n")
    proc = check(str(page), tmp_path)  # the subprocess path: reported, non-zero status
    assert proc.returncode == 1 and "page.md:2: the block raised" in proc.stdout, proc.stdout
    assert "KeyError: 'k'" in proc.stdout


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
