"""The several-host layout of deploy/ on real separate network stacks.

The test makes its own machines with network namespaces (`ip netns`) joined
by a private bridge that has no way out: a balancer host (nginx buffering
in front of HAProxy, with the configurations of deploy/), and two web hosts
running `pserve production.ini` (gunicorn) with `EHS_STORAGE=database`. The
hosts reach PostgreSQL over that network: socat on the bridge address of the
root namespace relays to the server's loopback listener, standing in for the
database machine. The schema is migrated once, as the release step, before
any host starts.

It shows what issue 16 asks of several hosts: a photo uploaded through one
host downloads through the other; 500 reports filed by 16 clients across
both hosts are numbered 1..500 without a gap; and when one host is killed
in the middle of that load (SIGKILL to every process on it), no report or
file whose upload was acknowledged is lost."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from ehs_core.testing import PASSWORD
from tests.core.attachments import samples

PG = os.environ.get("EHS_TEST_POSTGRES_URL")
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TOOLS = {name: shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
         for name in ("ip", "nginx", "haproxy", "socat")}
CLIENTS = 16
REPORTS = 500
KILL_AFTER = 150  # acknowledged reports before the first web host is killed
DEADLINE = 240.0  # seconds for the whole load, kill included (a loaded 2-core machine needs ~100)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not PG, reason="needs EHS_TEST_POSTGRES_URL"),
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(not all(TOOLS.values()), reason="needs {} (.ci/run installs them)".format(
        ", ".join(name for name, path in TOOLS.items() if not path))),
]


def run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=30).stdout


class Network:
    """A private bridge in the root namespace and one namespace per host."""

    def __init__(self) -> None:
        self.tag = secrets.token_hex(2)
        used = run(TOOLS["ip"], "-4", "-o", "addr")
        for _ in range(50):
            prefix = f"10.{secrets.choice(range(100, 250))}.{secrets.choice(range(1, 250))}."
            if prefix not in used:
                break
        self.prefix = prefix
        self.bridge = f"ehb{self.tag}"
        self.namespaces: dict[str, str] = {}
        self.processes: list[subprocess.Popen] = []
        ip = TOOLS["ip"]
        run(ip, "link", "add", self.bridge, "type", "bridge")
        run(ip, "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        run(ip, "link", "set", self.bridge, "up")

    @property
    def gateway(self) -> str:
        return self.prefix + "1"

    def add_host(self, name: str, octet: int) -> str:
        ip = TOOLS["ip"]
        namespace = f"ehs-{self.tag}-{name}"
        outer, inner = f"eh{self.tag}{octet}", f"ep{self.tag}{octet}"
        run(ip, "netns", "add", namespace)
        self.namespaces[name] = namespace
        run(ip, "link", "add", outer, "type", "veth", "peer", "name", inner)
        run(ip, "link", "set", inner, "netns", namespace)
        run(ip, "link", "set", outer, "master", self.bridge)
        run(ip, "link", "set", outer, "up")
        run(ip, "-n", namespace, "link", "set", inner, "name", "eth0")
        run(ip, "-n", namespace, "addr", "add", f"{self.prefix}{octet}/24", "dev", "eth0")
        run(ip, "-n", namespace, "link", "set", "eth0", "up")
        run(ip, "-n", namespace, "link", "set", "lo", "up")
        return self.prefix + str(octet)

    def start(self, host: str | None, argv: list[str], log: Path, env: dict[str, str] | None = None,
              ) -> subprocess.Popen:
        if host is not None:
            argv = [TOOLS["ip"], "netns", "exec", self.namespaces[host], *argv]
        handle = open(log, "wb")
        process = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
        handle.close()
        self.processes.append(process)
        return process

    def kill_host(self, name: str) -> None:
        """Power failure: every process in the host's namespace dies at once."""
        pids = run(TOOLS["ip"], "netns", "pids", self.namespaces[name]).split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        for name in self.namespaces:
            self.kill_host(name)
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        for namespace in self.namespaces.values():
            subprocess.run([TOOLS["ip"], "netns", "del", namespace], check=False, timeout=30)
        subprocess.run([TOOLS["ip"], "link", "del", self.bridge], check=False, timeout=30)


NGINX_CONF = """
daemon off;
master_process on;
worker_processes 1;
user root;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {tmp}/nginx-access.log;
    client_body_temp_path {tmp}/client_body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream ehs_balancer {{
        server 127.0.0.1:8081;
        keepalive 16;
    }}
    server {{
        listen {address}:8080;
        include {snippet};
    }}
}}
"""


