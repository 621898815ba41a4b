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

"$VENV/bin/python" - <<'PY'
from graphstore.runtime import build_launcher, launcher_built
if not launcher_built():
    print("setup: building the embedded Neo4j launcher with Maven")
    build_launcher()
print("setup: ok")
PY
