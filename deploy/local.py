"""Run the production shape on this machine: nginx in front of N gunicorn replicas.

    python deploy/local.py up --port PORT --replicas N [--workers W] [--host 127.0.0.1] [--run-dir DIR]
    python deploy/local.py restart I [--run-dir DIR]     # stop replica I (1..N) and start it again, same port
    python deploy/local.py status [--run-dir DIR]        # the state file, and which processes are alive
    python deploy/local.py down [--run-dir DIR]

``up`` starts N replicas (``specdec-service serve``, W sync workers each, on
free ports of 127.0.0.1) and nginx with deploy/nginx/edge.conf (its own
prefix, configuration, pid file, logs and temp paths under the run directory,
no root-owned path, running as the current user), waits until ``/health``
answers through nginx, prints the URL and writes the state file
``RUN/state.json`` (every process's PID, process group, start time and port;
the path is printed). ``down`` stops what the state file names, by PID
(nginx first with SIGQUIT, its graceful stop; then each replica with SIGTERM,
gunicorn's graceful stop, which lets in-flight requests finish), sends SIGKILL
to whatever of a process group is still alive after 15 s, and leaves nothing
of the run running. Each process is started in a session of its own, so its
process group holds it and its children (nginx's and gunicorn's workers) and
nothing else; a PID is only signalled while its start time still matches the
state file's (a PID the system has reused is left alone).

The default run directory is ``.run/local`` in the repository (ignored by
git). Needs nginx (Debian: ``apt-get install -y nginx``; found on PATH or in
/usr/sbin) and the service installed in this Python (``pip install -e .``).
Exit status: 0 done, 1 failed (the reason and the logs' tails on stderr),
2 usage error. See docs/deploy.md.
"""

from __future__ import annotations

import argparse
import getpass
import grp
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EDGE_CONF = HERE / "nginx" / "edge.conf"
DEFAULT_RUN_DIR = ROOT / ".run" / "local"
STATE_FILE = "state.json"
STOP_GRACE_SECONDS = 15.0
"""How long ``down`` waits for a graceful stop before SIGKILL (gunicorn's graceful_timeout is 10 s)."""
START_TIMEOUT_SECONDS = 60.0
FAIL_TIMEOUT_SECONDS = 5
"""nginx's passive health: a replica that failed once is left out for this long, then tried again."""


class Failed(Exception):
    """``up``/``down``/``restart`` could not do their work; the message says why."""


@dataclass
class Proc:
    """One process this script started: its PID (= its process group, see
    :func:`spawn`), the start time the kernel gives it (clock ticks after boot,
    /proc/PID/stat field 22) and, for a replica, its port."""

    name: str
    pid: int
    start_time: int
    port: Optional[int] = None
    log: Optional[str] = None


# -- processes -------------------------------------------------------------------

def start_time(pid: int) -> Optional[int]:
    """Field 22 of /proc/PID/stat (None if there is no such process)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def processes():
    """``(pid, fields)`` of every process now, ``fields`` being /proc/PID/stat after
    the command name: ``fields[0]`` the state, ``[2]`` the process group, ``[11]``
    and ``[12]`` user and system CPU ticks, ``[19]`` the start time."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                yield int(entry.name), (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue


def group_members(proc: Proc) -> list[int]:
    """The PIDs alive in ``proc``'s process group that started no earlier than it
    (its own children; a reused group id would belong to a later leader)."""
    return [pid for pid, fields in processes()
            if int(fields[2]) == proc.pid and int(fields[19]) >= proc.start_time and fields[0] != "Z"]


def spawn(name: str, argv: list[str], log: Path, env: Optional[dict] = None, port: Optional[int] = None) -> Proc:
    """Start ``argv`` in a new session (its own process group), output to ``log``."""
    with open(log, "ab") as out:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True, cwd=log.parent)
    started = start_time(process.pid)
    if started is None:
        raise Failed(f"{name} exited at once (see {log})")
    return Proc(name, process.pid, started, port, str(log))


