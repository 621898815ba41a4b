#!/usr/bin/env bash
# Set up argweb in this checkout: its own virtual environment (.venv) with the project installed
# (editable), the browser of the graph page's test, and the embedded-Neo4j launcher built with Maven.
#
# The third-party dependencies (torch and friends, several GB) live once per machine in a base
# environment, ARGWEB_BASE_ENV (default ~/.cache/argweb/base-<hash of the dependency spec and the
# Python version>). It is built from scratch when missing or when the spec changes, from the wheels
# of ARGWEB_WHEELS (default ~/.cache/argweb/wheels; only what is missing there is downloaded), and
# nothing installs into it afterwards. `.venv` is a small environment of this checkout that sees the base's
# packages through a .pth file and holds this checkout's editable install only: two clones on one
# machine share the dependencies (no second download) but never each other's `argweb`.
#
# One line per step; the output of pip, apt, npm and Maven goes to the log named at the end
# (ARGWEB_SETUP_LOG, default .argweb/setup.log).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
LOG=${ARGWEB_SETUP_LOG:-.argweb/setup.log}
mkdir -p "$(dirname "$LOG")"
: >"$LOG"
LOG=$(cd "$(dirname "$LOG")" && pwd)/$(basename "$LOG")

step_start=0
step() { # step TEXT: start a step line (finished by `done_step` or `fail_step`)
    step_start=$SECONDS
    printf 'setup: %s ... ' "$1"
    printf '\n== %s\n' "$1" >>"$LOG"
}
done_step() { echo "${1:-ok} ($((SECONDS - step_start))s)"; }
fail_step() {
    echo "FAILED"
    echo "setup: ${1:-see the log}; the last lines of $LOG:" >&2
    tail -n 25 "$LOG" >&2
    exit 1
}
logged() { "$@" >>"$LOG" 2>&1; }

# -- the shared base environment -------------------------------------------------------------------
# The requirement lines (build requirements, dependencies, dev extras) and their hash.
requirements=$("$PY" - <<'PY'
import sys, tomllib
with open("pyproject.toml", "rb") as fh:
    project = tomllib.load(fh)
lines = [*project["build-system"]["requires"], *project["project"]["dependencies"]]
lines += project["project"].get("optional-dependencies", {}).get("dev", [])
print(f"# python {sys.version.split()[0]}")
print("\n".join(lines))
PY
)
spec_hash=$(printf '%s\n' "$requirements" | sha256sum | cut -c1-16)
BASE=${ARGWEB_BASE_ENV:-"${XDG_CACHE_HOME:-$HOME/.cache}/argweb/base-$spec_hash"}
WHEELS=${ARGWEB_WHEELS:-"${XDG_CACHE_HOME:-$HOME/.cache}/argweb/wheels"}
stamp="$BASE/.argweb-spec"

step "dependencies in $BASE"
if [ -x "$BASE/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$spec_hash" ]; then
    done_step "present"
else
    mkdir -p "$(dirname "$BASE")"
    # Two checkouts setting up at once: the second waits for the first and then reuses its base.
    exec 9>"$BASE.lock"
    flock 9
    if [ -x "$BASE/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$spec_hash" ]; then
        done_step "present"
    else
        printf '(new dependency spec: several minutes) ... '
        rm -rf "$BASE"
        logged "$PY" -m venv "$BASE" || fail_step "could not create $BASE"
        printf '%s\n' "$requirements" | grep -v '^#' >"$BASE/requirements.txt"
        logged "$BASE/bin/pip" install --progress-bar off --upgrade pip || fail_step "pip could not upgrade itself"
        # Every wheel goes through the machine's wheel cache first: a later spec (one dependency more)
        # installs torch and the rest from there instead of downloading them again (the package
        # registry's answers are not kept by pip's own HTTP cache here).
        mkdir -p "$WHEELS"
        logged "$BASE/bin/pip" wheel --progress-bar off --find-links "$WHEELS" -w "$WHEELS" -r "$BASE/requirements.txt" \
            || fail_step "pip could not fetch the dependencies"
        logged "$BASE/bin/pip" install --progress-bar off --no-index --find-links "$WHEELS" -r "$BASE/requirements.txt" \
            || fail_step "pip could not install the dependencies"
        echo "$spec_hash" >"$stamp"
        done_step "installed"
    fi
    exec 9>&-
fi

