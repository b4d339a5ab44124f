"""Races between worker processes: the service under gunicorn with 4 worker
processes on a fresh PostgreSQL database, hit by concurrent requests."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from ehs_core.auth.tokens import LIFETIMES, TokenPurpose, digest, new_secret
from ehs_core.testing import PASSWORD, free_port

PG = os.environ.get("EHS_TEST_POSTGRES_URL")
pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG, reason="needs EHS_TEST_POSTGRES_URL")]
ROOT = Path(__file__).resolve().parents[2]


class Server:
    def __init__(self, url: str, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.engine = sa.create_engine(url)

    def request(self, method: str, path: str, body: dict | None = None,
                cookie: str | None = None) -> tuple[int, dict | None, dict]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Origin": self.base}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if cookie:
            headers["Cookie"] = f"service_session={cookie}"
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                raw, status, head = response.read(), response.status, dict(response.headers)
        except urllib.error.HTTPError as error:
            raw, status, head = error.read(), error.code, dict(error.headers)
        return status, (json.loads(raw) if raw else None), head

    def login(self, email: str) -> str:
        status, _, headers = self.request("POST", "/api/auth/login", {"email": email, "password": PASSWORD})
        assert status == 200, status
        return headers["Set-Cookie"].split("service_session=", 1)[1].split(";", 1)[0]


def at_once(count: int, work) -> list:
    """Run work(i) in `count` threads released together."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    name = f"ehs_race_{uuid.uuid4().hex[:10]}"
    root = make_url(PG).set(drivername="postgresql+psycopg")
    admin_engine = sa.create_engine(root, isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = root.set(database=name).render_as_string(hide_password=False)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EHS_")}
    upload_dir = str(tmp_path_factory.mktemp("uploads"))
    env.update({"EHS_DATABASE_URL": url, "EHS_PUBLIC_URL": f"http://127.0.0.1:{port}",
                "EHS_HUEY_URL": "", "EHS_SESSION_SECURE": "false", "EHS_SMTP_PORT": str(free_port()),
                "EHS_UPLOAD_DIR": upload_dir})
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "ehs"), "migrate", str(ROOT / "production.ini")], env=env, check=True,
                   capture_output=True)
    log_path = Path(os.environ.get("EHS_RACE_LOG", str(tmp_path_factory.mktemp("log") / "server.log")))
    log_file = open(log_path, "w")  # open for the server's lifetime
    process = subprocess.Popen([str(bin_dir / "pserve"), str(ROOT / "production.ini"), f"http_port={port}"],
                               env=env, stdout=log_file, stderr=subprocess.STDOUT)
    server = Server(url, port)
    server.upload_dir = upload_dir
    server.log_path = log_path
    for _ in range(100):
        try:
            if server.request("GET", "/api/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.2)
    status, body, headers = server.request("POST", "/api/setup", {
        "organizationName": "Race Co", "name": "Root", "email": "root@race.example", "password": PASSWORD})
    assert status == 201, body
    server.admin = headers["Set-Cookie"].split("service_session=", 1)[1].split(";", 1)[0]
    server.site = server.request("POST", "/api/sites", {"name": "Plant"}, server.admin)[1]["id"]
    yield server
    process.terminate()
    process.wait(20)
    log_file.close()
    server.engine.dispose()
    with admin_engine.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin_engine.dispose()


def server_errors(server: Server) -> list[str]:
    """The service's logged errors (JSON lines), for failure messages."""
    lines = server.log_path.read_text().splitlines()
    return [json.loads(line).get("exc_info", "")[-900:] for line in lines
            if line.startswith("{") and '"ERROR"' in line][:2]


def create_user(server: Server, role: str) -> dict:
    email = f"{role}-{uuid.uuid4().hex[:8]}@race.example"
    status, body, _ = server.request("POST", "/api/users", {"name": role, "email": email, "role": role,
                                                            "password": PASSWORD}, server.admin)
    assert status == 201, body
    return body["user"]


def incident_body(site: int, **extra) -> dict:
    return {"title": "Race", "type": "hazard", "severity": "low", "occurredAt": "2026-01-05T08:00:00Z",
            "siteId": site, **extra}


def test_incident_numbers_stay_gap_free_across_worker_processes(server):
    before = server.request("GET", "/api/incidents?pageSize=1", cookie=server.admin)[1]["total"]
    results = at_once(40, lambda i: server.request("POST", "/api/incidents", incident_body(server.site),
                                                   server.admin))
    assert [status for status, _, _ in results] == [201] * 40
    numbers = sorted(body["number"] for _, body, _ in results)
    assert numbers == list(range(before + 1, before + 41))


def test_one_client_id_files_one_report_across_worker_processes(server):
    client_id = str(uuid.uuid4())
    results = at_once(12, lambda i: server.request(
        "POST", "/api/incidents", incident_body(server.site, clientId=client_id), server.admin))
    statuses = Counter(status for status, _, _ in results)
    assert statuses == {201: 1, 200: 11}
    assert len({body["number"] for _, body, _ in results}) == 1


def test_a_magic_link_signs_in_exactly_once_when_verified_twice_at_once(server):
    user = create_user(server, "reporter")
    for _ in range(3):
        secret = new_secret()
        with server.engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO auth_tokens (token_hash, purpose, user_id, created_at, expires_at) "
                "VALUES (:h, 'magic_link', :u, now(), :e)"),
                {"h": digest(secret), "u": user["id"],
                 "e": dt.datetime.now(dt.UTC) + LIFETIMES[TokenPurpose.magic_link]})
        results = at_once(4, lambda i, s=secret: server.request("POST", "/api/auth/magic-link/verify",
                                                                {"token": s}))
        assert sorted(status for status, _, _ in results) == [200, 400, 400, 400]


