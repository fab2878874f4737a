#!/usr/bin/env bash
# make docs-examples: refresh the console examples of README.md and the user guide from real runs,
# one fresh directory per page (scripts/docs_examples.py), then name the machine on each page.
# Review the diff and commit it; harness/tests/doc_examples.rs checks the pages against the binary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/target/release/tracebench}
cd "$root"
# Every page with a console block (console,ignore blocks are left as they are: the plugin blocks
# need a shell and a compiler).
mapfile -t pages < <(grep -l '^```console$' README.md docs/*.md)
python3 scripts/docs_examples.py "$BIN" "${pages[@]}"
git --no-pager diff --stat -- "${pages[@]}" || true
