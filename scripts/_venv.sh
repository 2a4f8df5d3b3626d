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

# what the editable install depends on: the build files, the graph's C core and its build
install_state() {
    cat pyproject.toml setup.py xla_array/core/graphcore.c | cksum
    ls xla_array/_graphcore.cpython-"$1"-*.so 2>/dev/null || true
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
        "setup.py or the C core)"
    "$VENV_PY" -m pip install -q --disable-pip-version-check -e ".$extra"
    printf '%s\nextra=%s\n' "$(install_state "$tag")" "$extra" > "$VENV/.xla_array-install"
}
