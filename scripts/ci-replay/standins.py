"""Local stand-ins for the `uses:` actions of the example workflows, and the stub commands (gh,
cargo, bencher) a runner would have. Each stand-in accepts only the inputs it knows, so an input
added to an example fails the replay until the stand-in learns what it means.

What each one does, and what it proves:
  actions/checkout       a `git clone` of the PR's tracer repository (the fixture) at the PR head or
                         at `ref`, or, for `repository: vars.TRACEBENCH_REPO`, of this tracebench
                         checkout at its HEAD; owned by the runner user, as on GitHub.
  actions/cache          a hit restores the release binary built here (target/release/tracebench)
                         under the key tracebench's commit makes; a miss restores nothing, and the
                         post-job save keeps the path under the key (the replay checks the key).
  actions/upload-artifact  `tar` of the listed paths AS THE RUNNER USER: a results directory left
                         root-owned by a sudo step fails here (`Cannot open: Permission denied`),
                         as the real upload did before results made under sudo went to SUDO_UID.
  mikepenz/action-junit-report  the report read as the runner user and parsed as XML.
  bencherdev/bencher     puts the `bencher` stub on PATH.
  benchmark-action/github-action-benchmark  the output file read as the runner user, checked to
                         be customSmallerIsBetter JSON (a list of name/unit/value).
"""
import glob
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

GH_STUB = r"""#!/bin/bash
# gh stand-in (ci-replay): records the body of `gh pr comment N --repo R --body-file F`.
set -eu
[ "${1:-} ${2:-}" = "pr comment" ] || { echo "gh stub: only 'gh pr comment' is stood in, got: gh $*" >&2; exit 1; }
[ -n "${GH_TOKEN:-}" ] || { echo "gh stub: GH_TOKEN is empty; gh needs it on a runner" >&2; exit 1; }
pr=${3:-}; shift 3; repo= body=
while [ $# -gt 0 ]; do
  case $1 in
    --repo) repo=$2; shift 2 ;;
    --body-file) body=$2; shift 2 ;;
    *) echo "gh stub: unexpected argument $1" >&2; exit 1 ;;
  esac
done
[[ $pr =~ ^[0-9]+$ ]] || { echo "gh stub: PR number '$pr' is not a number" >&2; exit 1; }
[[ $repo == */* ]] || { echo "gh stub: --repo '$repo' is not owner/name" >&2; exit 1; }
cp -- "$body" "@RECORDS@/comment-$pr.md"
echo "gh stub: comment on $repo#$pr recorded ($(wc -c < "$body") bytes)"
"""

# A real `cargo install` of tracebench takes about 10 minutes on a 2-core machine (longer as an
# unprivileged user with a cold registry): the stub checks the command's shape and what it points
# at, then installs the binary already built here.
CARGO_STUB = r"""#!/bin/bash
# cargo stand-in (ci-replay): `cargo install --locked --path DIR` installs the prebuilt tracebench.
set -eu
[ "${1:-} ${2:-} ${3:-}" = "install --locked --path" ] && [ $# -eq 4 ] \
  || { echo "cargo stub: expected 'cargo install --locked --path DIR', got: cargo $*" >&2; exit 1; }
grep -q '^name = "tracebench"$' "$4/Cargo.toml" || { echo "cargo stub: $4 is not tracebench's harness crate" >&2; exit 1; }
[ -f "$4/../Cargo.lock" ] || { echo "cargo stub: --locked, but $4/../Cargo.lock is missing" >&2; exit 1; }
mkdir -p "$HOME/.cargo/bin"
cp "@PREBUILT@" "$HOME/.cargo/bin/tracebench.tmp" && mv "$HOME/.cargo/bin/tracebench.tmp" "$HOME/.cargo/bin/tracebench"
echo "cargo stub: installed the prebuilt tracebench from $4 into ~/.cargo/bin"
"""

BENCHER_STUB = r"""#!/bin/bash
# bencher stand-in (ci-replay): checks `bencher run ... --adapter json --file F` and records F.
set -eu
[ "${1:-}" = run ] || { echo "bencher stub: only 'bencher run' is stood in" >&2; exit 1; }
[ -n "${BENCHER_API_TOKEN:-}" ] || { echo "bencher stub: BENCHER_API_TOKEN is empty" >&2; exit 1; }
shift; adapter= file= testbed=
while [ $# -gt 0 ]; do
  case $1 in
    --adapter) adapter=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    --testbed) testbed=$2; shift 2 ;;
    --project|--branch|--host) shift 2 ;;
    --err) shift ;;
    *) echo "bencher stub: unexpected argument $1" >&2; exit 1 ;;
  esac
done
[ "$adapter" = json ] || { echo "bencher stub: --adapter is '$adapter', not json" >&2; exit 1; }
[ -n "$testbed" ] || { echo "bencher stub: no --testbed" >&2; exit 1; }
cp -- "$file" "@RECORDS@/bencher-$testbed.json"
echo "bencher stub: $file recorded for testbed $testbed"
"""


class StandinError(Exception):
    pass


def write_stub(path, text, owner, **subst):
    for k, v in subst.items():
        text = text.replace(f"@{k}@", v)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    os.chown(path, *owner)


def chown_tree(path, owner):
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), *owner)
    os.lchown(path, *owner)


def known(uses, inputs, allowed):
    extra = set(inputs) - set(allowed)
    if extra:
        raise StandinError(f"{uses}: the stand-in does not know the input(s) {sorted(extra)}")