def test_the_login_limit_holds_across_worker_processes(server):
    user = create_user(server, "reporter")
    results = at_once(10, lambda i: server.request(
        "POST", "/api/auth/login", {"email": user["email"], "password": "wrong password here"}))
    assert [status for status, _, _ in results] == [401] * 10
    status, _, headers = server.request("POST", "/api/auth/login", {"email": user["email"],
                                                                    "password": PASSWORD})
    assert status == 429 and int(headers["Retry-After"]) > 0


def test_the_service_recovers_when_postgresql_drops_every_connection(server):
    """What the workers see of a PostgreSQL restart: every connection killed
    while requests are in flight. A request whose pooled connection is dead
    is run again on a fresh one (the pool is emptied of connections that old),
    so the service serves again without a restart of its own."""
    stop = threading.Event()
    statuses: list[int] = []

    def load() -> None:
        while not stop.is_set():
            try:
                statuses.append(server.request("GET", "/api/incidents?pageSize=5", cookie=server.admin)[0])
            except OSError:
                statuses.append(0)  # connection refused or reset
            except ValueError:
                statuses.append(-1)  # a body that is not JSON: an error escaped the service

    workers = [threading.Thread(target=load) for _ in range(4)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    database = make_url(server.engine.url).database
    with server.engine.connect() as conn:
        killed = conn.execute(sa.text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = :db AND pid <> pg_backend_pid()"), {"db": database}).scalar()
    time.sleep(1.0)
    stop.set()
    for worker in workers:
        worker.join(30)
    assert killed > 0
    # Requests in flight are re-run on fresh connections; one whose connection
    # dies after its work (while committing) is answered 503 "try again".
    # None gets a 500, none hangs.
    assert statuses and set(statuses) <= {200, 503}, (Counter(statuses), server_errors(server))
    after = [server.request("GET", "/api/incidents?pageSize=5", cookie=server.admin)[0] for _ in range(12)]
    assert after == [200] * 12


def test_reports_filed_right_after_postgresql_drops_every_connection_all_have_a_number(server):
    """Issue 35: after a PostgreSQL restart the first report of each worker
    was answered 201 with `"number": null` (the number was given in COMMIT
    and read back on another, dead, connection). Every connection of the
    service killed, then 16 reports at once: every answer is a 201 with its
    number, gap-free after the ones before, and none is a 500."""
    before = server.request("GET", "/api/incidents?pageSize=1", cookie=server.admin)[1]["total"]
    database = make_url(server.engine.url).database
    with server.engine.connect() as conn:
        killed = conn.execute(sa.text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = :db AND pid <> pg_backend_pid()"), {"db": database}).scalar()
    assert killed > 0
    results = at_once(16, lambda i: server.request("POST", "/api/incidents",
                                                   incident_body(server.site, severity="high"), server.admin))
    assert [status for status, _, _ in results] == [201] * 16, (
        [(status, body) for status, body, _ in results], server_errors(server))
    numbers = sorted(body["number"] for _, body, _ in results)
    assert numbers == list(range(before + 1, before + 17))
    assert all(body["reference"] == f"INC-{body['number']:04d}" for _, body, _ in results)


def test_an_upload_cut_off_mid_body_leaves_no_file_and_no_row(server, tmp_path):
    import socket

    number = server.request("POST", "/api/incidents", incident_body(server.site), server.admin)[1]["number"]
    upload_dir = Path(server.upload_dir)
    before = set(upload_dir.iterdir()) if upload_dir.exists() else set()
    boundary = "----cutoff"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
            "Content-Type: image/png\r\n\r\n").encode() + b"\x89PNG\r\n\x1a\n" + b"\x00" * 1000
    host, port = server.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            (f"POST /api/incidents/{number}/attachments HTTP/1.1\r\nHost: {host}:{port}\r\n"
             f"Origin: {server.base}\r\nCookie: service_session={server.admin}\r\n"
             f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
             f"Content-Length: 5000000\r\n\r\n").encode() + head)
        # the client goes away with most of the body unsent
    time.sleep(2)
    detail = server.request("GET", f"/api/incidents/{number}", cookie=server.admin)[1]
    assert detail["attachments"] == []
    after = set(upload_dir.iterdir()) if upload_dir.exists() else set()
    assert after == before


def answers_everywhere(server: Server, path: str, cookie: str, count: int = 32) -> Counter:
    """The statuses of `count` requests released together: more than the 4
    worker processes can take one at a time, so every worker answers some."""
    return Counter(status for status, _, _ in at_once(count, lambda i: server.request("GET", path,
                                                                                       cookie=cookie)))


def test_signing_out_takes_effect_on_the_next_request_in_every_worker(server):
    user = create_user(server, "supervisor")
    gone, kept = server.login(user["email"]), server.login(user["email"])
    assert answers_everywhere(server, "/api/auth/me", gone) == {200: 32}
    status, _, _ = server.request("POST", "/api/auth/logout", {}, gone)
    assert status == 204
    assert answers_everywhere(server, "/api/auth/me", gone) == {401: 32}
    # the user's other session is untouched
    assert answers_everywhere(server, "/api/auth/me", kept) == {200: 32}


def test_deactivation_takes_effect_on_the_next_request_in_every_worker(server):
    user = create_user(server, "supervisor")
    cookie = server.login(user["email"])
    assert answers_everywhere(server, "/api/incidents?pageSize=1", cookie) == {200: 32}
    status, body, _ = server.request("PATCH", f"/api/users/{user['id']}", {"active": False}, server.admin)
    assert status == 200 and body["active"] is False
    assert answers_everywhere(server, "/api/incidents?pageSize=1", cookie) == {401: 32}


def test_a_role_change_takes_effect_on_the_next_request_in_every_worker(server):
    user = create_user(server, "safety_manager")
    cookie = server.login(user["email"])
    assert answers_everywhere(server, "/api/users", cookie) == {200: 32}
    status, body, _ = server.request("PATCH", f"/api/users/{user['id']}", {"role": "reporter"}, server.admin)
    assert status == 200 and body["role"] == "reporter"
    assert answers_everywhere(server, "/api/users", cookie) == {403: 32}
    roles = {body["user"]["role"] for _, body, _ in at_once(
        32, lambda i: server.request("GET", "/api/auth/me", cookie=cookie))}
    assert roles == {"reporter"}
    # and back up: the higher role is granted as immediately
    server.request("PATCH", f"/api/users/{user['id']}", {"role": "safety_manager"}, server.admin)
    assert answers_everywhere(server, "/api/users", cookie) == {200: 32}


def test_a_read_records_the_sessions_activity(server):
    """Safe requests read in autocommit on PostgreSQL; the write a read may
    make, the session's last activity (once a minute), is kept all the same:
    the idle timeout counts from it."""
    cookie = server.login(create_user(server, "reporter")["email"])
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=11)
    touched = sa.text("SELECT last_seen_at FROM user_sessions WHERE token_hash = :h")
    with server.engine.begin() as conn:
        aged = conn.execute(sa.text("UPDATE user_sessions SET last_seen_at = :t WHERE token_hash = :h"),
                            {"t": long_ago, "h": digest(cookie)})
    assert aged.rowcount == 1
    assert server.request("GET", "/api/auth/me", cookie=cookie)[0] == 200
    with server.engine.connect() as conn:
        seen = conn.execute(touched, {"h": digest(cookie)}).scalar()
    assert seen > dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)