def haproxy_conf(web: list[str]) -> str:
    """deploy/haproxy/haproxy.cfg with the hosts' addresses, run in the foreground
    without the packaged service's chroot, socket and log."""
    text = (ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text()
    body = text[text.index("defaults"):].replace("    log global\n", "")
    for number, address in enumerate(web, 1):
        body = body.replace(f"10.0.0.1{number}:6543", f"{address}:6543")
    assert all(address in body for address in web)
    return "global\n    maxconn 512\n\n" + body


class Deployment:
    def __init__(self, network: Network, public: str, web: dict[str, str], engine: sa.Engine) -> None:
        self.network = network
        self.public = public
        self.web = web
        self.engine = engine
        self.cookie = ""

    def session(self, base: str | None = None) -> requests.Session:
        browser = requests.Session()
        browser.headers["Origin"] = self.public
        if self.cookie:
            browser.cookies.set("service_session", self.cookie)
        return browser


def wait_until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("hosts")
    server = make_url(PG).set(drivername="postgresql+psycopg")
    name = f"ehs_hosts_{uuid.uuid4().hex[:10]}"
    admin_engine = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    network = Network()
    engine = sa.create_engine(server.set(database=name))
    try:
        balancer = network.add_host("lb", 10)
        web = {"web1": network.add_host("web1", 11), "web2": network.add_host("web2", 12)}
        public = f"http://{balancer}:8080"
        port = server.port or 5432
        # The database machine: PostgreSQL reached on the network's gateway.
        network.start(None, [TOOLS["socat"], f"TCP-LISTEN:{port},bind={network.gateway},fork,reuseaddr",
                             f"TCP:{server.host or '127.0.0.1'}:{port}"], tmp / "socat.log")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("EHS_", "AWS_")) and k not in {"MAX_UPLOAD_MB", "TZ"}}
        env.update({
            "EHS_DATABASE_URL": server.set(host=network.gateway, database=name).render_as_string(
                hide_password=False),
            "EHS_STORAGE": "database", "EHS_PUBLIC_URL": public, "EHS_HUEY_URL": "",
            "EHS_SESSION_SECURE": "false", "EHS_SMTP_HOST": "127.0.0.1", "EHS_SMTP_PORT": "1",
            "EHS_MAIL_RETRIES": "1", "EHS_POOL_SIZE": "2",
        })
        # The release step: the schema to head once, before any host runs the new code.
        wait_until(lambda: subprocess.run([str(BIN / "ehs"), "migrate", str(ROOT / "production.ini")],
                                          env=env, capture_output=True, timeout=60).returncode == 0,
                   60, "ehs migrate through the relay")
        for host, address in web.items():
            network.start(host, [str(BIN / "pserve"), str(ROOT / "production.ini"), f"http_host={address}",
                                 "http_port=6543", "workers=2", f"forwarded_allow_ips={balancer}"],
                          tmp / f"{host}.log", env)
        (tmp / "haproxy.cfg").write_text(haproxy_conf(list(web.values())))
        network.start("lb", [TOOLS["haproxy"], "-db", "-f", str(tmp / "haproxy.cfg")], tmp / "haproxy.log")
        (tmp / "nginx.conf").write_text(NGINX_CONF.format(
            tmp=tmp, address=balancer, snippet=ROOT / "deploy" / "nginx" / "ehs-proxy.conf"))
        network.start("lb", [TOOLS["nginx"], "-c", str(tmp / "nginx.conf")], tmp / "nginx.log")
        for address in web.values():
            wait_until(lambda a=address: requests.get(f"http://{a}:6543/api/health/ready", timeout=2).ok,
                       60, f"web host {address}")
        wait_until(lambda: requests.get(public + "/api/health/ready", timeout=2).ok, 30, "the balancer")
        deployment = Deployment(network, public, web, engine)
        deployment.logs = tmp
        setup = deployment.session().post(public + "/api/setup", json={
            "organizationName": "Two Hosts Ltd", "name": "Ada", "email": "ada@hosts.example",
            "password": PASSWORD}, timeout=30)
        assert setup.status_code == 201, setup.text
        deployment.cookie = setup.cookies["service_session"]
        site = deployment.session().post(public + "/api/sites", json={"name": "Plant"}, timeout=30)
        deployment.site = site.json()["id"]
        yield deployment
    finally:
        network.close()
        engine.dispose()
        with admin_engine.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin_engine.dispose()


def incident(site: int, client_id: str) -> dict:
    return {"title": "Spill by the press", "type": "hazard", "severity": "low",
            "occurredAt": "2026-01-05T08:00:00Z", "siteId": site, "clientId": client_id}


def test_a_photo_uploaded_through_one_host_downloads_through_the_other(deployment):
    web1, web2 = (f"http://{address}:6543" for address in deployment.web.values())
    browser = deployment.session()
    number = browser.post(web1 + "/api/incidents", json=incident(deployment.site, str(uuid.uuid4())),
                          timeout=30).json()["number"]
    uploaded = browser.post(f"{web1}/api/incidents/{number}/attachments", timeout=30,
                            files={"file": ("press.png", samples.PNG, "image/png")})
    assert uploaded.status_code == 201, uploaded.text
    through_other = browser.get(web2 + uploaded.json()["url"], timeout=30)
    assert through_other.status_code == 200
    assert through_other.content == samples.PNG
    assert through_other.headers["Content-Type"] == "image/png"
    assert through_other.headers["X-Content-Type-Options"] == "nosniff"
    through_balancer = browser.get(deployment.public + uploaded.json()["url"], timeout=30)
    assert through_balancer.content == samples.PNG