def checkout(job, inputs):
    known("actions/checkout", inputs, {"path", "ref", "repository"})
    dest = os.path.normpath(os.path.join(job.workspace, inputs.get("path", ".")))
    if not dest.startswith(job.workspace):
        raise StandinError(f"actions/checkout: path {inputs['path']!r} leaves the workspace")
    repo = inputs.get("repository")
    if repo:
        if repo != job.ctx["vars"]["TRACEBENCH_REPO"]:
            raise StandinError(f"actions/checkout: no stand-in for repository {repo!r}")
        src, ref, depth = f"file://{job.env.tb_src}", job.env.tb_sha, ["--depth", "1"]
    else:
        src, ref, depth = job.env.tracer_repo, inputs.get("ref") or job.env.head_sha, []
    os.makedirs(dest, exist_ok=True)
    # Root clones, then hands the tree to the runner user: safe.directory, for a workspace root the
    # runner user already owns (git refuses to work as root in another user's directory).
    git = ["git", "-c", f"safe.directory={dest}"]
    subprocess.run([*git, "clone", "--quiet", "--no-hardlinks", *depth, src, dest], check=True)
    subprocess.run([*git, "-C", dest, "checkout", "--quiet", "--detach", ref], check=True)
    chown_tree(dest, job.owner)
    print(f"  | checked out {repo or 'the tracer (fixture)'} at {ref[:12]} into {os.path.relpath(dest, job.workspace)}")
    return {}


def cache(job, inputs):
    known("actions/cache", inputs, {"path", "key"})
    path = inputs["path"]
    path = job.env.home + path[1:] if path.startswith("~/") else os.path.join(job.workspace, path)
    key = inputs["key"]
    hit = job.env.cache.get(key)
    if hit:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy2(hit, path)
        chown_tree(os.path.join(job.env.home, ".cargo"), job.owner)
        print(f"  | cache hit on {key}: restored {inputs['path']}")
        return {"cache-hit": "true"}
    print(f"  | cache miss on {key}")
    job.post.append(lambda: cache_save(job, key, path))
    return {"cache-hit": ""}


def cache_save(job, key, path):
    """The post-job half of actions/cache: after a miss, keep the path under the key."""
    if os.path.isfile(path):
        job.saved_keys.append(key)
        print(f"  | post-job: cache saved {path} under {key}")


def upload_artifact(job, inputs):
    known("actions/upload-artifact", inputs, {"name", "path"})
    paths = [p for p in inputs["path"].split("\n") if p.strip()]
    there = [p.strip() for p in paths if os.path.lexists(os.path.join(job.workspace, p.strip()))]
    for p in paths:
        if p.strip() not in there:
            print(f"  | warning: no file at {p.strip()} (upload-artifact warns and goes on)")
    out = os.path.join(job.runner_temp, f"artifact-{inputs['name']}.tar")
    r = job.as_runner(["tar", "-cf", out, "--", *there])
    if r != 0:
        return r
    job.artifacts[inputs["name"]] = out
    print(f"  | artifact {inputs['name']}: {len(there)} paths, tarred as the runner user")
    return {}


def junit_report(job, inputs):
    known("mikepenz/action-junit-report", inputs, {"report_paths", "check_name"})
    files = sorted(glob.glob(os.path.join(job.workspace, inputs["report_paths"])))
    if not files:
        raise StandinError(f"junit report: no file matches {inputs['report_paths']}")
    for f in files:
        text = job.read_as_runner(f)
        try:
            root = ET.fromstring(text)
        except ET.ParseError as e:
            print(f"  | {os.path.basename(f)} is not valid XML: {e}")
            return 1
        cases = root.iter("testcase")
        n = sum(1 for _ in cases)
        failed = sum(1 for c in root.iter("testcase") if c.find("failure") is not None)
        print(f"  | {os.path.basename(f)}: valid XML, {n} test cases, {failed} failed ({inputs['check_name']})")
        if n == 0:
            print("  | no test case in the report")
            return 1
    return {}


def bencher_cli(job, inputs):
    known("bencherdev/bencher", inputs, set())
    write_stub(os.path.join(job.tools, "bencher"), BENCHER_STUB, job.owner, RECORDS=job.records)
    print("  | bencher stub on PATH")
    return {}


def github_action_benchmark(job, inputs):
    allowed = {"name", "tool", "output-file-path", "benchmark-data-dir-path", "github-token", "auto-push",
               "alert-threshold", "comment-on-alert", "fail-on-alert"}
    known("benchmark-action/github-action-benchmark", inputs, allowed)
    if inputs["tool"] != "customSmallerIsBetter":
        raise StandinError(f"github-action-benchmark: tool {inputs['tool']!r} is not stood in")
    entries = json.loads(job.read_as_runner(os.path.join(job.workspace, inputs["output-file-path"])))
    bad = [e for e in entries if not (isinstance(e.get("name"), str) and isinstance(e.get("value"), (int, float))
                                      and isinstance(e.get("unit"), str))]
    if not entries or bad:
        print(f"  | {inputs['output-file-path']}: {len(entries)} entries, {len(bad)} without name/unit/value")
        return 1
    print(f"  | {inputs['output-file-path']}: {len(entries)} customSmallerIsBetter entries, e.g. {entries[0]['name']}")
    job.records_seen["benchmark"] = entries
    return {}


STANDINS = {
    "actions/checkout": checkout,
    "actions/cache": cache,
    "actions/upload-artifact": upload_artifact,
    "mikepenz/action-junit-report": junit_report,
    "bencherdev/bencher": bencher_cli,
    "benchmark-action/github-action-benchmark": github_action_benchmark,
}


def run(job, uses, inputs):
    """-> the step's outputs (a dict), or a non-zero exit status."""
    name = uses.split("@")[0]
    if name not in STANDINS:
        raise StandinError(f"no stand-in for {uses} (scripts/ci-replay/standins.py)")
    return STANDINS[name](job, inputs)
