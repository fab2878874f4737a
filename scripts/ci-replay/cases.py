"""The replay's cases (replay.py's docstring lists them) and what each checks. A case returns the
problems it found, one line each; none means it passed."""
import os
import subprocess

from workflow import Job

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GATE = "tracebench-gate.yml"


def load(name):
    import yaml

    with open(os.path.join(ROOT, "scripts", "ci-example", name)) as f:
        return yaml.safe_load(f)


INSTALL = "Install tracebench (only when the cache has no build of this commit)"


def steps_pass(job, allow=(), may_skip=()):
    """Every step ran and passed, but those in may_skip, which may be skipped by their `if:`, and
    those in allow, which the case checks itself."""
    bad = []
    for label, result, rc, note in job.results:
        if label in allow or (result == "skipped" and label in may_skip):
            continue
        if result != "success":
            bad.append(f"step {label!r}: {result} (exit {rc}, {note})")
    return bad


def same_file(job, recorded, produced, what):
    rec, out = os.path.join(job.records, recorded), os.path.join(job.workspace, produced)
    if not os.path.isfile(rec):
        return [f"{what}: nothing recorded ({recorded})"]
    if open(rec, "rb").read() != open(out, "rb").read():
        return [f"{what}: the recorded body is not {produced}"]
    return []


def artifact_holds(job, name, members):
    tar = job.artifacts.get(name)
    if not tar:
        return [f"artifact {name}: not uploaded"]
    listed = subprocess.run(["tar", "-tf", tar], capture_output=True, text=True, check=True).stdout.split()
    return [f"artifact {name}: no {m}" for m in members if m not in listed]


def owned_by_runner(job, rel):
    st = os.stat(os.path.join(job.workspace, rel))
    if st.st_uid != job.env.user.uid:
        return [f"{rel} is owned by uid {st.st_uid}, not the runner user's {job.env.user.uid} (SUDO_UID)"]
    return []


def cache_key(env):
    return f"tracebench-Linux-{{}}-{env.tb_sha}"


def gate_job(env, job_id, head, case, cache_hit):
    env.head_sha = env.heads[head]
    wf = load(GATE)
    job = Job(env, wf, job_id, case)
    key = cache_key(env).format(job.ctx["runner"]["arch"])
    env.cache = {key: env.prebuilt} if cache_hit else {}
    job.run()
    install = job.result(INSTALL)
    problems = []
    if cache_hit and install[1] != "skipped":
        problems.append(f"cache hit on {key}, yet the install step was {install[1]}")
    if not cache_hit and (install[1] != "success" or job.saved_keys != [key]):
        problems.append(f"cache miss: install step {install[1]}, saved under {job.saved_keys}, expected [{key}]")
    problems += same_file(job, f"comment-{env.pr_number}.md", "gate.md", "the PR comment")
    return job, problems


def instructions_noop(env):
    job, problems = gate_job(env, "instructions", "noop", "instructions-noop", cache_hit=True)
    problems += steps_pass(job, may_skip=(INSTALL,))
    if job.steps.get("gate", {}).get("outputs", {}).get("rc") != "0":
        problems.append(f"gate rc {job.steps.get('gate')}, expected 0 on a no-op change")
    problems += artifact_holds(job, "tracebench-gate-instructions",
                               ["gate.md", "gate.xml", "gate.json", "base-run/run.json", "head-run/run.json"])
    problems += owned_by_runner(job, "base-run") + owned_by_runner(job, "head-run/run.json")
    return problems


def instructions_work(env):
    job, problems = gate_job(env, "instructions", "work", "instructions-work", cache_hit=False)
    problems += steps_pass(job, allow=("Verdict",))
    verdict = job.result("Verdict")
    if (verdict[1], verdict[2]) != ("failure", 1):
        problems.append(f"Verdict step: {verdict[1]} exit {verdict[2]}, expected failure exit 1 on added work")
    if job.steps.get("gate", {}).get("outputs", {}).get("rc") != "1":
        problems.append(f"gate rc {job.steps.get('gate')}, expected 1 on a plugin that adds work")
    problems += artifact_holds(job, "tracebench-gate-instructions", ["gate.md", "base-run/run.json"])
    return problems


def timed_noop(env):
    """Runs as written on this machine; the verdict of its timings is not judged (a shared VM, not
    the quiet self-hosted runner the job is for), only that it is a verdict (0 or 1) and that the
    Verdict step reports it."""
    job, problems = gate_job(env, "timed", "noop", "timed-noop", cache_hit=True)
    problems += steps_pass(job, allow=("Verdict",), may_skip=(INSTALL,))
    rc = job.steps.get("gate", {}).get("outputs", {}).get("rc")
    verdict = job.result("Verdict")
    if rc not in ("0", "1") or verdict[2] != int(rc):
        problems.append(f"timed gate rc {rc!r}, Verdict step exit {verdict[2]}: expected a verdict, 0 or 1, passed on")
    else:
        print(f"ci-replay: timed gate on this machine (not judged): exit {rc}")
    problems += artifact_holds(job, "tracebench-gate-timed", ["gate.md", "gate.json"])
    return problems


def bencher(env):
    import json

    env.head_sha = env.heads["noop"]
    wf = load("tracebench-bencher.yml")
    runner = wf["jobs"]["bench"]["strategy"]["matrix"]["runner"][0]
    others = wf["jobs"]["bench"]["strategy"]["matrix"]["runner"][1:]
    # One matrix entry: the others are the same steps on another self-hosted machine.
    print(f"ci-replay: not replayed: matrix runner={', '.join(others)} (the same steps, another machine)")
    job = Job(env, wf, "bench", "bencher", matrix={"runner": runner}).run()
    problems = steps_pass(job)
    rec = os.path.join(job.records, f"bencher-{runner}.json")
    if not os.path.isfile(rec):
        return problems + ["no BMF file reached the bencher stub"]
    bmf = json.load(open(rec))
    if not bmf or not all(k.startswith("tracebench/") and "latency" in v for k, v in bmf.items()):
        problems.append(f"the BMF file is not tracebench/<tracer>/threads=<n> -> latency: {sorted(bmf)[:3]}")
    return problems + artifact_holds(job, f"tracebench-{runner}", ["results/run.json"])


def action_benchmark(env):
    env.head_sha = env.heads["noop"]
    job = Job(env, load("tracebench-github-action-benchmark.yml"), "bench", "github-action-benchmark").run()
    problems = steps_pass(job)
    if not job.records_seen.get("benchmark"):
        problems.append("github-action-benchmark's stand-in saw no entries")
    return problems


CASES = [instructions_noop, instructions_work, timed_noop, bencher, action_benchmark]
