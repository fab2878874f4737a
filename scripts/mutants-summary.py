#!/usr/bin/env python3
"""The figure of a cargo-mutants run: mutants caught out of the viable ones (those that build),
and the ones missed, from DIR/outcomes.json (scripts/mutants.sh; docs/testing.md).

    python3 scripts/mutants-summary.py target/mutants/mutants.out
"""
import json
import os
import sys


def main(argv):
    d = argv[0] if argv else "target/mutants/mutants.out"
    try:
        data = json.load(open(os.path.join(d, "outcomes.json")))
    except (OSError, ValueError) as e:
        print(f"error: cannot read {d}/outcomes.json: {e} (fix: run scripts/mutants.sh first)", file=sys.stderr)
        return 2
    kinds = {}
    missed = []
    for o in data["outcomes"]:
        sc = o["scenario"]
        if not isinstance(sc, dict) or "Mutant" not in sc:
            continue
        kinds[o["summary"]] = kinds.get(o["summary"], 0) + 1
        if o["summary"] == "MissedMutant":
            missed.append(sc["Mutant"]["name"])
    caught = kinds.get("CaughtMutant", 0) + kinds.get("Timeout", 0)
    viable = caught + kinds.get("MissedMutant", 0)
    for m in missed:
        print(f"  missed: {m}")
    pct = 100.0 * caught / viable if viable else float("nan")
    print(
        f"mutants: {caught} caught of {viable} viable ({pct:.1f}%); {kinds.get('MissedMutant', 0)} missed, "
        f"{kinds.get('Timeout', 0)} timed out (counted as caught), {kinds.get('Unviable', 0)} unviable"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