def answered_everywhere(server: Server, path: str, cookie: str, count: int = 32) -> list[dict]:
    """The bodies of `count` requests released together (see `answers_everywhere`)."""
    answers = at_once(count, lambda i: server.request("GET", path, cookie=cookie))
    assert {status for status, _, _ in answers} == {200}, server_errors(server)
    return [body for _, body, _ in answers]


def test_reference_data_changes_show_on_the_next_request_in_every_worker(server):
    """Sites, areas and people's names are kept in each worker's memory
    (ehs_core.refdata): a rename, a new area and a deactivation must still
    show on the very next request, whichever worker answers it."""
    site = server.request("POST", "/api/sites", {"name": "Depot"}, server.admin)[1]["id"]
    reporter = create_user(server, "reporter")
    cookie = server.login(reporter["email"])
    status, filed, _ = server.request("POST", "/api/incidents", incident_body(site), cookie)
    assert status == 201, filed
    path = f"/api/incidents/{filed['number']}"
    assert {body["siteName"] for body in answered_everywhere(server, path, server.admin)} == {"Depot"}
    assert reporter["id"] in {u["id"] for body in answered_everywhere(server, "/api/users/assignable",
                                                                      server.admin) for u in body}

    server.request("PATCH", f"/api/sites/{site}", {"name": "Depot East"}, server.admin)
    server.request("PATCH", f"/api/users/{reporter['id']}", {"name": "Renamed Reporter"}, server.admin)
    bodies = answered_everywhere(server, path, server.admin)
    shown = {(body["siteName"], body["reporter"]["name"]) for body in bodies}
    assert shown == {("Depot East", "Renamed Reporter")}

    area = server.request("POST", f"/api/sites/{site}/areas", {"name": "Yard"}, server.admin)[1]["id"]
    server.request("PATCH", path, {"areaId": area}, server.admin)
    assert {body["areaName"] for body in answered_everywhere(server, path, server.admin)} == {"Yard"}

    server.request("PATCH", f"/api/users/{reporter['id']}", {"active": False}, server.admin)
    assert not {u["id"] for body in answered_everywhere(server, "/api/users/assignable", server.admin)
                for u in body} & {reporter["id"]}