def stop(procs: list[Proc], sig: int, grace: float = STOP_GRACE_SECONDS) -> None:
    """Send ``sig`` to each of ``procs`` (those that are still the processes
    started), wait up to ``grace`` s for their whole groups to exit, then SIGKILL
    what is left of them. :class:`Failed` if anything survives that."""
    for proc in procs:
        if start_time(proc.pid) == proc.start_time:
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    while any(group_members(proc) for proc in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc in procs:
        for pid in group_members(proc):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 5
    while any(group_members(proc) for proc in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for proc in procs for pid in group_members(proc)]
    if left:
        raise Failed(f"processes {left} survived SIGKILL")


def stop_all(procs: list[Proc], grace: float = STOP_GRACE_SECONDS) -> None:
    """nginx first (SIGQUIT: it finishes the requests it has and takes no new
    ones), then every replica at once (SIGTERM: gunicorn's graceful stop)."""
    stop([p for p in procs if p.name == "nginx"], signal.SIGQUIT, grace)
    stop([p for p in procs if p.name != "nginx"], signal.SIGTERM, grace)


# -- configuration ---------------------------------------------------------------

def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port of ``host`` that is free right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def nginx_binary() -> str:
    """The nginx executable (PATH, then /usr/sbin); :class:`Failed` without one."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if not found:
        raise Failed("nginx is not installed (Debian: apt-get install -y nginx)")
    return found


def upstream_conf(ports: list[int], checker_port: int) -> str:
    """``specdec-upstream.conf`` for replicas on 127.0.0.1 at ``ports``, and the edge's checker
    (the hop between nginx's public server and the replicas, edge.conf) on 127.0.0.1 at ``checker_port``."""
    servers = "".join(f"    server 127.0.0.1:{port} max_fails=1 fail_timeout={FAIL_TIMEOUT_SECONDS}s;\n"
                      for port in ports)
    return ("# Written by deploy/local.py for this run.\n"
            "upstream specdec {\n" + servers +
            "    keepalive 16;  # idle connections kept per nginx worker (gunicorn's sync workers close theirs)\n"
            "}\n"
            "upstream specdec_checker {\n"
            f"    server 127.0.0.1:{checker_port};\n"
            "    keepalive 16;\n"
            "}\n")


def checker_conf(checker_port: int) -> str:
    """``specdec-checker.conf``: where the edge's checker listens (loopback only)."""
    return f"# Written by deploy/local.py for this run.\nlisten 127.0.0.1:{checker_port};\n"


def server_conf(host: str, port: int, run: Path) -> str:
    """``specdec-server.conf``: where nginx listens and logs."""
    return (f"# Written by deploy/local.py for this run.\n"
            f"listen {host}:{port};\n"
            f"access_log {run}/logs/access.log specdec;\n")


def nginx_conf(run: Path) -> str:
    """The run's main nginx.conf: everything under ``run``, then edge.conf."""
    user = ""
    if os.geteuid() == 0:  # only root's nginx switches its workers to another user (nobody by default)
        user = f"user {getpass.getuser()} {grp.getgrgid(os.getegid()).gr_name};\n"
    temp = run / "temp"
    return (f"# Written by deploy/local.py for this run: nginx -p {run}/ -c {run}/nginx.conf\n"
            f"{user}"
            "worker_processes 1;\n"
            "daemon off;\n"
            f"pid {run}/nginx.pid;\n"
            f"error_log {run}/logs/error.log warn;\n"
            "events { worker_connections 1024; }\n"
            "http {\n"
            f"    client_body_temp_path {temp}/client_body;\n"
            f"    proxy_temp_path {temp}/proxy;\n"
            f"    fastcgi_temp_path {temp}/fastcgi;\n"
            f"    uwsgi_temp_path {temp}/uwsgi;\n"
            f"    scgi_temp_path {temp}/scgi;\n"
            f"    include {EDGE_CONF};\n"
            "}\n")


def nginx_argv(run: Path, *extra: str) -> list[str]:
    """nginx's command line for the run: its prefix, configuration and error log in ``run``."""
    return [nginx_binary(), "-p", f"{run}/", "-c", str(run / "nginx.conf"), "-e", str(run / "logs" / "error.log"),
            *extra]


# -- health ----------------------------------------------------------------------

def healthy(url: str) -> bool:
    """Whether ``url/health`` answers 200 within 2 s."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def wait_healthy(url: str, procs: list[Proc], timeout: float = START_TIMEOUT_SECONDS) -> None:
    """Poll ``url/health`` until 200; :class:`Failed` if a process dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in procs:
            if start_time(proc.pid) != proc.start_time:
                raise Failed(f"{proc.name} (pid {proc.pid}) exited during start-up")
        if healthy(url):
            return
        time.sleep(0.1)
    raise Failed(f"{url}/health did not answer within {timeout:.0f} s")


def tail(path: Optional[str], lines: int = 15) -> str:
    """The last ``lines`` lines of the file ``path`` ("" if it cannot be read)."""
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(keepends=True)[-lines:])
    except (OSError, TypeError):
        return ""


# -- state -----------------------------------------------------------------------

def read_state(run: Path) -> Optional[dict]:
    """The state file of ``run`` (None without one); :class:`Failed` if it is unreadable."""
    try:
        return json.loads((run / STATE_FILE).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise Failed(f"cannot read {run / STATE_FILE}: {error}") from None


def write_state(run: Path, state: dict) -> Path:
    """Write the state file of ``run`` atomically (a temporary file renamed); its path."""
    path = run / STATE_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=1) + "\n")
    temporary.replace(path)
    return path


