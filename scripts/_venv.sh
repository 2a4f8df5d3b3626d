# Sourced by demo.sh and test.sh (which set SCRIPT): find the interpreter, create the virtual
# environment once, and install xla_array into it (editable) only when what that install
# depends on changed. `setup_venv EXTRA` ("" or "[test]") leaves its interpreter in VENV_PY.
# PYTHON picks the interpreter (a command or a path; default python3), VENV the folder
# (default .venv<major><minor>).

say() { echo "$SCRIPT: $*" >&2; }

find_python() {
    PY=${PYTHON:-python3}
    if ! "$PY" -c 'import sys' >/dev/null 2>&1; then
        local found=""
        # a pyenv shim whose version is installed but not active: take the installed one
        if [[ "$PY" != */* ]] && command -v pyenv >/dev/null 2>&1; then
            found=$(ls -d "$(pyenv root)"/versions/*/bin/"$PY" 2>/dev/null | sort -V | tail -n 1 ||
                    true)
        fi
        if [ -z "$found" ] || ! "$found" -c 'import sys' >/dev/null 2>&1; then
            say "cannot run PYTHON=$PY; set PYTHON to an interpreter's path" \
                "(e.g. PYTHON=/usr/bin/python3.12) or make that version active"
            exit 2
        fi
        say "$PY is not active in pyenv: using $found"
        PY=$found
    fi
    if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        say "$PY is Python $("$PY" -c 'import platform; print(platform.python_version())');" \
            "xla_array needs 3.11 or newer: set PYTHON"
        exit 2
    fi
}

# what the editable install depends on: the build files and the native code it builds (the
# graph's C core, the kernels), and whether the built libraries are still there
install_state() {
    cat pyproject.toml setup.py xla_array/core/graphcore.c xla_array/kernels/native/* | cksum
    ls xla_array/core/_graphcore.cpython-"$1"-*.so xla_array/kernels/_*.cpython-"$1"-*.so \
        2>/dev/null || true
}

# The dependencies (with EXTRA's) and setuptools first, then xla_array itself with
# --no-build-isolation: setup.py builds the native kernels against the FFI header of the jaxlib
# they will run with (the one just installed here), and a rebuild after a change to the C code
# takes seconds instead of installing jaxlib into a fresh isolated build environment each time
# (a plain `pip install` does that: jaxlib is in [build-system] requires).
install() {
    local extra=$1 deps
    deps=$("$VENV_PY" - "$extra" <<'PY'
import sys, tomllib
p = tomllib.load(open("pyproject.toml", "rb"))
deps = p["project"]["dependencies"] + p["build-system"]["requires"]
extra = sys.argv[1].strip("[]")
if extra:
    deps += p["project"]["optional-dependencies"][extra]
print("\n".join(deps))
PY
)
    # (one requirement a line: word splitting on newlines only keeps "a>=1,<2" whole)
    local IFS=$'\n'
    # shellcheck disable=SC2086
    "$VENV_PY" -m pip install -q --disable-pip-version-check $deps
    "$VENV_PY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
        -e .
}

setup_venv() {
    local extra=$1 tag files have
    find_python
    tag=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
    VENV=${VENV:-.venv$tag}
    if [ ! -x "$VENV/bin/python" ]; then
        say "creating the virtual environment $VENV with $PY (once)"
        "$PY" -m venv "$VENV"
    fi
    VENV_PY=$VENV/bin/python
    files=$(install_state "$tag")
    have=$(cat "$VENV/.xla_array-install" 2>/dev/null || true)
    # up to date: installed from these files, with this extra or the test one (a superset)
    if [ "$have" = "$files"$'\n'"extra=$extra" ] || [ "$have" = "$files"$'\n'"extra=[test]" ]
    then
        return
    fi
    say "installing xla_array$extra and its dependencies into $VENV with pip (a minute or" \
        "more the first time, to download jaxlib; seconds after a change to pyproject.toml," \
        "setup.py or the native code)"
    install "$extra"
    printf '%s\nextra=%s\n' "$(install_state "$tag")" "$extra" > "$VENV/.xla_array-install"
}