def test_the_export_streams_its_rows_in_a_read_without_a_transaction(server):
    """Safe requests read in autocommit on PostgreSQL; the export's
    server-side cursor needs a transaction all the same."""
    server.request("POST", "/api/incidents", incident_body(server.site, title="Exported"), server.admin)
    req = urllib.request.Request(server.base + "/api/incidents/export",
                                 headers={"Cookie": f"service_session={server.admin}"})
    with urllib.request.urlopen(req, timeout=30) as response:
        assert response.status == 200
        text = response.read().decode("utf-8-sig")
    assert text.splitlines()[0].startswith("reference,title,")
    assert any(",Exported," in line for line in text.splitlines()[1:])


def test_concurrent_demotions_cannot_remove_the_last_admins(server):
    admins = [create_user(server, "admin") for _ in range(2)]
    root = server.request("GET", "/api/auth/me", cookie=server.admin)[1]["user"]
    everyone = [root, *admins]
    results = at_once(3, lambda i: server.request("PATCH", f"/api/users/{everyone[i]['id']}",
                                                  {"role": "supervisor"}, server.admin))
    statuses = sorted(status for status, _, _ in results)
    # Two demotions pass. The third is refused either as the last admin's
    # (409) or, when the caller's own demotion committed first, because the
    # caller is no longer an admin (403): both leave one admin standing.
    assert statuses[:2] == [200, 200] and statuses[2] in (403, 409), statuses
    kept = [u for u, (s, _, _) in zip(everyone, results, strict=True) if s != 200]
    assert len(kept) == 1
    survivor = server.login(kept[0]["email"]) if kept[0]["id"] != root["id"] else server.admin
    users = server.request("GET", "/api/users", cookie=survivor)[1]
    assert [u["id"] for u in users if u["role"] == "admin" and u["active"]] == [kept[0]["id"]]
    # the other tests act as the first admin: give the role back
    if kept[0]["id"] != root["id"]:
        status, _, _ = server.request("PATCH", f"/api/users/{root['id']}", {"role": "admin"}, survivor)
        assert status == 200


def tally_rows(server: Server) -> dict:
    """The analytics plugin's tallies that are not zero (each the sum of its shards)."""
    with server.engine.connect() as conn:
        return {tuple(row[:7]): tuple(row[7:]) for row in conn.execute(sa.text(
            "SELECT organization_id, kind, month, site_id, type, k1, k2, sum(n), sum(total), sum(closed) "
            "FROM analytics_tallies GROUP BY organization_id, kind, month, site_id, type, k1, k2 "
            "HAVING sum(n) <> 0 OR sum(total) <> 0 OR sum(closed) <> 0"))}