def procs_of(state: dict) -> list[Proc]:
    """nginx first (stopped first), then the replicas."""
    return [Proc(**state["nginx"])] + [Proc(**replica) for replica in state["replicas"]]


def replica_env(port: int, workers: int) -> dict:
    """The environment of a replica: this one, with its bind address and worker count."""
    env = {**os.environ, "SPECDEC_BIND": f"127.0.0.1:{port}", "SPECDEC_WORKERS": str(workers),
           "PYTHONUNBUFFERED": "1"}  # each log line reaches the log file at once
    env.pop("SPECDEC_GUNICORN_CONF", None)  # the package's settings
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # each replica's gunicorn makes its own metrics directory
    return env


def spawn_replica(run: Path, index: int, port: int, workers: int) -> Proc:
    """Replica ``index`` (1-based): ``specdec-service serve`` on 127.0.0.1:``port``."""
    return spawn(f"replica {index}", [sys.executable, "-m", "specdec_service.cli", "serve"],
                 run / "logs" / f"replica-{index}.log", env=replica_env(port, workers), port=port)


def wait_replicas(replicas: list[Proc]) -> None:
    """Wait until every replica answers /health on its own port."""
    for proc in replicas:
        wait_healthy(f"http://127.0.0.1:{proc.port}", replicas)


# -- commands --------------------------------------------------------------------

