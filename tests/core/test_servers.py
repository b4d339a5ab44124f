"""The production server as `pserve production.ini` runs it: gunicorn with
the buffering worker (ehs_core/buffering.py) and the client address taken
from a trusted proxy only (ehs_core/servers.py)."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from ehs_core import buffering
from ehs_core.auth.ratelimit import LOGIN_CLIENT
from ehs_core.servers import ForwardedClient
from ehs_core.testing import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def production_server(tmp_path_factory):
    """`pserve production.ini` on loopback with its own SQLite database and
    in-process jobs; everything else as production.ini says (4 workers)."""
    tmp = tmp_path_factory.mktemp("production")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EHS_")}
    env.update({"EHS_DATABASE_URL": f"sqlite:///{tmp / 'ehs.sqlite'}", "EHS_HUEY_URL": "",
                "EHS_PUBLIC_URL": f"http://127.0.0.1:{port}", "EHS_SESSION_SECURE": "false",
                "EHS_SMTP_PORT": str(free_port()), "EHS_UPLOAD_DIR": str(tmp / "uploads")})
    subprocess.run([str(BIN / "ehs"), "migrate", str(ROOT / "production.ini")], env=env, check=True,
                   capture_output=True)
    log = open(tmp / "server.log", "w")  # open for the server's lifetime
    process = subprocess.Popen([str(BIN / "pserve"), str(ROOT / "production.ini"), f"http_port={port}"],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/api/health", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise AssertionError((tmp / "server.log").read_text()[-3000:]) from None
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def normal_request(port: int) -> tuple[int, float]:
    """What a browser asks first, a database read (`GET /api/setup`).
    Returns the status and the seconds it took."""
    started = time.monotonic()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/setup", timeout=5) as response:
        assert json.loads(response.read()) == {"needsSetup": True}
        return response.status, time.monotonic() - started


class SlowClients:
    """Connections that send a request a byte at a time: half of them still
    in the headers (slowloris), half in a JSON body."""

    def __init__(self, port: int, count: int) -> None:
        self.sockets: list[socket.socket] = []
        for n in range(count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            if n % 2:
                sock.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             b"Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{")
            else:
                sock.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            self.sockets.append(sock)
        self.stopping = threading.Event()
        self.feeder = threading.Thread(target=self.feed, daemon=True)
        self.feeder.start()

    def feed(self) -> None:
        while not self.stopping.wait(0.5):
            for sock in self.sockets:
                try:
                    sock.send(b" ")
                except OSError:
                    pass

    def close(self) -> None:
        self.stopping.set()
        self.feeder.join(5)
        for sock in self.sockets:
            sock.close()


def still_open(sock: socket.socket) -> bool:
    """True while the server keeps the connection and has sent nothing."""
    sock.setblocking(False)
    try:
        return sock.recv(1024) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def test_fifty_slow_clients_do_not_stop_normal_requests(production_server):
    slow = SlowClients(production_server, 50)
    try:
        time.sleep(1)  # every slow connection has been accepted and started
        answered = []
        until = time.monotonic() + 7  # longer than gunicorn's own 5 s wait for a first byte
        while time.monotonic() < until:
            answered.append(normal_request(production_server))
        held = [still_open(sock) for sock in slow.sockets]
        # A client still trickling its head when HEAD_TIMEOUT has passed is dropped.
        time.sleep(max(0.0, buffering.HEAD_TIMEOUT + 1.5 - 8))
        heads_after = [still_open(sock) for n, sock in enumerate(slow.sockets) if n % 2 == 0]
    finally:
        slow.close()
    assert all(held), "the slow connections were held open while normal requests were served"
    assert len(answered) >= 10
    assert {status for status, _ in answered} == {200}
    assert max(seconds for _, seconds in answered) < 2, answered
    assert not any(heads_after)


def raw_exchange(port: int, payload: bytes, answers: int = 1) -> list[bytes]:
    """Send raw bytes on one connection; return the status lines received."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        data = b""
        while data.count(b"HTTP/1.1 ") < answers or not data.endswith((b"}", b"]")):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return re.findall(rb"HTTP/1\.1 \d{3} [A-Za-z ]+", data)


