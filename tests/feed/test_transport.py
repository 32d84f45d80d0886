"""feed.transport against a real HTTP/1.1 receiver on loopback: a session keeps its
connection for the next POST, cuts each POST at the timeout on a kept connection too
(a receiver trickling its answer), posts again on a new connection when the receiver
closed a kept one, and never reopens a connection by resolving the host itself."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import pytest

from feed import transport

OK = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"


class KeepAliveReceiver:
    """Reads requests off each connection, one after another, and lets
    `answer(connection_number, request_number, conn)` write each answer (it returns
    False to close the connection afterwards)."""

    def __init__(self, answer: Callable[[int, int, socket.socket], bool]) -> None:
        self.answer = answer
        self.requests: list[tuple[int, int]] = []  # (connection, request on it)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        number = 0
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(number, conn), daemon=True).start()
            number += 1

    def _serve(self, number: int, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        try:
            for n in range(1000):
                headers = b""
                while not headers.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    headers += line
                length = next(int(h.split(b":")[1]) for h in headers.split(b"\r\n")
                              if h.lower().startswith(b"content-length"))  # fmt: skip
                reader.read(length)
                self.requests.append((number, n))
                if not self.answer(number, n, conn):
                    return
        except OSError:
            return
        finally:
            conn.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def private(settings):
    settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = True


def _post(session: transport.Session) -> transport.Answer:
    return session.post(b'{"a": 1}', {"Content-Type": "application/json"})


def test_a_session_keeps_its_connection_for_the_next_posts(private):
    def answer(number, n, conn):
        conn.sendall(OK)
        return True

    receiver = KeepAliveReceiver(answer)
    try:
        with transport.Session(receiver.url, timeout=2) as session:
            outcomes = [_post(session).outcome for _ in range(3)]
    finally:
        receiver.close()
    assert outcomes == ["delivered"] * 3
    assert receiver.requests == [(0, 0), (0, 1), (0, 2)]  # one connection


def test_a_kept_connection_is_cut_at_the_timeout_while_the_receiver_trickles(private):
    def answer(number, n, conn):
        if n == 0:
            conn.sendall(OK)
            return True
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        for _ in range(40):  # a header byte every 0.1 s: never a whole answer
            time.sleep(0.1)
            conn.sendall(b"X")
        return False

    receiver = KeepAliveReceiver(answer)
    try:
        with transport.Session(receiver.url, timeout=1) as session:
            first = _post(session)
            started = time.monotonic()
            second = _post(session)
            elapsed = time.monotonic() - started
    finally:
        receiver.close()
    assert first.outcome == "delivered"
    assert (second.outcome, second.detail) == ("timeout", "no answer within the timeout")
    assert receiver.requests == [(0, 0), (0, 1)]  # on the kept connection
    assert 0.9 <= elapsed < 1.6
    assert 900 <= second.duration_ms < 1600


def test_a_kept_connection_the_receiver_closed_is_replaced_once(private):
    def answer(number, n, conn):
        conn.sendall(OK)
        return number != 0  # the first connection is closed after its first answer

    receiver = KeepAliveReceiver(answer)
    try:
        with transport.Session(receiver.url, timeout=2) as session:
            first = _post(session)
            time.sleep(0.1)  # the receiver's close reaches the kept socket
            second = _post(session)
            third = _post(session)
    finally:
        receiver.close()
    assert [a.outcome for a in (first, second, third)] == ["delivered"] * 3
    # The second POST found the kept connection closed: made on a new one, kept too.
    assert receiver.requests == [(0, 0), (1, 0), (1, 1)]


def test_an_answer_longer_than_what_is_read_does_not_keep_the_connection(private):
    def answer(number, n, conn):
        body = b"x" * (transport.MAX_ANSWER_BYTES * 2)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        return True

    receiver = KeepAliveReceiver(answer)
    try:
        with transport.Session(receiver.url, timeout=2) as session:
            outcomes = [_post(session).outcome for _ in range(2)]
    finally:
        receiver.close()
    assert outcomes == ["delivered"] * 2
    assert receiver.requests == [(0, 0), (1, 0)]


def test_a_pinned_connection_never_reopens_by_name(private):
    connection = transport._Pinned("localhost", 80)
    with pytest.raises(ConnectionError):
        connection.request("POST", "/hook", body=b"{}")


def test_a_session_refused_by_the_guard_refuses_each_post(settings):
    settings.GROUNDING_WEBHOOK_ALLOW_PRIVATE = False
    with transport.Session("https://127.0.0.1/hook", timeout=2) as session:
        answers = [_post(session) for _ in range(2)]
    assert [(a.outcome, a.detail) for a in answers] == [
        ("refused_address", "refused: private or loopback address")
    ] * 2
