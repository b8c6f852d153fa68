"""The production shape on this machine: nginx (deploy/nginx/edge.conf) in
front of gunicorn replicas, started and stopped with ``deploy/local.py``
(issue 11). Loopback only; every loop is bounded in count and time.

Needs nginx (``bash .ci/run`` installs it with apt-get when it is missing).
"""

from __future__ import annotations

import http.client
import http.server
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
import yaml

from conftest import SEED1, free_port
from specdec_service import create_app
from specdec_service.api.grading import GRADE_MAX_BODY_BYTES
from specdec_service.api.openapi import EDGE_PROBLEMS, edge_example
from specdec_service.api.problems import problem
from specdec_service.api.routes import EDGE_STATUSES
from specdec_service.app import MAX_BODY_BYTES

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ROOT / "deploy" / "local.py"
EDGE_CONF = ROOT / "deploy" / "nginx" / "edge.conf"
PROBLEM = "application/problem+json"

pytestmark = pytest.mark.edge


# -- running deploy/local.py ---------------------------------------------------------

def local(run_dir: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    """``python deploy/local.py --run-dir RUN ARGS...`` (this Python: the service is installed in it)."""
    return subprocess.run([sys.executable, str(LOCAL), "--run-dir", str(run_dir), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def run_processes(run_dir: Path) -> list[int]:
    """Every live process whose command line or working directory is in ``run_dir``
    (nginx runs with ``-p RUN/``; each replica's working directory is RUN/logs)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (str(run_dir) in cmdline or cwd.startswith(str(run_dir))):
            found.append(int(entry.name))
    return found


def group_alive(pgid: int) -> list[int]:
    """The live processes of process group ``pgid``."""
    return [pid for pid, fields in local_module().processes() if int(fields[2]) == pgid and fields[0] != "Z"]


class Deployment:
    """One ``deploy/local.py up`` in ``run_dir``; :meth:`down` in a ``finally``."""

    def __init__(self, run_dir: Path, replicas: int = 2):
        self.run_dir = run_dir
        self.port = free_port()
        started = local(run_dir, "up", "--port", str(self.port), "--replicas", str(replicas))
        if started.returncode != 0:
            self.down()
            pytest.fail(f"deploy/local.py up failed ({started.returncode}):\n{started.stdout}\n{started.stderr}")
        self.output = started.stdout
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def state(self) -> dict:
        return json.loads((self.run_dir / "state.json").read_text())

    def log(self, name: str) -> str:
        return (self.run_dir / "logs" / name).read_text(errors="replace")

    def kill_replica(self, index: int) -> None:
        """SIGKILL replica ``index`` (1-based) and its worker (its whole process group)."""
        os.killpg(self.state["replicas"][index - 1]["pid"], signal.SIGKILL)

    def down(self) -> subprocess.CompletedProcess:
        return local(self.run_dir, "down")


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    """A deployment of 2 replicas shared by the tests that leave it as they found it."""
    deployment = Deployment(tmp_path_factory.mktemp("edge-run"))
    try:
        yield deployment
    finally:
        deployment.down()


def raw(port: int, data: bytes, timeout: float = 15, finish: bool = False) -> tuple[bytes, float]:
    """Send ``data`` on a new connection (then, if ``finish``, end the sending side:
    nginx then need not linger for a body it refused, but takes it as an abort of a
    request it would pass on), read until the server closes it
    (or ``timeout``); the bytes received and the seconds from sending to the close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sent = time.monotonic()
        sock.sendall(data)
        if finish:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        return received, time.monotonic() - sent


def parse(answer: bytes) -> tuple[int, dict, bytes]:
    """Status, headers (lower-case names) and body of one HTTP/1.1 answer."""
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def assert_edge_problem(answer: bytes, status: int, cors: bool) -> dict:
    """``answer`` is the edge's problem document for ``status``, in the service's format."""
    got, headers, body = parse(answer)
    assert got == status, answer[:400]
    assert headers["content-type"] == PROBLEM
    assert b"<html" not in answer.lower()
    document = json.loads(body)
    assert document == json.loads(problem(status, document["detail"]).get_data())
    assert re.fullmatch(r"[0-9a-f]{32}", headers["x-request-id"])
    assert headers.get("access-control-allow-origin") == ("*" if cors else None)
    # a browser page reads the request id of the edge's answers as of the service's
    assert headers.get("access-control-expose-headers") == ("X-Request-Id" if cors else None)
    assert headers["x-content-type-options"] == "nosniff"  # as on the service's own answers
    assert ("retry-after" in headers) == (status == 503)
    return document


# -- the configuration ---------------------------------------------------------------

def test_edge_limits_match_the_service():
    conf = EDGE_CONF.read_text()
    assert MAX_BODY_BYTES == 256 * 1024 and "client_max_body_size 256k;" in conf
    assert GRADE_MAX_BODY_BYTES == 8 * 1024 * 1024
    grade = conf[conf.index("location /v1/grade {"):]
    assert "client_max_body_size 8m;" in grade[:grade.index("}")]
    assert f"~^/v1/grade       {GRADE_MAX_BODY_BYTES};" in conf and f"default           {MAX_BODY_BYTES};" in conf
    # failover in the checker, not on a 503 (the service's compute-deadline would stop on every replica)
    checker = conf[conf.index("include specdec-checker.conf;"):]
    assert "proxy_next_upstream error timeout http_502 non_idempotent;" in checker
    assert [line for line in conf.splitlines() if "proxy_next_upstream " in line and "http_503" in line] == []
    # the numbers the problems' details (and the contract's EdgeError) state are the directives'
    assert "limit_conn specdec_per_client 64;" in conf and "(at most 64)" in EDGE_PROBLEMS[503]
    assert "large_client_header_buffers 4 4k;" in conf and "4096 bytes" in EDGE_PROBLEMS[431]
    assert "longer than 4094 bytes" in EDGE_PROBLEMS[414]  # a 4096-byte buffer holds the line and CRLF
    assert "proxy_read_timeout 60s;" in conf and "within 60 s" in EDGE_PROBLEMS[504]
    assert "client_header_timeout 10s;" in conf and "client_body_timeout 10s;" in conf


NGINX_PAGES = {400, 401, 402, 403, 404, 405, 406, 408, 409, 410, 411, 412, 413, 414, 415, 416, 421, 429,
               494, 495, 496, 497, 498, 500, 501, 502, 503, 504, 505, 507}
"""Every 4xx and 5xx status nginx has a built-in HTML page for: the table ngx_http_error_pages of
nginx's src/http/ngx_http_special_response.c (the same from 1.22 to 1.27). nginx sends HTML only
from it, and for a status without a page, an empty body."""
SENT_AS = {494: 431, 495: 400, 496: 400, 497: 400, 498: 404}
"""nginx's internal codes and the status the edge answers for them (as nginx itself does)."""


def conf_map(conf: str, variable: str) -> dict[str, str]:
    """The entries of edge.conf's ``map $status $variable { ... }`` (key -> value, quotes removed)."""
    block = re.search(r"map \$status \$%s \{\n(.*?)\n\}" % variable, conf, re.S).group(1)
    return {key: quoted or bare for key, quoted, bare in re.findall(r'(\w+)\s+(?:"([^"]*)"|([^\s;]*));', block)}


def test_every_page_nginx_has_is_a_problem_of_the_service_format():
    """Each status of NGINX_PAGES has an error_page to the one problem location, and the
    document it writes for the status it is sent as is the one problem() writes (title by
    status, the detail of the status or the default one); the statuses the contract lists
    have the contract's example."""
    conf = EDGE_CONF.read_text()
    pages = {}
    for codes, overwrite in re.findall(r"error_page ([\d\s]+?) (?:=(\d+) )?/\.specdec-edge/error;", conf):
        for code in codes.split():
            pages[int(code)] = int(overwrite) if overwrite else int(code)
    assert set(pages) == NGINX_PAGES
    assert {code: sent for code, sent in pages.items() if code != sent} == SENT_AS
    page = re.search(r"location = /\.specdec-edge/error \{\n(?:.*\n)*?\s+return 200 '(.*)\\n';", conf).group(1)
    titles, details = conf_map(conf, "specdec_edge_title"), conf_map(conf, "specdec_edge_detail")
    for status in sorted(set(pages.values())):
        detail = details.get(str(status), details["default"]).replace("$specdec_body_limit", str(MAX_BODY_BYTES))
        text = (page.replace("$specdec_edge_title", titles[str(status)]).replace("$status", str(status))
                .replace("$specdec_detail", detail))  # $specdec_edge_detail but on a replaced page
        document = json.loads(text)
        assert document == json.loads(problem(status, detail).get_data()), status
        if status in EDGE_PROBLEMS:  # the contract's examples are these documents
            assert edge_example(status)["value"] == document
    assert set(titles) == {str(status) for status in pages.values()}  # no title for a status never sent
    assert conf_map(conf, "specdec_edge_retry_after") == {"503": "1", "default": ""}


def test_the_contract_lists_the_edge_errors_on_every_operation():
    """Every operation documents each status of EDGE_STATUSES: the shared EdgeError
    response, or its own 400/413/503 response whose examples include the edge's (503:
    ComputeDeadline, on the routes with a work budget)."""
    assert set(EDGE_STATUSES) == {400, 408, 413, 414, 431, 501, 502, 503, 504, 505}
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    responses = document["components"]["responses"]
    assert set(responses["EdgeError"]["content"][PROBLEM]["examples"]) == {
        f"edge_{status}" for status in EDGE_STATUSES if status != 408}
    operations = [op for path in document["paths"].values() for op in path.values()]
    assert len(operations) >= 10
    for operation in operations:
        for status in EDGE_STATUSES:
            ref = operation["responses"][str(status)]["$ref"]
            name = ref.rsplit("/", 1)[1]
            assert name == "EdgeError" or ("edge" in responses[name]["content"][PROBLEM]["examples"]
                                           and str(status) in ("400", "413", "503")), (operation["summary"], status)


def nginx_version() -> tuple[int, ...]:
    out = subprocess.run([local_module().nginx_binary(), "-v"], capture_output=True, text=True, timeout=10).stderr
    return tuple(int(n) for n in re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", out).groups())


def local_module():
    """deploy/local.py as a module (it is a script, not a package)."""
    if "deploy_local" not in sys.modules:
        spec = importlib.util.spec_from_file_location("deploy_local", LOCAL)
        sys.modules["deploy_local"] = importlib.util.module_from_spec(spec)  # dataclasses look it up
        spec.loader.exec_module(sys.modules["deploy_local"])
    return sys.modules["deploy_local"]


def test_compose_configuration_passes_nginx_t(tmp_path):
    """docker-compose.yml's nginx configuration (edge.conf as conf.d/default.conf, the
    compose include files beside nginx.conf) is accepted by ``nginx -t``. Before nginx
    1.27.3 (Debian's is 1.22) the upstream's ``resolve`` is not known, so the check
    then reads the upstream without it and with the replica's name as a local address."""
    compose = ROOT / "deploy" / "nginx" / "compose"
    upstream = (compose / "specdec-upstream.conf").read_text()
    if nginx_version() < (1, 27, 3):
        upstream = upstream.replace(" resolve ", " ").replace("server specdec:8000", "server 127.0.0.1:8000")
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "default.conf").write_text(EDGE_CONF.read_text())
    (tmp_path / "specdec-upstream.conf").write_text(upstream)
    (tmp_path / "specdec-server.conf").write_text((compose / "specdec-server.conf").read_text())
    (tmp_path / "specdec-checker.conf").write_text((compose / "specdec-checker.conf").read_text())
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nevents {{}}\nhttp {{\n"
        + "".join(f"    {kind}_temp_path {tmp_path}/{kind};\n"
                  for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        + "    include conf.d/default.conf;\n}\n")
    check = subprocess.run([local_module().nginx_binary(), "-t", "-p", f"{tmp_path}/", "-c", str(tmp_path / "nginx.conf"),
                            "-e", str(tmp_path / "error.log")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    assert "test is successful" in check.stderr


# -- through nginx -------------------------------------------------------------------

def test_up_prints_the_url_and_the_state_file(edge):
    lines = edge.output.splitlines()
    assert lines[0] == edge.url and lines[1] == f"state: {edge.run_dir / 'state.json'}"
    state = edge.state
    assert state["url"] == edge.url and len(state["replicas"]) == 2
    ports = {replica["port"] for replica in state["replicas"]}
    assert len(ports) == 2 and edge.port not in ports
    for proc in (state["nginx"], *state["replicas"]):
        assert group_alive(proc["pid"])
    for replica in state["replicas"]:  # each replica answers on its own port as well
        assert requests.get(f"http://127.0.0.1:{replica['port']}/health", timeout=5).status_code == 200


def test_a_step_through_the_edge_equals_the_service(edge):
    response = requests.post(f"{edge.url}/v1/step", json=SEED1, timeout=10)
    assert response.status_code == 200
    assert response.json()["block"]["committed"] == ["A", "C"] and response.json()["state"]["position"] == 6
    assert response.headers["Access-Control-Allow-Origin"] == "*"  # the service's own, once
    assert response.raw.headers.getlist("Access-Control-Allow-Origin") == ["*"]
    assert response.raw.headers.getlist("X-Content-Type-Options") == ["nosniff"]  # the service's, once
    invalid = requests.post(f"{edge.url}/v1/step", json={"config": {"draft": "biased", "seed": 1, "width": 17}},
                            timeout=10)
    assert invalid.status_code == 422 and invalid.json()["errors"][0]["pointer"] == "#/config/width"


def test_cors_preflight_and_http_1_0_pass_the_edge(edge):
    """The edge passes on the headers a CORS preflight needs (it passes only what the
    service reads), and an HTTP/1.0 request without Host is served."""
    preflight = requests.options(f"{edge.url}/v1/step", timeout=10, headers={
        "Origin": "https://course.example.org", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 204 and preflight.content == b""
    assert "Content-Type" not in preflight.headers  # no body, no type (not text/html; issue 18)
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert preflight.headers["Access-Control-Allow-Headers"] == "content-type"
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    answer, _ = raw(edge.port, b"GET /health HTTP/1.0\r\n\r\n")
    status, headers, body = parse(answer)
    assert status == 200 and json.loads(body)["status"] == "ok"


def test_request_id_is_echoed_and_in_both_logs(edge):
    ids = []
    for _ in range(4):  # both replicas get some (round robin)
        response = requests.post(f"{edge.url}/v1/step", json=SEED1, timeout=10)
        assert response.status_code == 200
        ids.append(response.headers["X-Request-Id"])
    assert all(re.fullmatch(r"[0-9a-f]{32}", rid) for rid in ids) and len(set(ids)) == 4
    def logged() -> tuple[str, str]:
        return edge.log("access.log"), edge.log("replica-1.log") + edge.log("replica-2.log")

    deadline = time.monotonic() + 30  # nginx and gunicorn write their lines after the answer has left
    while time.monotonic() < deadline and not all(rid in log for rid in ids for log in logged()):
        time.sleep(0.1)
    access, replicas = logged()
    for rid in ids:
        assert re.search(rf'\] request_id={rid} "POST /v1/step HTTP/1\.1" 200 ', access), rid
        assert re.search(rf'\] request_id={rid} \S+ "POST /v1/step HTTP/1\.1" 200 ', replicas), rid


def test_a_forged_query_cannot_shadow_the_request_id_in_either_log(edge):
    """The request id comes before the request line in nginx's and gunicorn's access lines, so the
    first ``request_id=`` of a line is the real one, whatever the query says."""
    answer = requests.get(f"{edge.url}/health?request_id=FORGED-ID", headers={"X-Request-Id": "real-id"}, timeout=10)
    assert answer.status_code == 200 and answer.headers["X-Request-Id"] == "real-id"

    def lines() -> list[str]:
        logs = edge.log("access.log") + edge.log("replica-1.log") + edge.log("replica-2.log")
        return [line for line in logs.splitlines() if "FORGED-ID" in line]

    deadline = time.monotonic() + 30  # nginx and gunicorn write their lines after the answer has left
    while time.monotonic() < deadline and len(lines()) < 2:
        time.sleep(0.1)
    found = lines()
    assert len(found) == 2, found  # nginx's line and the replica's
    assert [re.search(r"request_id=(\S+)", line).group(1) for line in found] == ["real-id", "real-id"], found


@pytest.mark.parametrize("sent, kept", [("course-42.step_7", True), ("A" * 128, True), ("A" * 129, False),
                                         ("has space", False), ("a/b", False), ("", False)])
def test_a_callers_request_id_is_kept_through_the_edge_and_by_the_replica(edge, sent, kept):
    """A well-formed caller's id (the service's rule, ``observe.REQUEST_ID_FORM``) passes the
    edge and comes back exactly once: on a service's answer, on its refusal, and on an answer
    the edge writes itself (a 413); a malformed one is replaced by the edge's ``$request_id``
    (a new one each request), which the replica keeps. A replica asked directly keeps or
    replaces it the same way. Both logs name the id."""
    headers = {"X-Request-Id": sent}
    answers = [requests.post(f"{edge.url}/v1/step", json=SEED1, timeout=10, headers=headers),
               requests.get(f"{edge.url}/v1/step", timeout=10, headers=headers),  # the service's 405
               requests.post(f"{edge.url}/v1/step", data=b"[" + b" " * 300_000 + b"]", timeout=10,
                             headers={**headers, "Content-Type": "application/json"})]  # the edge's own 413
    assert [answer.status_code for answer in answers] == [200, 405, 413]
    assert answers[2].headers["Content-Type"] == PROBLEM and "262144" in answers[2].json()["detail"]
    ids = []
    for answer in answers:
        assert len(answer.raw.headers.getlist("X-Request-Id")) == 1
        ids.append(answer.headers["X-Request-Id"])
    if kept:
        assert ids == [sent] * 3
    else:
        assert all(re.fullmatch(r"[0-9a-f]{32}", rid) for rid in ids) and len(set(ids)) == 3
    replica = f"http://127.0.0.1:{edge.state['replicas'][0]['port']}"
    direct = requests.post(f"{replica}/v1/step", json=SEED1, timeout=10, headers=headers)
    assert direct.status_code == 200
    assert direct.headers["X-Request-Id"] == sent if kept else re.fullmatch(r"[0-9a-f]{32}", direct.headers["X-Request-Id"])

    def logged() -> tuple[str, str]:
        return edge.log("access.log"), edge.log("replica-1.log") + edge.log("replica-2.log")

    deadline = time.monotonic() + 30  # nginx and gunicorn write their lines after the answer has left
    while time.monotonic() < deadline and not all(f"request_id={ids[0]}" in log for log in logged()):
        time.sleep(0.1)
    access, replicas = logged()
    assert re.search(rf'\] request_id={re.escape(ids[0])} "POST /v1/step HTTP/1\.1" 200 ', access)
    assert re.search(rf'\] request_id={re.escape(ids[0])} \S+ "POST /v1/step HTTP/1\.1" 200 ', replicas)
    assert re.search(rf'\] request_id={re.escape(ids[2])} "POST /v1/step HTTP/1\.1" 413 ', access)


def test_the_inspector_page_and_its_files_through_the_edge(edge):
    """GET / and its static files pass the edge with the service's headers, and a
    conditional request (the edge passes If-None-Match on) is a 304."""
    page = requests.get(f"{edge.url}/", timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")
    scripts = re.findall(r'src="(/static/inspector/[^"]+\.js)"', page.text)
    assert scripts, page.text[:500]
    script = requests.get(f"{edge.url}{scripts[0]}", timeout=10)
    assert script.status_code == 200 and script.headers["ETag"]
    again = requests.get(f"{edge.url}{scripts[0]}", headers={"If-None-Match": script.headers["ETag"]}, timeout=10)
    assert again.status_code == 304 and again.content == b""


FRAMING = {
    # name: (request bytes, status, CORS header expected)
    "bad Content-Length": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, True),
    "duplicated Content-Length": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                  b"Content-Length: 3\r\n\r\n{}", 400, True),
    "Content-Length with Transfer-Encoding": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                              b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, True),
    "NUL in a header": (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, True),
    "lowercase method": (b"get /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 400, False),  # the line is unreadable
    "request line over 4 KiB": (b"GET /v1/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, False),
    "header over 8 KiB": (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 9000 + b"\r\n\r\n", 431, True),
    "body over 256 KiB": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n" + (b"10000\r\n" + b" " * 65536 + b"\r\n") * 5
                          + b"0\r\n\r\n", 413, True),
    "unknown path of the edge's own": (b"GET /.specdec-edge/error HTTP/1.1\r\nHost: x\r\n"
                                       b"Connection: close\r\n\r\n", 404, False),
    # issue 18 section 5: nginx's own HTML pages, before
    "HTTP/2.0": (b"GET /v1/models HTTP/2.0\r\nHost: x\r\n\r\n", 505, False),  # the line is unreadable
    "HTTP/9.9": (b"GET /v1/models HTTP/9.9\r\nHost: x\r\n\r\n", 505, False),
    "HTTP/10.0": (b"GET /v1/models HTTP/10.0\r\nHost: x\r\n\r\n", 505, False),
    "Transfer-Encoding gzip, chunked": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n"
                                        b"\r\n2\r\n{}\r\n0\r\n\r\n", 501, True),
    "Transfer-Encoding identity": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n"
                                   b"Content-Length: 2\r\n\r\n{}", 501, True),
    "Transfer-Encoding xchunked": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n"
                                   b"\r\n2\r\n{}\r\n0\r\n\r\n", 501, True),
    "TRACE": (b"TRACE /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, True),
    # issue 18 section 5: gunicorn's HTML 400 through nginx, before (the edge now refuses them first)
    "control byte 0x01 in Content-Type": (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\x01\r\n"
                                          b"Content-Length: 2\r\nConnection: close\r\n\r\n{}", 400, True),
    "3,000-character method": (b"A" * 3000 + b" /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, True),
    "raw 0xFF in the path": (b"GET /v1/\xff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400, True),
    # more of the same kinds
    "2-character method": (b"AB /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, True),
    "21-character method": (b"A" * 21 + b" /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, True),
    "raw 0x80 in the query": (b"GET /v1/models?x=\x80 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400, True),
    "DEL in Origin": (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nOrigin: https://a\x7f.example\r\n"
                      b"Connection: close\r\n\r\n", 400, True),
    "control byte in If-Modified-Since": (b"GET /v1/models HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: a\x1fb\r\n"
                                          b"Connection: close\r\n\r\n", 400, True),
    "control byte in Access-Control-Request-Headers": (
        b"OPTIONS /v1/step HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: POST\r\n"
        b"Access-Control-Request-Headers: content-type\x0b\r\nConnection: close\r\n\r\n", 400, True),
    "control byte in Host": (b"GET /v1/models HTTP/1.1\r\nHost: a\x01b\r\nConnection: close\r\n\r\n", 400, True),
}


@pytest.mark.parametrize("name", FRAMING)
def test_framing_errors_are_problems_from_the_edge(edge, name):
    request, status, cors = FRAMING[name]
    answer, _ = raw(edge.port, request)
    document = assert_edge_problem(answer, status, cors)
    if status == 413:
        assert document["detail"] == f"The request body is larger than the limit of {MAX_BODY_BYTES} bytes."


def replica_errors(edge) -> int:
    """How many requests the replicas answered with one of gunicorn's own (HTML) error
    pages: gunicorn logs "Invalid request from ip=..." for each (gunicorn/workers/base.py)."""
    return sum(edge.log(f"replica-{index}.log").count("Invalid request from") for index in (1, 2))


@pytest.mark.parametrize("path,status", [("/health", 505), ("/v1/models", 505), ("/.specdec-edge/error", 404)])
def test_http_0_9_gets_a_problem_body_alone(edge, path, status):
    """An HTTP/0.9 request (no version) is never passed on: nginx's answer to it has no
    status line and no headers (HTTP/0.9 has neither), so it is the 505 problem's body
    alone (the 404 problem's for the edge's internal path), which is JSON, not HTML."""
    answer, _ = raw(edge.port, f"GET {path}\r\n".encode())
    assert not answer.startswith(b"HTTP/") and b"<html" not in answer.lower()
    document = json.loads(answer)
    assert document == json.loads(problem(status, document["detail"]).get_data())


CLIENT_FIELDS = ("Host", "Content-Type", "Origin", "Access-Control-Request-Method",
                 "Access-Control-Request-Headers", "If-None-Match", "If-Modified-Since")
"""The request headers the edge passes on with the client's value (proxy_set_header in edge.conf)."""


PREFLIGHT = {"Origin": b"https://a.example", "Access-Control-Request-Method": b"POST",
             "Access-Control-Request-Headers": b"content-type"}


def hostile_requests():
    """Every byte in every place of a request a client controls and the edge passes on (the
    method, the request target, each header of CLIENT_FIELDS, each header of a CORS
    preflight, whose Access-Control-Request-Headers the service echoes), methods of 1 to 25
    characters, odd paths, odd HTTP versions and transfer codings."""
    close = b"Connection: close\r\n\r\n"
    for byte in (bytes([value]) for value in range(256)):
        yield b"GET /v1/models?q=a" + byte + b"b HTTP/1.1\r\nHost: x\r\n" + close
        yield b"G" + byte + b"T /v1/models HTTP/1.1\r\nHost: x\r\n" + close
        for field in CLIENT_FIELDS:
            host = b"" if field == "Host" else b"Host: x\r\n"
            yield b"GET /v1/models HTTP/1.1\r\n" + host + field.encode() + b": a" + byte + b"b\r\n" + close
        for field in PREFLIGHT:  # a preflight: flask-cors echoes Access-Control-Request-Headers
            headers = {**PREFLIGHT, field: b"a" + byte + b"b"}
            yield (b"OPTIONS /v1/step HTTP/1.1\r\nHost: x\r\n"
                   + b"".join(name.encode() + b": " + value + b"\r\n" for name, value in headers.items()) + close)
    for length in range(1, 26):
        yield b"A" * length + b" /v1/models HTTP/1.1\r\nHost: x\r\n" + close
    for path in (b"/v1//models", b"/v1/models/", b"/v1/models//", b"/v1/./models", b"/v1/../v1/models",
                 b"/v1/%2e%2e/models", b"/v1/models%00", b"/v1/models?%zz", b"/v1/models#x", b"/v1/models;x"):
        yield b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + close  # e.g. no redirect with an HTML page
    for version in (b"HTTP/0.9", b"HTTP/1.0", b"HTTP/1.2", b"HTTP/1.10", b"HTTP/01.1", b"HTTP/2.0", b"HTTP/3.0",
                    b"HTTP/9.9", b"HTTP/10.0", b"http/1.1", b"HTTP/1", b"HTTP/1.1 x", b"HTTPS/1.1"):
        yield b"GET /v1/models " + version + b"\r\nHost: x\r\n" + close
    for coding in (b"chunked", b"gzip, chunked", b"identity", b"xchunked", b"chunked, chunked", b"Chunked",
                   b"gzip", b"deflate", b"compress", b"chunked;x=1", b"chunked, identity", b""):
        yield (b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: "
               + coding + b"\r\n" + close + b"2\r\n{}\r\n0\r\n\r\n")


def test_no_request_gets_html_or_reaches_gunicorns_error_pages(edge):
    """The kind of issue 18 section 5, walked: for each of hostile_requests() (3,132
    requests), the answer is never HTML; an error is a problem document (the edge's or
    the service's) whose status is the answer's; an HTTP/0.9 answer is the 505 problem's
    body alone; and gunicorn never answers one with its own HTML page (its log counts
    none), so the edge refused first whatever gunicorn's parser would."""
    before = replica_errors(edge)
    statuses: dict[int, int] = {}
    requests_sent = 0
    for request in hostile_requests():
        requests_sent += 1
        answer, _ = raw(edge.port, request, timeout=10)
        assert answer, request[:80]
        assert b"<html" not in answer.lower() and b"text/html" not in answer.lower(), (request[:80], answer[:300])
        if not answer.startswith(b"HTTP/1.1 "):  # an HTTP/0.9 request (an LF in the target ends the line)
            assert json.loads(answer)["status"] == 505, (request[:80], answer[:300])
            statuses[9] = statuses.get(9, 0) + 1
            continue
        status, headers, body = parse(answer)
        statuses[status] = statuses.get(status, 0) + 1
        if "access-control-allow-origin" in headers:  # a page may read its request id (edge's or service's)
            assert headers.get("access-control-expose-headers") == "X-Request-Id", (request[:80], answer[:300])
        if status >= 400:
            assert headers["content-type"] == PROBLEM, (request[:80], answer[:300])
            assert json.loads(body)["status"] == status, (request[:80], answer[:300])
        else:
            assert status in (200, 204, 304) and headers.get("content-type", "application/json") == "application/json"
    print(f"{requests_sent} requests; answers by status (9: HTTP/0.9): {dict(sorted(statuses.items()))}")
    assert requests_sent == 3132
    time.sleep(0.2)  # gunicorn writes its log line after the answer
    assert replica_errors(edge) == before == 0


def test_grading_routes_take_8_mib_at_the_edge(edge):
    """A 1 MiB grading body passes the edge (the service answers it); 9 MiB is the edge's 413 naming 8 MiB."""
    padding = {"traces": [{"format": "x" * (1024 * 1024)}]}
    passed = requests.post(f"{edge.url}/v1/grade", json=padding, timeout=30)
    assert passed.status_code == 422 and "x-request-id" in passed.headers
    answer, _ = raw(edge.port, b"POST /v1/grade HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 9437184\r\n\r\n", finish=True)
    document = assert_edge_problem(answer, 413, True)
    assert f"{GRADE_MAX_BODY_BYTES} bytes" in document["detail"]


def test_request_line_limit_is_the_service_limit(edge):
    """4094 bytes (gunicorn's limit_request_line) reach the service; one more is the edge's 414."""
    def line(length: int) -> bytes:
        path = b"/v1/" + b"a" * (length - len(b"GET /v1/ HTTP/1.1"))
        return b"GET " + path + b" HTTP/1.1"

    assert len(line(4094)) == 4094
    answer, _ = raw(edge.port, line(4094) + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
    status, headers, body = parse(answer)
    assert status == 404 and headers["content-type"] == PROBLEM  # the service's own 404
    assert json.loads(body)["detail"] == "No such resource: see /openapi.yaml for the routes."
    answer, _ = raw(edge.port, line(4095) + b"\r\nHost: x\r\n\r\n")
    assert_edge_problem(answer, 414, False)


def test_bare_lf_and_many_headers_are_served(edge):
    """nginx reads bare-LF line ends (RFC 9112 section 2.2 allows it) and any number of
    headers within its buffers, and passes on only the headers the service reads, so
    neither reaches gunicorn's HTML errors: both are answered normally."""
    answer, _ = raw(edge.port, b"GET /health HTTP/1.1\nHost: x\nConnection: close\n\n")
    status, headers, body = parse(answer)
    assert status == 200 and json.loads(body)["status"] == "ok"
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
    answer, _ = raw(edge.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + many + b"\r\n")
    status, headers, body = parse(answer)
    assert status == 200 and [m["name"] for m in json.loads(body)["models"]] == ["toy", "aligned", "biased"]


def test_one_client_holds_at_most_64_requests(edge):
    """The 65th request in progress from one address is the edge's 503 with Retry-After."""
    stalled = []
    try:
        for _ in range(64):
            sock = socket.create_connection(("127.0.0.1", edge.port), timeout=15)
            sock.sendall(b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{")
            stalled.append(sock)
        # nginx counts a connection once it has read its request: ask again until it has read all
        # 64 (no fixed wait, issue 18; the deadline only keeps a hang from stalling the suite)
        deadline = time.monotonic() + 30
        while True:
            answer, _ = raw(edge.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if b" 503 " in answer.split(b"\r\n", 1)[0] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert_edge_problem(answer, 503, True)
        assert parse(answer)[1]["retry-after"] == "1"
    finally:
        for sock in stalled:
            sock.close()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # nginx notices the closed connections on its next read
        if requests.get(f"{edge.url}/v1/models", timeout=5).status_code == 200:
            break
        time.sleep(0.2)
    assert requests.get(f"{edge.url}/v1/models", timeout=5).status_code == 200


STALLS = {
    "half a body": b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 100\r\n\r\n{\"config\":",
    "unterminated chunked body": b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"con\r\n",
    "half the headers": b"POST /v1/step HTTP/1.1\r\nHost: x\r\nContent-Ty",
}


def test_stalled_clients_cost_no_worker(edge):
    """Three stalled clients while /health is polled: every poll is answered (200) while they
    stall, so a stalled client holds no worker; nginx closes each stalled client
    (client_header_timeout / client_body_timeout, 10 s) without an answer (so never HTML) and
    logs a 408 for each. No duration is asserted (issue 18: a loaded machine is slow); the
    timings are printed, and every timeout below only keeps a hang from stalling the suite."""
    results: dict[str, tuple[bytes, float]] = {}

    def stall(name: str) -> None:
        results[name] = raw(edge.port, STALLS[name], timeout=60)

    threads = [threading.Thread(target=stall, args=(name,)) for name in STALLS]
    for thread in threads:
        thread.start()
    polls = []
    with requests.Session() as session:
        while any(thread.is_alive() for thread in threads) and len(polls) < 2000:
            before = time.monotonic()
            response = session.get(f"{edge.url}/health", timeout=30)
            polls.append(time.monotonic() - before)
            assert response.status_code == 200
            time.sleep(0.05)
    for thread in threads:
        thread.join(timeout=90)
    print(f"{len(polls)} polls, slowest {max(polls):.3f} s; stalled clients closed after "
          + ", ".join(f"{name} {seconds:.2f} s" for name, (_, seconds) in results.items()))
    assert polls and set(results) == set(STALLS)
    for name, (received, _) in results.items():
        assert received == b"", (name, received[:200])
    deadline = time.monotonic() + 30  # nginx writes its log line after closing the connection
    while True:
        timeouts = [line for line in edge.log("access.log").splitlines() if '"POST /v1/step HTTP/1.1" 408 0 ' in line]
        if len(timeouts) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(timeouts) >= 3


class Load:
    """``connections`` threads, each posting the SPEC section 4 state to /v1/step on
    its own keep-alive connection until :meth:`stop`; answers are compared with
    ``expected`` byte for byte."""

    def __init__(self, port: int, connections: int, expected: bytes):
        self.port, self.expected = port, expected
        self.ok = self.non_2xx = self.failed = self.cut_short = self.wrong = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.running = True
        self.threads = [threading.Thread(target=self.worker) for _ in range(connections)]

    def start(self) -> "Load":
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> None:
        self.running = False
        for thread in self.threads:
            thread.join(timeout=30)

    def count(self, field: str, error: str = "") -> None:
        with self.lock:
            setattr(self, field, getattr(self, field) + 1)
            if error and len(self.errors) < 20:
                self.errors.append(error)

    def worker(self) -> None:
        body = json.dumps(SEED1).encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        while self.running:
            try:
                connection.request("POST", "/v1/step", body=body, headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                data = response.read()
            except http.client.IncompleteRead:
                self.count("cut_short")
                connection.close()
                continue
            except (OSError, http.client.HTTPException) as error:
                self.count("failed", f"{type(error).__name__}: {error}")
                connection.close()
                continue
            if not 200 <= response.status < 300:
                self.count("non_2xx", f"{response.status}: {data[:200]!r}")
            elif data != self.expected:
                self.count("wrong", data[:200].decode(errors="replace"))
            else:
                self.count("ok")
            if response.will_close:
                connection.close()
        connection.close()


def step_requests(log: str) -> int:
    return log.count('"POST /v1/step HTTP/1.1" 200 ')


def test_sigkill_of_a_replica_under_load_loses_no_request(edge):
    """20 s of 16-way POST /v1/step: replica 1 is killed with SIGKILL (master and
    worker) at 4 s and restarted at 8 s (nginx tries it again 5 s after its last
    failure, so it has several seconds to be used before the load ends). Zero non-2xx answers and zero failed
    requests; an answer whose headers had already left the killed worker may be cut
    short, at most the one in flight; replica 2 serves meanwhile and replica 1 is used
    again after its restart."""
    expected = requests.post(f"{edge.url}/v1/step", json=SEED1, timeout=10).content
    load = Load(edge.port, 16, expected).start()
    started = time.monotonic()
    try:
        time.sleep(4)
        edge.kill_replica(1)
        killed_at = step_requests(edge.log("replica-2.log"))
        time.sleep(4)
        served_meanwhile = step_requests(edge.log("replica-2.log")) - killed_at
        restarted = local(edge.run_dir, "restart", "1")
        assert restarted.returncode == 0, restarted.stderr
        after_restart = step_requests(edge.log("replica-1.log"))
        time.sleep(max(6.0, 20 - (time.monotonic() - started)))
    finally:
        load.stop()
    used_again = step_requests(edge.log("replica-1.log")) - after_restart
    summary = (f"ok {load.ok}, non-2xx {load.non_2xx}, failed {load.failed}, cut short {load.cut_short}, "
               f"wrong {load.wrong}; replica 2 served {served_meanwhile} while 1 was down; "
               f"replica 1 served {used_again} after its restart; {load.errors[:5]}")
    print(summary)
    assert load.non_2xx == 0 and load.failed == 0 and load.wrong == 0, summary
    assert load.cut_short <= 1, summary
    assert load.ok >= 100, summary
    assert served_meanwhile >= 50, summary
    assert used_again >= 10, summary


def test_sigterm_of_a_replica_under_load_finishes_in_flight_requests(edge):
    """``restart`` stops a replica with SIGTERM (gunicorn's graceful stop) while 8
    connections keep posting: the requests in flight finish, nginx sends the new ones to
    the other replica, and not one answer is lost or cut short."""
    expected = requests.post(f"{edge.url}/v1/step", json=SEED1, timeout=10).content
    load = Load(edge.port, 8, expected).start()
    try:
        time.sleep(2)
        restarted = local(edge.run_dir, "restart", "2")
        assert restarted.returncode == 0, restarted.stderr
        time.sleep(2)
    finally:
        load.stop()
    summary = (f"ok {load.ok}, non-2xx {load.non_2xx}, failed {load.failed}, cut short {load.cut_short}, "
               f"wrong {load.wrong}; {load.errors[:5]}")
    assert load.ok >= 50 and load.non_2xx == load.failed == load.cut_short == load.wrong == 0, summary
    assert "Handling signal: term" in edge.log("replica-2.log") or "Handling signal: TERM" in edge.log("replica-2.log")


def test_sigterm_lets_the_request_in_flight_finish(edge):
    """A grading request of 200 traces sent straight to replica 1, whose gunicorn gets
    SIGTERM while the request is in flight (the worker has its headers and half its
    body: no race with how fast the grading is): the answer still arrives whole and
    right, and the replica logs it after the signal. ``restart 1`` then brings the
    replica back."""
    app = create_app({"TESTING": True}).test_client()
    traces = [app.post("/v1/runs", json={"config": {"draft": "biased", "seed": seed}}).get_json()
              for seed in range(200)]
    body = json.dumps({"traces": traces}).encode()
    replica = edge.state["replicas"][0]
    half = len(body) // 2
    with socket.create_connection(("127.0.0.1", replica["port"]), timeout=60) as sock:
        sock.sendall(b"POST /v1/grade HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:half])
        time.sleep(1.0)  # the worker has accepted the request and is reading its body
        os.kill(replica["pid"], signal.SIGTERM)
        time.sleep(0.5)
        sock.sendall(body[half:])
        response = http.client.HTTPResponse(sock)
        response.begin()
        status, answer = response.status, json.loads(response.read())
    restarted = local(edge.run_dir, "restart", "1")
    assert restarted.returncode == 0, restarted.stderr
    assert status == 200
    assert answer["summary"] == {"count": 200, "passed": 200, "failed": 0, "mean_score": 1.0}
    log = edge.log("replica-1.log")
    assert log.rindex('"POST /v1/grade HTTP/1.1" 200') > log.rindex("Handling signal: term")  # answered after it


# -- deployments of their own ----------------------------------------------------------

def test_no_replica_left_is_a_502_problem(tmp_path):
    deployment = Deployment(tmp_path / "run", replicas=1)
    try:
        deployment.kill_replica(1)
        time.sleep(0.5)
        response = requests.post(f"{deployment.url}/v1/step", json=SEED1, timeout=15)
        assert response.status_code == 502 and response.headers["Content-Type"] == PROBLEM
        assert response.json() == json.loads(problem(502, response.json()["detail"]).get_data())
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert response.headers["Access-Control-Expose-Headers"] == "X-Request-Id"
        assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-Id"])
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    finally:
        deployment.down()


class _FakeUpstream(http.server.BaseHTTPRequestHandler):
    """An upstream that is not the service: ``/v1/html/N`` answers status N with an HTML page,
    ``/v1/problem/N`` with a problem document (as the service would), anything else 200 HTML."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind, _, code = self.path.rpartition("/")
        status = int(code) if code.isdigit() else 200
        if kind.endswith("/problem"):
            body, mimetype = json.dumps({"type": "tag:fake", "title": "Fake", "status": status,
                                         "detail": "the upstream's own"}).encode(), PROBLEM
        else:
            body, mimetype = b"<html><body><h1>Internal Server Error</h1></body></html>\n", "text/html"
        self.send_response(status)
        self.send_header("Content-Type", mimetype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Request-Id", "upstream-id")  # an error page's headers are not sent on
        self.send_header("Access-Control-Allow-Origin", "https://elsewhere.example")
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


REPLACED = ("A replica answered {status} with an error page that is not a problem document; the edge replaced it. "
            "Retry, or send a smaller request.")


def test_an_upstream_error_page_never_passes_the_edge(tmp_path):
    """nginx in front of an upstream that answers HTML: every 4xx and 5xx page that is not a problem
    document is replaced by the edge's 502 problem naming the status (with the request id, CORS and
    nosniff, none of the page's headers); a problem document passes byte for byte, and so does a
    page that is not an error."""
    fake = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeUpstream)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    deployment = Deployment(tmp_path / "run", replicas=1)
    try:
        upstream = deployment.run_dir / "specdec-upstream.conf"
        text = upstream.read_text()
        replica = f"127.0.0.1:{deployment.state['replicas'][0]['port']}"
        upstream.write_text(text.replace(f"server {replica} ", f"server 127.0.0.1:{fake.server_port} "))
        reload = subprocess.run(local_module().nginx_argv(deployment.run_dir, "-s", "reload"), capture_output=True,
                                text=True, timeout=30)
        assert reload.returncode == 0, reload.stderr
        deadline = time.monotonic() + 30  # the old nginx worker finishes, the new one reads the new upstream
        while time.monotonic() < deadline and requests.get(f"{deployment.url}/v1/x", timeout=10).status_code != 200:
            time.sleep(0.2)
        for status in (400, 404, 405, 409, 413, 415, 422, 500, 502, 503, 504):
            answer = requests.post(f"{deployment.url}/v1/html/{status}", data=b"{}", timeout=15,
                                   headers={"X-Request-Id": f"page-{status}", "Content-Type": "application/json"})
            assert answer.status_code == 502, (status, answer.text)
            assert answer.headers["Content-Type"] == PROBLEM
            assert answer.content == problem(502, REPLACED.format(status=status)).get_data()
            for name, value in (("X-Request-Id", f"page-{status}"), ("Access-Control-Allow-Origin", "*"),
                                ("Access-Control-Expose-Headers", "X-Request-Id"), ("X-Content-Type-Options", "nosniff")):
                assert answer.raw.headers.getlist(name) == [value], (status, name)
            assert "Retry-After" not in answer.headers and "X-Specdec-Replica" not in answer.headers
        for status in (404, 422, 500, 503):
            direct = requests.get(f"http://127.0.0.1:{fake.server_port}/v1/problem/{status}", timeout=10)
            through = requests.get(f"{deployment.url}/v1/problem/{status}", timeout=10)
            assert (through.status_code, through.content) == (status, direct.content)
            assert through.headers["Content-Type"] == PROBLEM
        page = requests.get(f"{deployment.url}/v1/page", timeout=10)
        assert page.status_code == 200 and page.headers["Content-Type"] == "text/html"
        access = deployment.log("access.log")
        assert f"upstream=127.0.0.1:{fake.server_port} upstream_status=200" in access  # the replica's address
    finally:
        deployment.down()
        fake.shutdown()
        fake.server_close()


def test_the_services_own_problems_pass_the_edge_byte_for_byte(tmp_path, monkeypatch):
    """The service's 422, 413 and 503 (a request stopped at its CPU deadline: the budgets off, a
    deadline of 1 s) are the same bytes through the edge as from the replica itself; the 503 is
    not sent to the other replica (it would stop there too)."""
    from test_deadline import slow_analysis

    monkeypatch.setenv("SPECDEC_CPU_DEADLINE", "1")
    monkeypatch.setenv("SPECDEC_TESTING_SKIP_BUDGETS", "1")
    deployment = Deployment(tmp_path / "run", replicas=2)
    try:
        replica = f"http://127.0.0.1:{deployment.state['replicas'][0]['port']}"
        cases = {422: ("/v1/step", {"config": {"width": 99}}),
                 413: ("/v1/step", {"config": {}, "pad": [0] * 20_000}),  # 40 KB: over the values, not the bytes
                 503: ("/v1/analysis", slow_analysis())}
        for status, (path, body) in cases.items():
            headers = {"X-Request-Id": f"own-{status}"}
            direct = requests.post(f"{replica}{path}", json=body, headers=headers, timeout=60)
            through = requests.post(f"{deployment.url}{path}", json=body, headers=headers, timeout=60)
            assert direct.status_code == through.status_code == status, (status, through.text)
            assert through.headers["Content-Type"] == direct.headers["Content-Type"] == PROBLEM
            assert through.content == direct.content
            assert through.raw.headers.getlist("X-Request-Id") == [f"own-{status}"]
            assert json.loads(through.content)["type"] == {
                422: "tag:specdec,2026:problem/invalid-input", 413: "tag:specdec,2026:problem/structure-bound",
                503: "tag:specdec,2026:problem/compute-deadline"}[status]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "own-503" not in deployment.log("access.log"):
            time.sleep(0.1)
        replicas = deployment.log("replica-1.log") + deployment.log("replica-2.log")
        assert replicas.count("request_id=own-503 ") == 2  # the direct one and the edge's, not retried
    finally:
        deployment.down()


def test_down_leaves_no_process_of_the_run(tmp_path):
    run_dir = tmp_path / "run"
    deployment = Deployment(run_dir, replicas=2)
    state = deployment.state
    groups = [state["nginx"]["pid"], *(r["pid"] for r in state["replicas"])]
    try:
        assert all(group_alive(pgid) for pgid in groups)
        assert len(run_processes(run_dir)) >= 5  # nginx master + worker, two gunicorn masters + workers
        status = local(run_dir, "status")
        assert status.returncode == 0 and status.stdout.count(" alive") == 3, status.stdout
        again = local(run_dir, "up", "--port", str(free_port()), "--replicas", "1")
        assert again.returncode == 1 and "already has a running deployment" in again.stderr
    finally:
        stopped = deployment.down()
    assert stopped.returncode == 0 and "stopped nginx and 2 replica(s)" in stopped.stdout
    assert not any(group_alive(pgid) for pgid in groups)
    assert run_processes(run_dir) == []
    assert not (run_dir / "state.json").exists()
    assert local(run_dir, "down").stdout.startswith("nothing to stop")
    after = local(run_dir, "status")
    assert after.returncode == 1 and "no deployment in" in after.stderr
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{deployment.url}/health", timeout=2)


def test_local_py_usage_errors(tmp_path):
    for args in (["up", "--port", "0"], ["up", "--port", "8080", "--replicas", "x"], ["restart", "0"], []):
        result = local(tmp_path, *args)
        assert result.returncode == 2 and "usage: deploy/local.py" in result.stderr, args
    missing = local(tmp_path / "none", "restart", "1")
    assert missing.returncode == 1 and "no deployment in" in missing.stderr