def test_requests_of_every_shape_are_still_served(production_server):
    port = production_server
    get = b"GET /api/setup HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    # Two requests sent back to back on one connection.
    assert raw_exchange(port, get + get, answers=2) == [b"HTTP/1.1 200 OK"] * 2

    def login(body: bytes, extra: bytes = b"") -> bytes:
        return (b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)

    wrong = json.dumps({"email": "nobody@acme.test", "password": "not the password"}).encode()
    assert raw_exchange(port, login(wrong)) == [b"HTTP/1.1 401 Unauthorized"]
    # A body larger than what is buffered before a thread takes it.
    large = json.dumps({"email": "nobody@acme.test", "password": "x" * (buffering.BODY_BUFFER * 2)}).encode()
    assert raw_exchange(port, login(large)) == [b"HTTP/1.1 400 Bad Request"]
    # A client that waits for 100 Continue before sending its body.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        request = login(wrong, b"Expect: 100-continue\r\n")
        head, body = request.split(b"\r\n\r\n", 1)
        sock.sendall(head + b"\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(body)
        assert sock.recv(65536).startswith(b"HTTP/1.1 401 Unauthorized")
    # A request trickled a byte at a time, but within the time limits.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for byte in login(wrong):
            sock.send(bytes([byte]))
            time.sleep(0.005)
        assert sock.recv(65536).startswith(b"HTTP/1.1 401 Unauthorized")
    # A chunked body.
    chunked = (b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(wrong):x}".encode() + b"\r\n" + wrong
               + b"\r\n0\r\n\r\n")
    assert raw_exchange(port, chunked) == [b"HTTP/1.1 401 Unauthorized"]


def seen_address(trusted: str, peer: str, forwarded: str | None) -> str:
    """REMOTE_ADDR as the application sees it behind ForwardedClient."""
    seen = {}

    def app(environ, start_response):
        seen["addr"] = environ["REMOTE_ADDR"]
        return []

    environ = {"REMOTE_ADDR": peer}
    if forwarded is not None:
        environ["HTTP_X_FORWARDED_FOR"] = forwarded
    ForwardedClient(app, trusted)(environ, None)
    return seen["addr"]


@pytest.mark.parametrize(("trusted", "peer", "forwarded", "client"), [
    # Anyone else's header is ignored: a client cannot choose its address.
    ("127.0.0.1", "203.0.113.9", "198.51.100.1", "203.0.113.9"),
    # The proxy appended the address it saw; what the client wrote is further left.
    ("127.0.0.1", "127.0.0.1", "10.1.1.1, 203.0.113.9", "203.0.113.9"),
    # Several proxies of ours (a balancer and HAProxy), given as a network.
    ("10.0.0.0/24,127.0.0.1", "10.0.0.10", "203.0.113.9, 10.0.0.5", "203.0.113.9"),
    ("::1", "::1", "2001:db8::7", "2001:db8::7"),
    # Garbage where a proxy of ours wrote: nothing is believed.
    ("127.0.0.1", "127.0.0.1", "203.0.113.9, not-an-address", "127.0.0.1"),
    ("127.0.0.1", "127.0.0.1", None, "127.0.0.1"),
    # `*` trusts every peer, but only for one hop.
    ("*", "192.0.2.50", "10.1.1.1, 203.0.113.9", "203.0.113.9"),
])
def test_the_client_address_comes_only_from_trusted_proxies(trusted, peer, forwarded, client):
    assert seen_address(trusted, peer, forwarded) == client


def login_from(port: int, source: str, forwarded: str, email: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    body = json.dumps({"email": email, "password": "Summer2026!!"})
    conn.request("POST", "/api/auth/login", body=body,
                 headers={"Content-Type": "application/json", "X-Forwarded-For": forwarded})
    status = conn.getresponse().status
    conn.close()
    return status


def test_a_client_cannot_escape_the_sign_in_bound_by_naming_another_address(production_server):
    """production.ini trusts 127.0.0.1 (a proxy on the same host); a client
    connecting from 127.0.0.2 is not a proxy, whatever X-Forwarded-For says."""
    for n in range(LOGIN_CLIENT.count):
        assert login_from(production_server, "127.0.0.2", f"198.51.100.{n}", f"worker{n}@acme.test") == 401
    assert login_from(production_server, "127.0.0.2", "198.51.100.200", "late@acme.test") == 429
    # The same header from the trusted proxy names a different client.
    assert login_from(production_server, "127.0.0.1", "198.51.100.200", "late@acme.test") == 401


def test_a_thread_stops_waiting_for_a_client_that_stalls_mid_body(monkeypatch):
    """The rest of a body larger than the buffer is read in a thread; a
    client that stops sending does not keep that thread."""
    monkeypatch.setattr(buffering, "IO_TIMEOUT", 0.3)
    server_side, client_side = socket.socketpair()
    with server_side, client_side:
        source = buffering.ReadTimeout(server_side)
        client_side.sendall(b"part of a photo")
        assert source.recv(1024) == b"part of a photo"
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            source.recv(1024)
        assert 0.25 < time.monotonic() - started < 2
