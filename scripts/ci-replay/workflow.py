"""One job of a workflow, replayed: its steps in order, as GitHub's runner runs them.

`run:` steps: `${{ }}` substituted, then `bash --noprofile --norc -eo pipefail FILE` (GitHub's
`shell: bash`) as the runner user, in the workspace, with the job's and the step's `env:`, and a
fresh $GITHUB_OUTPUT file whose `key=value` (and `key<<DELIM` ... `DELIM`) lines become
`steps.<id>.outputs`. `uses:` steps: standins.py. `if:` conditions: expr.py; a failed step
skips the later steps whose condition does not name always() or failure(). After the steps, the
post-job work (actions/cache's save) runs.
"""
import glob
import hashlib
import os
import platform
import subprocess
import sys
import threading
import time

import expr
import standins

ARCH = {"x86_64": "X64", "aarch64": "ARM64"}
JOB_KEYS = {"runs-on", "timeout-minutes", "steps", "strategy", "env", "permissions"}
STEP_KEYS = {"name", "id", "if", "run", "uses", "with", "env", "shell"}


class Job:
    def __init__(self, env, workflow, job_id, case, matrix=None):
        """env: the replay's shared state (user, fixture, cache); case: a short name for the
        directories; matrix: the one matrix entry replayed."""
        self.env, self.wf, self.job_id, self.case = env, workflow, job_id, case
        self.spec = workflow["jobs"][job_id]
        # timeout-minutes, as GitHub applies it: the job's steps together, then the step is ended.
        self.deadline = time.monotonic() + 60 * float(self.spec.get("timeout-minutes", 360))
        self.owner = (env.user.uid, env.user.gid)
        base = os.path.join(env.home, "jobs", case)
        self.workspace = os.path.join(base, "work")
        self.runner_temp = os.path.join(base, "temp")
        self.tools = os.path.join(base, "tools")
        self.records = os.path.join(base, "records")
        for d in (self.workspace, self.runner_temp, self.tools, self.records):
            os.makedirs(d)
        os.chown(os.path.dirname(base), *self.owner)
        standins.chown_tree(base, self.owner)
        # A fresh runner per job: no tracebench installed, cargo (the stub) where rustup puts it.
        cargo_bin = os.path.join(env.home, ".cargo", "bin")
        if os.path.isdir(cargo_bin):
            for n in os.listdir(cargo_bin):
                os.unlink(os.path.join(cargo_bin, n))
        standins.write_stub(os.path.join(cargo_bin, "cargo"), standins.CARGO_STUB, self.owner, PREBUILT=env.prebuilt)
        standins.chown_tree(os.path.join(env.home, ".cargo"), self.owner)
        standins.write_stub(os.path.join(self.tools, "gh"), standins.GH_STUB, self.owner, RECORDS=self.records)
        self.failed = False
        self.results = []  # (step name, "success" | "failure" | "skipped", exit status or None, note)
        self.steps = {}
        self.post, self.saved_keys, self.artifacts, self.records_seen = [], [], {}, {}
        self.matrix = matrix or {}
        self.ctx = {
            "github": {
                "event": {"pull_request": {"number": env.pr_number, "base": {"sha": env.base_sha},
                                           "head": {"sha": env.head_sha}}},
                "token": "ghs_replay_token",
                "repository": env.repository,
                "sha": env.head_sha,
            },
            "vars": {"TRACEBENCH_REPO": env.tracebench_repo},
            "secrets": {"BENCHER_API_TOKEN": "replay-bencher-token", "GITHUB_TOKEN": "ghs_replay_token"},
            "runner": {"os": "Linux", "arch": ARCH.get(platform.machine(), platform.machine()),
                       "temp": self.runner_temp},
            "matrix": self.matrix,
            "steps": self.steps,
            "env": {},
            "__status__": self.status,
            "__hashfiles__": self.hash_files,
        }

    def status(self, name):
        return {"always": True, "success": not self.failed, "failure": self.failed, "cancelled": False}[name]

    def hash_files(self, patterns):
        h, found = hashlib.sha256(), False
        for pat in patterns:
            for f in sorted(glob.glob(os.path.join(self.workspace, pat), recursive=True)):
                if os.path.isfile(f):
                    found = True
                    with open(f, "rb") as fh:
                        h.update(hashlib.sha256(fh.read()).digest())
        return h.hexdigest() if found else ""

    def runner_env(self, extra):
        home = self.env.home
        path = f"{home}/.cargo/bin:{self.tools}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        e = {"HOME": home, "USER": self.env.user.name, "LOGNAME": self.env.user.name, "SHELL": "/bin/bash",
             "PATH": path, "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true",
             "GITHUB_WORKSPACE": self.workspace, "GITHUB_REPOSITORY": self.env.repository,
             "GITHUB_EVENT_NAME": "pull_request", "RUNNER_TEMP": self.runner_temp, "RUNNER_OS": "Linux",
             "RUNNER_ARCH": self.ctx["runner"]["arch"]}
        e.update(extra)
        return e

    def as_runner(self, argv, env=None):
        """Runs argv as the runner user in the workspace, its output indented; -> exit status. Its own
        session, so that Ctrl-C here ends it and its children (sudo's too) by their process group."""
        p = subprocess.Popen(argv, cwd=self.workspace, env=env or self.runner_env({}), user=self.env.user.uid,
                             group=self.env.user.gid, extra_groups=[], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        timer = threading.Timer(max(0.0, self.deadline - time.monotonic()), end_group, (p.pid, 9, 0.0))
        timer.start()
        try:
            for line in p.stdout:
                sys.stdout.write("  | " + line.decode(errors="replace"))
                sys.stdout.flush()
            return p.wait()
        except BaseException:
            # The whole group, sudo's root children too (a sudo without a terminal leaves its command in
            # the group), until none is left: the runner user cannot be removed while one runs.
            for sig in (15, 9):
                if not end_group(p.pid, sig):
                    break
            p.wait()
            raise
        finally:
            timer.cancel()

    def read_as_runner(self, path):
        """A file's text as the runner user reads it (what an action on the runner would see)."""
        r = subprocess.run(["cat", "--", path], user=self.env.user.uid, group=self.env.user.gid, extra_groups=[],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise standins.StandinError(f"the runner user cannot read {path}: {r.stderr.strip()}")
        return r.stdout

    def run_step(self, i, step, env):
        script = expr.substitute(step["run"], self.ctx)
        out = os.path.join(self.runner_temp, f"output-{i}")
        path = os.path.join(self.runner_temp, f"step-{i}.sh")
        for f, text in ((out, ""), (path, script)):
            with open(f, "w") as fh:
                fh.write(text)
            os.chown(f, *self.owner)
        rc = self.as_runner(["bash", "--noprofile", "--norc", "-eo", "pipefail", path],
                            env=self.runner_env(dict(env, GITHUB_OUTPUT=out)))
        return rc, read_outputs(out)

    def check_keys(self):
        """A key the replay does not act on (continue-on-error, working-directory, services, another
        shell) would make it replay something other than what GitHub runs: refused, by name."""
        extra = set(self.spec) - JOB_KEYS
        for step in self.spec["steps"]:
            extra |= set(step) - STEP_KEYS
            if step.get("shell", "bash") != "bash":
                extra.add(f"shell: {step['shell']}")
        if extra:
            raise standins.StandinError(f"{self.job_id}: the replay does not handle {sorted(extra)} "
                                        "(scripts/ci-replay/workflow.py)")

    def run(self):
        self.check_keys()
        name = self.wf.get("name", "?")
        print(f"ci-replay: == {name} / {self.job_id} ({self.case}) ==", flush=True)
        job_env = {k: expr.substitute(str(v), self.ctx) for k, v in (self.spec.get("env") or {}).items()}
        for i, step in enumerate(self.spec["steps"]):
            label = step.get("name") or step.get("uses") or step["run"].splitlines()[0]
            if not expr.condition(step.get("if"), self.ctx):
                self.results.append((label, "skipped", None, "its if: is false"))
                print(f"ci-replay: -- {label}: skipped (if: false)")
                continue
            print(f"ci-replay: -- {label}", flush=True)
            env = dict(job_env)
            env.update({k: expr.substitute(str(v), self.ctx) for k, v in (step.get("env") or {}).items()})
            self.ctx["env"] = env
            t0 = time.monotonic()
            if "run" in step:
                rc, outputs = self.run_step(i, step, env)
            else:
                inputs = {k: expr.substitute(str(v), self.ctx) for k, v in (step.get("with") or {}).items()}
                try:
                    got = standins.run(self, step["uses"], inputs)
                except (standins.StandinError, subprocess.CalledProcessError, OSError, ValueError) as e:
                    # The stand-in's own failure (a bad input, an unreadable file): the step fails.
                    print(f"  | {step['uses']}: {e}")
                    got = 1
                rc, outputs = (got, {}) if isinstance(got, int) else (0, got)
            result = "success" if rc == 0 else "failure"
            self.failed |= rc != 0
            if step.get("id"):
                self.steps[step["id"]] = {"outputs": outputs, "outcome": result, "conclusion": result}
            self.results.append((label, result, rc, f"{time.monotonic() - t0:.1f} s"))
            print(f"ci-replay: -- {label}: {result} (exit {rc}, {time.monotonic() - t0:.1f} s)", flush=True)
        for post in self.post:
            post()
        print(f"ci-replay: == {self.job_id} ({self.case}): {'failure' if self.failed else 'success'} ==", flush=True)
        return self

    def result(self, label):
        for r in self.results:
            if r[0] == label:
                return r
        raise KeyError(f"no step named {label!r} in {self.job_id}")


def end_group(pgid, sig, wait_s=10.0):
    """Sends sig to the process group pgid and waits for it to empty; -> whether some are left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        try:
            os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    return True


def read_outputs(path):
    """$GITHUB_OUTPUT: `key=value` lines and `key<<DELIM` blocks."""
    with open(path) as f:
        lines = f.read().splitlines()
    out = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[key] = "\n".join(lines[i + 1:j])
            i = j + 1
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        i += 1
    return out
