"""End-to-end tests of slaqd's HTTP side under attack (docs/security.md):
foreign Host headers (DNS rebinding), slowloris, and a job's history served
in pages so that one request costs O(page), not O(history)."""

import json
import socket
import sqlite3
import statistics
import threading
import time
import urllib.error
import urllib.request

from conftest import session, wait_for


def _get(d, path, host=None, timeout=5):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (d.port, path))
    if host is not None:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def test_foreign_host_headers_are_refused(daemon_factory):
    d = daemon_factory("--http-allow-host", "slaq.example:8443")
    for host in ("evil.example", "evil.example:%d" % d.port,
                 "127.0.0.1.evil.example:%d" % d.port, "localhost:1"):
        status, body = _get(d, "/api/jobs", host=host)
        assert status == 421, host
        assert body["code"] == "misdirected"
    status, _ = _get(d, "/", host="evil.example")
    assert status == 421
    for host in ("127.0.0.1:%d" % d.port, "localhost:%d" % d.port,
                 "LOCALHOST:%d" % d.port, "[::1]:%d" % d.port,
                 "slaq.example:8443"):
        status, body = _get(d, "/api/status", host=host)
        assert status == 200 and body["ok"], host


def test_slowloris_leaves_the_api_reachable(slaqd):
    slow = []
    for _ in range(600):
        s = socket.socket()
        s.settimeout(2)
        s.bind(("127.0.0.2", 0))  # the attacker's address
        try:
            s.connect(("127.0.0.1", slaqd.port))
            s.sendall(b"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
        except OSError:
            pass
        slow.append(s)
    try:
        t0 = time.monotonic()
        status, body = _get(slaqd, "/api/status", timeout=5)
        assert status == 200 and body["ok"]
        assert time.monotonic() - t0 < 3
        # Beyond the per-address limit the attacker's connections are shut.
        closed = 0
        for s in slow:
            try:
                s.settimeout(0.01)
                closed += s.recv(1) == b""
            except (socket.timeout, BlockingIOError):
                pass
            except OSError:
                closed += 1
        assert closed >= 600 - 32 - 10, closed
    finally:
        for s in slow:
            s.close()


def test_trickled_headers_are_cut_off_after_the_total_deadline(slaqd):
    """A client sending a header byte every 2 s (under the 10 s idle
    timeout) from ten addresses is shut down 10 s after it connected."""
    slow = []
    for i in range(10):
        s = socket.socket()
        s.settimeout(2)
        s.bind(("127.0.0.%d" % (3 + i), 0))
        s.connect(("127.0.0.1", slaqd.port))
        s.sendall(b"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
        slow.append(s)
    t0 = time.monotonic()
    closed_at = {}
    try:
        while len(closed_at) < len(slow) and time.monotonic() - t0 < 25:
            for s in slow:
                if s in closed_at:
                    continue
                try:
                    s.sendall(b"a")
                    s.settimeout(0.01)
                    if s.recv(1) == b"":
                        closed_at[s] = time.monotonic() - t0
                except (socket.timeout, BlockingIOError):
                    pass
                except OSError:
                    closed_at[s] = time.monotonic() - t0
            time.sleep(2)
        assert len(closed_at) == len(slow), "still open after %.0f s" % (
            time.monotonic() - t0)
        assert min(closed_at.values()) >= 9, closed_at
        st = slaqd.request({"type": "status"})
        assert st["http_header_timeouts_total"] >= len(slow)
        status, body = _get(slaqd, "/api/status", timeout=5)
        assert status == 200 and body["ok"]
    finally:
        for s in slow:
            s.close()


def test_history_is_served_in_pages(slaqd):
    s, f = session(slaqd.sock)
    s.sendall(b'{"type":"hello","name":"pages"}\n')
    jid = json.loads(f.readline())["job"]
    s.sendall(b"".join(b'{"type":"report","iter":%d,"loss":%g}\n'
                       % (i, 1.0 / (i + 1)) for i in range(2500)))
    wait_for(lambda: slaqd.job(jid)["reports"] == 2500, what="the reports")
    iters, after, pages = [], -1, 0
    while after is not None:
        status, page = _get(slaqd, "/api/jobs/%d/history?after=%d&limit=1000"
                            % (jid, after))
        assert status == 200 and len(page["rows"]) <= 1000
        iters += [r[0] for r in page["rows"]]
        after = page["next"]
        pages += 1
    assert iters == list(range(2500)) and pages == 3
    status, body = _get(slaqd, "/api/jobs/%d/history?limit=x" % jid)
    assert status == 400
    status, body = _get(slaqd, "/api/jobs/999/history")
    assert status == 404
    s.close()


def test_a_long_history_costs_little_per_request(daemon_factory, tmp_path):
    state = tmp_path / "s"
    d = daemon_factory(state=state)
    small = d.submit("true")
    d.wait_state(small, "done")
    d.stop()
    con = sqlite3.connect(str(state / "state.db"))
    con.execute("INSERT INTO jobs(id, name, cmd, cwd, weight, target, "
                "max_iters, max_time, managed, state, pid, pstart, "
                "submitted, started, ended) VALUES (2, 'long', '[]', '/', 1, "
                "0, 0, 0, 0, 'done', 0, 0, ?, ?, ?)", (time.time(),) * 3)
    con.executemany("INSERT INTO reports(job, iter, loss, cpu_s, samples, t) "
                        "VALUES (2, ?, ?, 0.01, 10, ?)",
                    ((i, 1.0 / (i + 1), 1.0 + i * 1e-3)
                     for i in range(250000)))
    con.commit()
    con.close()
    d = daemon_factory(state=state)
    times = []
    for _ in range(7):
        t0 = time.monotonic()
        status, body = _get(d, "/api/jobs/2")
        times.append(time.monotonic() - t0)
        assert status == 200
    hist = body["job"]["history"]
    assert len(hist) <= 500 and hist[0][0] == 0 and hist[-1][0] == 249999
    steps = [b[0] - a[0] for a, b in zip(hist, hist[1:])]
    assert max(steps) <= 2 * 250000 / 499  # evenly spread
    assert statistics.median(times) < 0.025, times


def test_slowloris_from_the_same_address_leaves_the_dashboard_usable(slaqd):
    """Every client of a single machine is 127.0.0.1: a slowloris there,
    keeping 40 connections open (opening another as soon as one is shut)
    and trickling their headers, must not lock the dashboard out for the
    other clients of that address."""
    stop = threading.Event()
    held = []

    def attacker():
        while not stop.is_set():
            for s in list(held):
                try:
                    s.sendall(b"a")
                except OSError:
                    held.remove(s)
                    s.close()
            while len(held) < 40 and not stop.is_set():
                s = socket.socket()
                s.settimeout(2)
                try:
                    s.connect(("127.0.0.1", slaqd.port))
                    s.sendall(b"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"X-a: ")
                    held.append(s)
                except OSError:
                    s.close()
                    break
            stop.wait(0.2)

    t = threading.Thread(target=attacker)
    t.start()
    try:
        wait_for(lambda: len(held) >= 40, what="the attacker's connections")
        def answered():
            t0 = time.monotonic()
            try:
                status, body = _get(slaqd, "/api/status", timeout=3)
                return status == 200 and body["ok"] and \
                    time.monotonic() - t0 < 2
            except OSError:
                return False

        # A user who waited once in vain asks again: each request counts
        # as answered when it or its one retry is (a loaded machine can
        # delay one answer past 2 s; a lock-out delays every one).
        ok, tries, slow = 0, 0, 0
        end = time.monotonic() + 5
        while time.monotonic() < end:
            tries += 1
            first = answered()
            slow += not first
            ok += first or answered()
            time.sleep(0.2)
        assert ok == tries, "%d of %d requests answered (%d at the first " \
            "try)" % (ok, tries, tries - slow)
        assert slow <= tries // 4, "%d of %d needed a retry" % (slow, tries)
    finally:
        stop.set()
        t.join()
        for s in held:
            s.close()