def test_the_analytics_tallies_stay_exact_under_concurrent_writes(server):
    """Reports filed, corrected, moved through the workflow and given root
    causes and actions at once in 4 worker processes, and a site's zone
    changed meanwhile: the tallies kept are those rebuilt from the rows."""
    admin = server.login(create_user(server, "admin")["email"])
    zoned = server.request("POST", "/api/sites", {"name": "Zoned", "timezone": "America/Chicago"},
                           admin)[1]["id"]
    sites = [server.site, zoned]
    types = ("hazard", "near_miss", "injury", "illness")
    filed = at_once(12, lambda i: server.request("POST", "/api/incidents", incident_body(
        sites[i % 2], type=types[i % 4], occurredAt=f"2026-0{1 + i % 9}-28T{i:02d}:30:00Z"), admin))
    numbers = [body["number"] for _, body, _ in filed]

    def change(i: int) -> int:
        number = numbers[i % 3]
        if i % 4 == 0:
            return server.request("PATCH", f"/api/incidents/{number}", {"type": types[i % 4 - 1]}, admin)[0]
        if i % 4 == 1:
            return server.request("PATCH", f"/api/incidents/{number}",
                                  {"siteId": sites[i % 2], "occurredAt": f"2025-12-31T2{i % 4}:10:00Z"},
                                  admin)[0]
        if i % 4 == 2:
            return server.request("POST", f"/api/incidents/{number}/transitions", {"to": "triage"}, admin)[0]
        return server.request("POST", f"/api/incidents/{number}/root-causes",
                              {"category": "equipment", "description": "Found"}, admin)[0]

    assert set(at_once(24, change)) <= {200, 201, 409}

    def with_zone_change(i: int) -> int:
        if i == 0:
            return server.request("PATCH", f"/api/sites/{zoned}", {"timezone": "Asia/Kolkata"}, admin)[0]
        if i % 3 == 1:
            return server.request("POST", "/api/incidents", incident_body(zoned, type="injury"), admin)[0]
        if i % 3 == 2:
            return server.request("PATCH", f"/api/incidents/{numbers[i % 12]}",
                                  {"occurredAt": "2026-03-31T23:45:00Z"}, admin)[0]
        return server.request("POST", f"/api/incidents/{numbers[i % 12]}/actions",
                              {"title": "Fix", "dueDate": "2026-02-27"}, admin)[0]

    assert set(at_once(16, with_zone_change)) <= {200, 201, 409}, server_errors(server)
    kept = tally_rows(server)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EHS_")}
    env.update({"EHS_DATABASE_URL": server.engine.url.render_as_string(hide_password=False),
                "EHS_PUBLIC_URL": server.base, "EHS_HUEY_URL": "", "EHS_SESSION_SECURE": "false"})
    subprocess.run([sys.executable, "-m", "ehs_plugins.analytics.tallies", str(ROOT / "production.ini")],
                   env=env, check=True, capture_output=True)
    assert kept == tally_rows(server)


def waiting_everywhere(server: Server, cookie: str, count: int = 32) -> set[int]:
    """The menu's "waiting" count on the incident list, as every worker
    shows it (see `answers_everywhere`)."""
    def shown(_: int) -> int:
        request = urllib.request.Request(server.base + "/incidents", headers={
            "Cookie": f"service_session={cookie}", "Accept": "text/html"})
        with urllib.request.urlopen(request, timeout=30) as response:
            found = re.search(r'<span class="badge" aria-label="(\d+) waiting">', response.read().decode())
        return int(found[1]) if found else 0
    return set(at_once(count, shown))


def test_the_menus_counts_change_on_the_next_page_in_every_worker(server):
    """Each worker keeps a person's menu counts while the organization's
    queues version stands; reports numbered in their COMMIT and a
    transition each move it, whichever worker made them."""
    cookie = server.login(create_user(server, "supervisor")["email"])
    (before,) = waiting_everywhere(server, cookie)
    results = at_once(6, lambda i: server.request("POST", "/api/incidents", incident_body(server.site),
                                                  server.admin))
    assert [status for status, _, _ in results] == [201] * 6
    assert waiting_everywhere(server, cookie) == {before + 6}
    number = results[0][1]["number"]
    for status in ("triage", "closed"):
        assert server.request("POST", f"/api/incidents/{number}/transitions", {"to": status},
                              server.admin)[0] == 200
    assert waiting_everywhere(server, cookie) == {before + 5}
