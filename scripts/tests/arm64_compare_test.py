#!/usr/bin/env python3
"""Generated results directories for scripts/arm64-lab/compare.py: the net instructions it reads must follow the
repetitions that agree. A clock read's longer path (the vDSO's carry past a second boundary) can hold a whole
repetition of lw or lttng-ust at a few instructions more; with one such repetition among three to five the
comparison must pass, and where most repetitions (or all calls) differ from the single-stepper it must fail.
Run: python3 scripts/tests/arm64_compare_test.py (exits 1 on the first failure)."""
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("compare", os.path.join(HERE, "..", "arm64-lab", "compare.py"))
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)

# Net instructions per call of each tracer, and the windows' own instructions around the call.
NET = {"none": 0, "lw": 94, "lttng-ust": 994, "printf": 1147}
WINDOW = {"pmu": 86, "pmu-read": 2663, "step": 13}


def write_run(d, run, reps, n, shifted, column, how):
    """RUN/<tracer>/events.csv with `reps` repetitions of `n` calls; shifted[(tracer, rep)] adds instructions."""
    for t, net in NET.items():
        os.makedirs(os.path.join(d, run, t), exist_ok=True)
        with open(os.path.join(d, run, t, "events.csv"), "w") as f:
            f.write(f"tracer,threads,thread,cpu,iteration,latency_ns,{column},repetition,counter_set,t_ns\n")
            for r in range(reps):
                for i in range(n):
                    v = WINDOW[run] + net + shifted.get((t, r), 0)
                    f.write(f"{t},1,0,0,{i},100.0,{v},{r},1,{i * 800}\n")
    if how:
        with open(os.path.join(d, run, "run.json"), "w") as f:
            json.dump({"counters": {"read": how}}, f)


def verdict(shifted_pmu, shifted_step, reps):
    with tempfile.TemporaryDirectory() as d:
        write_run(d, "pmu", reps, 50, shifted_pmu, "instructions", "rdpmc")
        write_run(d, "step", 1, 50, shifted_step, "user_instructions", None)
        sys.argv = ["compare.py", d]
        out = io.StringIO()
        with redirect_stdout(out):
            rc = compare.main()
        return rc, out.getvalue()


def main():
    rng = random.Random(0xA64)
    cases = 0
    for _ in range(60):
        reps = rng.randint(3, 5)
        tracer = rng.choice(["lw", "lttng-ust"])
        carry = rng.randint(3, 20)
        # One repetition on the longer path: the others hold the mode, so the nets agree.
        one = {(tracer, rng.randrange(reps)): carry}
        rc, out = verdict(one, {}, reps)
        if rc != 0:
            print(f"FAIL one repetition of {reps} shifted by {carry} on {tracer} failed the comparison:\n{out}")
            return 1
        # Most repetitions shifted: the stepped count is no longer the PMU's mode, and that is a disagreement.
        most = {(tracer, r): carry for r in rng.sample(range(reps), reps // 2 + 1)}
        rc, out = verdict(most, {}, reps)
        if rc == 0:
            print(f"FAIL {reps // 2 + 1} of {reps} repetitions shifted by {carry} on {tracer} passed:\n{out}")
            return 1
        # The single-stepped run itself off by more than the tolerance: a disagreement.
        rc, out = verdict({}, {(tracer, 0): carry}, reps)
        if rc == 0:
            print(f"FAIL the stepped run shifted by {carry} on {tracer} passed:\n{out}")
            return 1
        cases += 3
    print(f"arm64_compare_test: {cases} generated results directories judged as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
