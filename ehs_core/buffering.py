"""A gunicorn worker that slow clients cannot tie up (production.ini's
`worker_class`).

gunicorn's threaded worker (gthread) hands a connection to a thread as soon
as its first bytes arrive, and the thread then waits for the rest of the
request as long as the client takes: a few clients sending a byte a second
hold every thread, and everyone else waits (slowloris; OWASP "Denial of
Service" cheat sheet, ASVS 5 13.1.x). This worker keeps gthread's threads,
keep-alive and graceful shutdown, and changes one thing: a request reaches a
thread only once its whole head, and its body up to `BODY_BUFFER`, have
arrived. Until then the connection waits in the worker's event loop, where
it costs a socket and its bytes, nothing more:

- the head must arrive within `HEAD_TIMEOUT` seconds of the first wait, and
  head and buffered body within `REQUEST_TIMEOUT`, or the connection is
  closed (as nginx's client_header_timeout and client_body_timeout);
- once in a thread, a read that waits more than `IO_TIMEOUT` seconds ends
  the request (the rest of an upload larger than the buffer);
- a head larger than gunicorn's limits goes to a thread at once, where the
  parser refuses it (400/431); so does a request with a chunked body or
  `Expect: 100-continue` once its head is in.

Answers are written from the thread as in gthread: a client that reads a
large download slowly holds its thread until the kernel has taken the last
bytes. A proxy in front (deploy/nginx) buffers answers too, and whole
uploads; this worker makes `pserve production.ini` hold up without one.
"""

from __future__ import annotations

import errno
import re
import select
import selectors
import socket
import time
from functools import partial
from typing import Any

from gunicorn import http
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import TConn, ThreadWorker

HEAD_TIMEOUT = 10.0
REQUEST_TIMEOUT = 30.0
IO_TIMEOUT = 30.0
#: Bodies up to this size arrive whole before a thread is used (the JSON
#: bodies of everyday use). Larger ones (photos, very long texts) are read in
#: the thread, each read bounded by IO_TIMEOUT. At most worker_connections x
#: (head + BODY_BUFFER) bytes wait in memory per worker.
BODY_BUFFER = 64 * 1024

_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r\n", re.IGNORECASE)
_CHUNKED = re.compile(rb"\r\ntransfer-encoding[ \t]*:[^\r\n]*chunked", re.IGNORECASE)
_EXPECT_CONTINUE = re.compile(rb"\r\nexpect[ \t]*:[ \t]*100-continue", re.IGNORECASE)


class Connection(TConn):
    """gthread's connection, with the bytes received before a thread took it."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.ready = False  # the buffered request is complete: go to a thread
        self.restart(b"", 0.0)

    def restart(self, received: bytes, now: float) -> None:
        """Start receiving the next request, from bytes already read ahead."""
        self.received = bytearray(received)
        self.head_deadline = now + HEAD_TIMEOUT
        self.scanned = 0  # where the search for the head's end resumes
        self.head_end = -1
        self.body_wanted = 0

    def request_complete(self, head_limit: int) -> bool:
        """Whether the request's head and its body (as much of it as is
        buffered) are in, or enough to let the parser refuse it. Incremental:
        a client sending a byte at a time costs a byte's work each time."""
        if self.head_end < 0:
            end = self.received.find(b"\r\n\r\n", max(0, self.scanned - 3))
            self.scanned = len(self.received)
            if end < 0:
                return len(self.received) > head_limit
            self.head_end = end + 4
            head = bytes(self.received[: end + 2])
            if _EXPECT_CONTINUE.search(head) or _CHUNKED.search(head):
                # The client sends its body once the thread answers 100
                # Continue; a chunked body is read in the thread.
                return True
            match = _CONTENT_LENGTH.search(head)
            self.body_wanted = min(int(match.group(1)) if match else 0, BODY_BUFFER)
        return len(self.received) - self.head_end >= self.body_wanted


class ReadTimeout:
    """What the request parser reads from: the client's socket, where a read
    that waits more than IO_TIMEOUT seconds fails (the thread's wait for the
    rest of a large body is bounded; answers are written without a limit, so
    a slow download is not cut short)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def recv(self, size: int) -> bytes:
        poller = select.poll()
        poller.register(self.sock, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)
        if not poller.poll(IO_TIMEOUT * 1000):
            raise TimeoutError(f"the client sent nothing for {IO_TIMEOUT:.0f} seconds")
        return self.sock.recv(size)


class BufferingWorker(ThreadWorker):
    """gthread, except that every request is received in the event loop
    before a thread serves it (see the module's docstring)."""

    def head_limit(self) -> int:
        cfg = self.cfg
        return cfg.limit_request_line + cfg.limit_request_fields * (cfg.limit_request_field_size + 2) + 4

    def accept(self, listener: Any) -> None:
        try:
            client, address = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        self.enqueue_req(Connection(self.cfg, client, address, listener.getsockname()))

    def enqueue_req(self, conn: Any) -> None:
        """Every way into a thread passes here (a new connection, a kept-alive
        one becoming readable, bytes read ahead): receive the request first."""
        if (conn.ready or not isinstance(conn, Connection) or self.cfg.is_ssl
                or negotiation.prior_knowledge_allowed(self.cfg, conn.client)):
            conn.ready = False
            super().enqueue_req(conn)
            return
        now = time.monotonic()
        conn.sock.setblocking(False)
        # On a kept-alive connection, bytes read ahead belong to this request.
        conn.restart(conn.parser.unreader.take_buffered() if conn.parser is not None else b"", now)
        if conn.request_complete(self.head_limit()):
            self._hand_over(conn)
            return
        # Waiting connections share gthread's deadline queue; every entry
        # gets the same delay, so the queue stays in deadline order.
        conn.timeout = now + REQUEST_TIMEOUT
        self.pending_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._receive, conn))

    def _receive(self, conn: Connection, _sock: Any) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            conn.received += data
            if conn.request_complete(self.head_limit()):
                self._stop_waiting(conn)
                self._hand_over(conn)
                return
            if conn.head_end >= 0 or time.monotonic() < conn.head_deadline:
                return
        # The client went away, or has trickled its head for too long.
        self._stop_waiting(conn)
        self.nr_conns -= 1
        conn.close()

    def _stop_waiting(self, conn: Connection) -> None:
        self.poller.unregister(conn.sock)
        self.pending_conns.remove(conn)

    def _hand_over(self, conn: Connection) -> None:
        if conn.parser is None:
            conn.parser = http.get_parser(self.cfg, ReadTimeout(conn.sock), conn.client)
        conn.parser.unreader.unread(bytes(conn.received))
        conn.received = bytearray()
        conn.data_ready = True
        conn.ready = True
        self.enqueue_req(conn)