def up(run: Path, host: str, port: int, replicas: int, workers: int) -> int:
    """``up`` (see the module docstring); :class:`Failed` (after stopping what it started) on failure."""
    state = read_state(run)
    if state is not None:
        alive = [p.name for p in procs_of(state) if start_time(p.pid) == p.start_time]
        if alive:
            raise Failed(f"{run} already has a running deployment ({', '.join(alive)}): "
                         f"python deploy/local.py down --run-dir {run}")
    try:
        import specdec_service  # noqa: F401 - only to fail early and clearly
    except ImportError:
        raise Failed(f"specdec_service is not installed in {sys.executable} (pip install -e .)") from None
    for sub in ("logs", "temp"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    started: list[Proc] = []
    try:
        ports = [free_port() for _ in range(replicas)]
        for index, replica_port in enumerate(ports, start=1):  # all at once: each takes seconds to load
            started.append(spawn_replica(run, index, replica_port, workers))
        wait_replicas(started)
        checker_port = free_port()
        (run / "specdec-upstream.conf").write_text(upstream_conf(ports, checker_port))
        (run / "specdec-checker.conf").write_text(checker_conf(checker_port))
        (run / "specdec-server.conf").write_text(server_conf(host, port, run))
        (run / "nginx.conf").write_text(nginx_conf(run))
        check = subprocess.run(nginx_argv(run, "-t", "-q"), capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise Failed(f"nginx rejects the configuration:\n{check.stderr.strip()}")
        nginx = spawn("nginx", nginx_argv(run), run / "logs" / "nginx.out", port=port)
        started.insert(0, nginx)
        url = f"http://{host}:{port}"
        wait_healthy(url, started)
    except BaseException as error:
        stop_all(started, grace=5)
        if isinstance(error, Failed):
            logs = "".join(f"--- {p.log}\n{tail(p.log)}" for p in started if p.log)
            logs += f"--- {run / 'logs' / 'error.log'}\n{tail(str(run / 'logs' / 'error.log'))}"
            raise Failed(f"{error}\n{logs}") from None
        raise
    path = write_state(run, {"url": url, "run_dir": str(run), "host": host, "port": port, "workers": workers,
                             "nginx": asdict(started[0]), "replicas": [asdict(p) for p in started[1:]]})
    print(url)
    print(f"state: {path}")
    return 0


def down(run: Path) -> int:
    """``down``: stop everything of the state file, then remove it (nothing to stop is not an error)."""
    state = read_state(run)
    if state is None:
        print(f"nothing to stop: no {run / STATE_FILE}")
        return 0
    stop_all(procs_of(state))
    (run / STATE_FILE).unlink()
    print(f"stopped nginx and {len(state['replicas'])} replica(s); logs kept in {run / 'logs'}")
    return 0


def running_state(run: Path) -> dict:
    """The state file of ``run``; :class:`Failed` without one."""
    state = read_state(run)
    if state is None:
        raise Failed(f"no deployment in {run}")
    return state


def restart(run: Path, index: int) -> int:
    """``restart I``: SIGTERM replica ``index`` (1-based), start it again on its port, update the state."""
    state = running_state(run)
    if not 1 <= index <= len(state["replicas"]):
        raise Failed(f"replica {index} does not exist: 1..{len(state['replicas'])}")
    old = Proc(**state["replicas"][index - 1])
    stop([old], signal.SIGTERM)
    new = spawn_replica(run, index, old.port, state["workers"])
    try:
        wait_replicas([new])
    except Failed:
        stop([new], signal.SIGTERM, grace=2)
        raise
    state["replicas"][index - 1] = asdict(new)
    write_state(run, state)
    print(f"replica {index} restarted on port {new.port} (pid {new.pid})")
    return 0


def status(run: Path) -> int:
    """``status``: the URL and whether each process of the state file is alive."""
    state = running_state(run)
    print(f"{state['url']}  (state: {run / STATE_FILE})")
    for proc in procs_of(state):
        alive = start_time(proc.pid) == proc.start_time
        where = f" port {proc.port}" if proc.port else ""
        print(f"  {proc.name:<10} pid {proc.pid:<8}{where:<12} {'alive' if alive else 'GONE'}")
    return 0


def positive(text: str) -> int:
    """argparse type: a positive integer in ASCII digits."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return int(text)


def port_number(text: str) -> int:
    """argparse type: a TCP port number, 1-65535."""
    value = positive(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number (1-65535), not {text}")
    return value


def main(argv: Optional[list[str]] = None) -> int:
    """The command line (see the module docstring); the exit status."""
    shared = argparse.ArgumentParser(add_help=False)  # --run-dir before or after the subcommand
    shared.add_argument("--run-dir", type=Path, default=argparse.SUPPRESS,
                        help=f"where configuration, logs, temp files and the state file go (default {DEFAULT_RUN_DIR})")
    parser = argparse.ArgumentParser(prog="deploy/local.py", description=__doc__.split("\n\n")[0], parents=[shared])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up", parents=[shared], help="start N replicas and nginx in front of them")
    start.add_argument("--port", type=port_number, required=True, help="nginx's port")
    start.add_argument("--replicas", type=positive, default=2, help="gunicorn replicas (default 2)")
    start.add_argument("--workers", type=positive, default=1, help="sync workers per replica (default 1)")
    start.add_argument("--host", default="127.0.0.1", help="nginx's address (default 127.0.0.1)")
    again = commands.add_parser("restart", parents=[shared], help="stop one replica (SIGTERM) and start it again on its port")
    again.add_argument("replica", type=positive, help="which replica, 1..N")
    commands.add_parser("status", parents=[shared], help="print the state file and which processes are alive")
    commands.add_parser("down", parents=[shared], help="stop everything `up` started")
    args = parser.parse_args(argv)
    run = getattr(args, "run_dir", DEFAULT_RUN_DIR).resolve()
    try:
        if args.command == "up":
            return up(run, args.host, args.port, args.replicas, args.workers)
        if args.command == "restart":
            return restart(run, args.replica)
        if args.command == "status":
            return status(run)
        return down(run)
    except Failed as error:
        print(f"deploy/local.py: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