def test_a_reporting_link_report_with_five_photos_at_the_size_limit_passes_the_proxy(deployment):
    """nginx's client_max_body_size (deploy/nginx/ehs-proxy.conf) was 11m:
    a reporting link's report may carry 5 files of MAX_UPLOAD_MB (10) each,
    and the service itself takes 5 x 10 MiB plus 1 MiB (ehs_core/intake.py)."""
    browser = deployment.session()
    link = browser.post(deployment.public + "/api/kiosks", json={"name": "Gate tablet"}, timeout=30)
    assert link.status_code == 201, link.text
    limit = 10 * 1024 * 1024
    photos = [samples.png(seed=n) for n in range(5)]
    photos = [("files", (f"IMG_000{n}.png", data + b"\0" * (limit - len(data)), "image/png"))
              for n, data in enumerate(photos)]
    report = {"title": "Oil by the gate", "type": "hazard", "severity": "low",
              "occurredAt": "2026-01-05T08:00:00Z", "siteId": deployment.site}
    filed = requests.post(deployment.public + "/api/kiosk/reports", timeout=120,
                          headers={"X-Kiosk-Token": link.json()["token"], "Origin": deployment.public},
                          files=[("report", (None, json.dumps(report), "application/json")), *photos])
    assert filed.status_code == 201, filed.text[:300]
    assert filed.json()["failedFiles"] == []


class Load:
    """16 clients filing reports through the balancer, each retrying a report
    (same clientId) until it is acknowledged, as the kiosk and the pages do."""

    def __init__(self, deployment: Deployment) -> None:
        self.deployment = deployment
        self.lock = threading.Lock()
        self.acknowledged: dict[str, int] = {}  # clientId -> number
        self.files: dict[int, bytes] = {}  # attachment id -> bytes
        self.failures = 0
        self.killed = threading.Event()
        self.deadline = time.monotonic() + DEADLINE

    def post(self, browser: requests.Session, path: str, **kw) -> requests.Response | None:
        while time.monotonic() < self.deadline:
            try:
                response = browser.post(self.deployment.public + path, timeout=20, **kw)
            except requests.RequestException:
                response = None
            if response is not None and response.status_code in (200, 201):
                return response
            assert response is None or response.status_code >= 500, response.text
            with self.lock:
                self.failures += 1
            time.sleep(0.1)
        return None

    def client(self, index: int) -> None:
        browser = self.deployment.session()
        for item in range(index, REPORTS, CLIENTS):
            client_id = str(uuid.uuid4())
            filed = self.post(browser, "/api/incidents", json=incident(self.deployment.site, client_id))
            if filed is None:
                return
            number = filed.json()["number"]
            with self.lock:
                self.acknowledged[client_id] = number
                if len(self.acknowledged) == KILL_AFTER:
                    self.deployment.network.kill_host("web1")
                    self.killed.set()
            if item % 20 == 0:
                data = samples.PDF + secrets.token_bytes(64)  # each file told apart
                stored = self.post(browser, f"/api/incidents/{number}/attachments",
                                   files={"file": (f"form-{item}.pdf", data, "application/pdf")})
                if stored is not None:
                    with self.lock:
                        self.files[stored.json()["id"]] = data


def test_reports_from_16_clients_are_numbered_without_gaps_and_survive_a_killed_host(deployment):
    with deployment.engine.connect() as conn:
        before = conn.execute(sa.text("SELECT count(*) FROM incidents")).scalar()
    load = Load(deployment)
    threads = [threading.Thread(target=load.client, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE + 30)
    assert load.killed.is_set(), "the load finished before a host was killed"
    assert len(load.acknowledged) == REPORTS, f"only {len(load.acknowledged)} reports acknowledged in time"

    with deployment.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT client_id, number FROM incidents WHERE number > :before"
                                    " ORDER BY number"), {"before": before}).all()
    numbers = [number for _client, number in rows]
    assert numbers == list(range(before + 1, before + REPORTS + 1)), "numbers have a gap or a repeat"
    assert dict(rows) == load.acknowledged, "an acknowledged report is missing or numbered differently"

    # Both hosts took reports before web1 died; every acknowledged file is still served.
    for host in deployment.web:
        log = (deployment.logs / f"{host}.log").read_text()
        assert 'POST /api/incidents 201' in log, f"{host} filed no report"  # its access log (ehs.access)
    browser = deployment.session()
    assert len(load.files) >= REPORTS // 20 - 1
    for attachment_id, data in load.files.items():
        served = browser.get(f"{deployment.public}/api/attachments/{attachment_id}", timeout=30)
        assert served.status_code == 200 and served.content == data
