#!/usr/bin/env bash
# make docs-examples: refresh the console examples of README.md and the user guide from real runs,
# one fresh directory per page (scripts/docs_examples.py), then name the machine on each page.
# Review the diff and commit it; harness/tests/doc_examples.rs checks the pages against the binary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/target/release/tracebench}
cd "$root"
# The pages whose console blocks run here (docs/plugins.md's and the README's plugin block are
# console,ignore: they need a shell and a compiler).
pages=(README.md docs/getting-started.md docs/choosing.md docs/tracers.md docs/history.md)
python3 scripts/docs_examples.py "$BIN" "${pages[@]}"
git --no-pager diff --stat -- "${pages[@]}" || true
