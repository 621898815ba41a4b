#!/usr/bin/env bash
# Set up argweb on this machine: a Python virtual environment with every dependency, the project
# installed in it (editable), and the embedded-Neo4j launcher built with Maven.
#
# The environment lives outside the checkout (ARGWEB_VENV, default ~/.cache/argweb/venv-<hash of
# the dependency spec>) so that clones with the same dependencies reuse it; it is rebuilt from
# scratch when missing or when the dependency spec changes. `.venv` in the checkout links to it.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
spec_hash=$(sed -n '/^dependencies = \[/,/^\]/p;/^dev = \[/,/^\]/p;/^requires-python/p' pyproject.toml | sha256sum | cut -c1-16)
VENV=${ARGWEB_VENV:-"$HOME/.cache/argweb/venv-$spec_hash"}
stamp="$VENV/.argweb-spec"

if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$spec_hash" ]; then
    echo "setup: reusing $VENV"
    "$VENV/bin/pip" install -q --no-deps --no-build-isolation -e .
else
    echo "setup: creating $VENV (first time: downloads torch and friends, a few minutes)"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip setuptools wheel
    "$VENV/bin/pip" install -q -e ".[dev]"
    echo "$spec_hash" > "$stamp"
fi

if [ -L .venv ] || [ ! -e .venv ]; then
    ln -sfn "$VENV" .venv
fi

# The browser test of the explorer drives Debian's headless Chromium through chromedriver.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing chromium and chromium-driver (browser test of the explorer)"
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver
    else
        echo "setup: warning: chromium/chromedriver are missing and there is no apt-get; the browser test will fail" >&2
    fi
fi

# The explorer's and the workbench's scripts are committed built (api/web/static/*.js, Cytoscape.js
# and dagre bundled with esbuild), so no Node is needed to run argweb; rebuild them when npm is
# there and a source is newer.
if command -v npm >/dev/null 2>&1 && { [ ! -f api/web/static/graph.js ] || [ ! -f api/web/static/workbench.js ] \
        || [ -n "$(find api/web/src api/web/package.json -newer api/web/static/graph.js -type f 2>/dev/null)" ]; }; then
    echo "setup: building the explorer and the workbench (npm ci && npm run build in api/web)"
    (cd api/web && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent) \
        || echo "setup: warning: could not rebuild api/web/static; the committed build is used" >&2
fi

"$VENV/bin/python" - <<'PY'
from graphstore.runtime import build_class_archive, build_launcher, class_archive, launcher_built
if not launcher_built():
    print("setup: building the embedded Neo4j launcher with Maven (and recording its class archive)")
    build_launcher()
elif not class_archive().is_file():
    # Builds from before the archive existed; a third off every later Neo4j start.
    print("setup: recording the launcher's class archive (one Neo4j start)")
    build_class_archive()
print("setup: ok")
PY