# -- this checkout's environment -------------------------------------------------------------------
base_site=$("$BASE/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
step "environment .venv of this checkout"
if [ -L .venv ]; then
    rm .venv # the earlier layout linked a shared environment here; only the link goes
fi
if [ -x .venv/bin/python ] && [ "$(cat .venv/.argweb-base 2>/dev/null)" = "$BASE" ]; then
    fresh=0
else
    rm -rf .venv
    logged "$BASE/bin/python" -m venv --without-pip .venv || fail_step "could not create .venv"
    site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    # addsitedir (not a bare path line) so that the base's own .pth files are processed too.
    printf 'import site; site.addsitedir(%s)\n' "'$base_site'" >"$site/_argweb_base.pth"
    # The base's commands (pip, pytest, ruff, mypy, lint-imports ...) run with this checkout's Python,
    # so that they see this checkout's argweb; compiled ones (ruff) are linked as they are.
    for cmd in "$BASE"/bin/*; do
        name=$(basename "$cmd")
        case "$name" in python* | activate* | Activate.ps1) continue ;; esac
        [ -e ".venv/bin/$name" ] && continue
        if [ "$(head -c 2 "$cmd")" = "#!" ] && head -n 1 "$cmd" | grep -q "^#!$BASE/bin/python"; then
            { echo "#!$ROOT/.venv/bin/python"; tail -n +2 "$cmd"; } >".venv/bin/$name"
            chmod +x ".venv/bin/$name"
        else
            ln -s "$cmd" ".venv/bin/$name"
        fi
    done
    echo "$BASE" >.venv/.argweb-base
    fresh=1
fi
# The editable install points .venv at this checkout; redone when the project's metadata changes.
# setuptools warns at each editable install of this layout that folders of the working directory
# named like the packages may shadow them: in a checkout those folders are the packages themselves.
if [ "$fresh" = 1 ] || [ ! -x .venv/bin/argweb ] || [ pyproject.toml -nt .venv/.argweb-editable ]; then
    logged env PYTHONWARNINGS="ignore:Editable installation" \
        .venv/bin/python -m pip install --no-deps --no-build-isolation -e . || fail_step "pip install -e . failed"
    touch .venv/.argweb-editable
    done_step "$([ "$fresh" = 1 ] && echo created || echo "argweb reinstalled")"
else
    done_step "present"
fi

# -- system packages -------------------------------------------------------------------------------
# The browser test of the graph page drives Debian's headless Chromium through chromedriver.
step "chromium and chromedriver (browser test of the explorer)"
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    done_step "present"
elif command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    logged $SUDO apt-get update || fail_step "apt-get update failed"
    logged env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium chromium-driver \
        || fail_step "apt-get install chromium chromium-driver failed"
    done_step "installed with apt"
else
    done_step "missing (no apt-get): the browser test will fail"
fi

# The explorer's and the workbench's scripts are committed built (api/web/static/*.js, Cytoscape.js
# and dagre bundled with esbuild), so no Node is needed to run argweb; rebuild them when npm is
# there and a source is newer.
if command -v npm >/dev/null 2>&1 && { [ ! -f api/web/static/graph.js ] || [ ! -f api/web/static/workbench.js ] \
        || [ -n "$(find api/web/src api/web/package.json -newer api/web/static/graph.js -type f 2>/dev/null)" ]; }; then
    step "explorer and workbench (npm ci && npm run build in api/web)"
    if (cd api/web && logged npm ci --no-audit --no-fund && logged npm run build); then
        done_step
    else
        done_step "failed: the committed build in api/web/static is used"
    fi
fi

# -- the embedded Neo4j ----------------------------------------------------------------------------
step "embedded Neo4j launcher"
logged .venv/bin/python - <<'PY' || fail_step "the launcher build failed"
from graphstore.runtime import build_class_archive, build_launcher, class_archive, launcher_built
if not launcher_built():
    print("building the embedded Neo4j launcher with Maven (and recording its class archive)")
    build_launcher(quiet=False, log=print)
elif not class_archive().is_file():
    # Builds from before the archive existed; a third off every later Neo4j start.
    print("recording the launcher's class archive (one Neo4j start)")
    build_class_archive()
else:
    print("built")
PY
done_step "$(tail -n 1 "$LOG" | grep -q '^built$' && echo present || echo built)"
echo "setup: ok (log: $LOG)"
