"""The runner user of the replay: unprivileged, with passwordless sudo, as on GitHub's hosted
runners (user `runner`). A unique name and a mktemp-named home, so two replays on one machine never
meet; the user, its group, its home and its sudoers entry are removed on success, error and Ctrl-C
(the caller turns SIGTERM and SIGHUP into KeyboardInterrupt, so `with` covers them too).
"""
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

SUDOERS_DIR = "/etc/sudoers.d"


def say(msg):
    print(f"ci-replay: {msg}", flush=True)


def ensure_sudo():
    """GitHub's runners have sudo; a fresh Debian machine may not."""
    if shutil.which("sudo"):
        return
    say("installing sudo (apt): the runner user's steps call it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "install", "-y", "-qq", "sudo"], check=True, env=env, stdout=subprocess.DEVNULL)


class RunnerUser:
    def __init__(self):
        self.name = self.home = self.sudoers = None
        self.uid = self.gid = None

    def __enter__(self):
        try:
            self._create()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def _create(self):
        for _ in range(10):
            name = "tbci" + secrets.token_hex(4)
            try:
                pwd.getpwnam(name)
            except KeyError:
                break
        else:
            raise RuntimeError("no free runner user name after 10 tries")
        self.home = tempfile.mkdtemp(prefix="ci-replay-home.")
        subprocess.run(
            ["useradd", "--no-create-home", "--home-dir", self.home, "--shell", "/bin/bash", "--user-group", name],
            check=True,
        )
        self.name = name
        pw = pwd.getpwnam(name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        os.chown(self.home, self.uid, self.gid)
        # sudo ignores a sudoers.d file whose name holds a '.': the name is the user's, no dot.
        path = os.path.join(SUDOERS_DIR, f"ci-replay-{name}")
        fd, tmp = tempfile.mkstemp(dir=SUDOERS_DIR, prefix=".ci-replay-")
        with os.fdopen(fd, "w") as f:
            f.write(f"{name} ALL=(ALL) NOPASSWD:ALL\n")
        os.chmod(tmp, 0o440)
        if subprocess.run(["visudo", "-cqf", tmp]).returncode != 0:
            os.unlink(tmp)
            raise RuntimeError(f"visudo rejects the sudoers entry for {name}")
        os.rename(tmp, path)
        self.sudoers = path
        say(f"runner user {name} (uid {self.uid}), home {self.home}, passwordless sudo ({path})")

    def remove(self):
        """Everything _create made, each part even when another fails; says what it could not remove."""
        failed = []
        if self.sudoers:
            try:
                os.unlink(self.sudoers)
            except FileNotFoundError:
                pass
            except OSError as e:
                failed.append(f"{self.sudoers}: {e}")
            self.sudoers = None
        if self.name:
            left = wait_for_no_process(self.uid)
            if left:
                failed.append(f"processes of {self.name} still running: {left} (end them, then: userdel {self.name})")
            r = subprocess.run(["userdel", self.name], capture_output=True, text=True)
            if r.returncode != 0:
                failed.append(f"userdel {self.name}: {r.stderr.strip()}")
            # userdel removes the user's own group (USERGROUPS_ENAB); where it does not, groupdel.
            if subprocess.run(["getent", "group", self.name], capture_output=True).returncode == 0:
                subprocess.run(["groupdel", self.name], capture_output=True)
            self.name = None
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)
            if os.path.exists(self.home):
                failed.append(f"{self.home}: still there")
            self.home = None
        for f in failed:
            print(f"ci-replay: clean-up failed: {f}", file=sys.stderr)


def wait_for_no_process(uid, wait_s=10.0):
    """Waits until no process runs with uid as its real or effective uid; -> the pids still left."""
    deadline = time.monotonic() + wait_s
    while True:
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/status") as f:
                    uids = next(line for line in f if line.startswith("Uid:")).split()[1:3]
            except (OSError, StopIteration):
                continue
            if str(uid) in uids:
                left.append(int(pid))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)
