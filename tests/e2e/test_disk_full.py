"""End-to-end test of slaqd on a full disk (docs/security.md): on a small
tmpfs that fills up, failed commits are visible, state changes are refused
with a clear reply, reports wait in memory, and once there is room again
every one of them is in the database exactly once."""

import json
import os
import re
import sqlite3
import subprocess
import time

import pytest

from conftest import http_get, session, wait_for


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs",
                        str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (%s)" % p.stderr.strip())
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)])


def _fill(path):
    """Writes a file until the file system is full."""
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def _count(db, job):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT count(*), count(DISTINCT iter) FROM "
                           "reports WHERE job = ?", (job,)).fetchone()
    finally:
        con.close()


def test_full_disk_loses_no_report_and_refuses_changes(daemon_factory,
                                                       small_disk):
    d = daemon_factory("--policy", "slaq", state=small_disk / "state")
    db = os.path.join(d.state, "state.db")
    s, f = session(d.sock)
    s.sendall(b'{"type":"hello","name":"disk"}\n')
    jid = json.loads(f.readline())["job"]
    report = b'{"type":"report","iter":%d,"loss":%.6f,"cpu_s":0.01}\n'
    s.sendall(b"".join(report % (i, 1.0 / (i + 1)) for i in range(100)))
    wait_for(lambda: _count(db, jid)[0] == 100, what="100 stored reports")

    _fill(small_disk / "filler")
    s.sendall(b"".join(report % (i, 1.0 / (i + 1))
                       for i in range(100, 20100)))
    st = wait_for(lambda: (lambda r: r if not r["store_ok"] else None)(
        d.request({"type": "status"})), what="the store to fail")
    assert st["store_failures_total"] >= 1 and st["store_error"]
    metrics = http_get(d, "/metrics")[1]
    assert "slaq_store_ok 0" in metrics
    # slaq_state_free_bytes sees the full file system (SlaqStateDiskLow).
    wait_for(lambda: d.request({"type": "status"})["state_free_bytes"]
             < 65536, what="state_free_bytes to show the full disk")
    assert re.search(r"^slaq_state_free_bytes \d+$", metrics, re.M)
    # State changes are refused, saying why; nothing changes.
    p = d.cli("submit", "--", "true", check=False)
    assert p.returncode == 1 and p.stdout == ""
    assert "cannot write its database" in p.stderr
    p = d.cli("policy", "fair", check=False)
    assert p.returncode == 1 and "cannot write its database" in p.stderr
    assert d.request({"type": "status"})["policy"] == "slaq"
    assert [j["id"] for j in d.jobs()] == [jid]
    wait_for(lambda: d.job(jid)["reports"] == 20100, what="all accepted")
    assert d.request({"type": "status"})["reports_pending"] > 0
    # Shown only once recorded: the history comes from the database.
    assert d.job(jid)["history"][-1][0] < 20099

    os.unlink(small_disk / "filler")
    wait_for(lambda: d.request({"type": "status"})["store_ok"], timeout=15,
             what="the store to recover")
    assert _count(db, jid) == (20100, 20100)
    assert d.job(jid)["history"][-1][0] == 20099
    # The gauge follows the file system: within 256 KiB of what statvfs
    # says at the same moment (the database and its WAL still change size
    # for a while after the recovery, so both are read together).
    def gauge_matches():
        free = os.statvfs(d.state)
        gauge = d.request({"type": "status"})["state_free_bytes"]
        return gauge > 262144 and \
            abs(gauge - free.f_bavail * free.f_frsize) <= 262144
    wait_for(gauge_matches, what="state_free_bytes to show the room made")
    assert d.submit("true") == jid + 1
    log = d.read_log()
    assert log.count("cannot write the database") == 1
    assert log.count("writing works again") == 1
    s.close()
    d.kill9()
    d2 = daemon_factory(state=d.state)
    assert d2.job(jid)["id"] == jid
    assert _count(db, jid) == (20100, 20100)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def test_reports_lost_in_a_crash_on_a_full_disk_are_counted(daemon_factory,
                                                            small_disk):
    """A job reports, the disk fills, it reports more and exits, and slaqd
    is killed -9: the reports held in memory are gone. The next slaqd
    counts them in reports_lost_total (kept across restarts) and tells
    them in the job's events, which slaq show prints."""
    d = daemon_factory(state=small_disk / "state")
    db = os.path.join(d.state, "state.db")
    s, f = session(d.sock)
    s.sendall(b'{"type":"hello","name":"full"}\n')
    jid = json.loads(f.readline())["job"]
    report = b'{"type":"report","iter":%d,"loss":%.6f,"cpu_s":0.01}\n'
    s.sendall(b"".join(report % (i, 1.0 / (i + 1)) for i in range(194)))
    wait_for(lambda: _count(db, jid)[0] == 194, what="194 stored reports")
    _fill(small_disk / "filler")
    s.sendall(b"".join(report % (i, 1.0 / (i + 1)) for i in range(194, 801)))
    wait_for(lambda: d.job(jid)["reports"] == 801, what="all accepted")
    wait_for(lambda: not d.request({"type": "status"})["store_ok"],
             what="the store to fail")
    s.close()  # the job is gone, and will not send them again
    time.sleep(0.2)  # a few ticks: the ledger follows the held reports
    d.kill9()
    os.unlink(small_disk / "filler")
    assert _count(db, jid)[0] == 194

    d2 = daemon_factory(state=d.state)
    st = d2.request({"type": "status"})
    assert st["reports_lost_total"] == 607, st["reports_lost_total"]
    out = d2.cli("show", str(jid)).stdout
    assert "607 reports accepted while the database could not be written " \
        "(iterations 194 to 800) were lost when slaqd stopped" in out, out
    assert "reports_lost_total 607" in "\n".join(
        line for line in http_get(d2, "/metrics")[1].splitlines()
        if line.startswith("slaq_reports_lost_total")).replace(
            "slaq_", "")
    # Counted once: another restart neither loses nor recounts them.
    d2.stop()
    d3 = daemon_factory(state=d.state)
    assert d3.request({"type": "status"})["reports_lost_total"] == 607
    assert d3.cli("show", str(jid)).stdout.count("were lost when") == 1


def test_reports_a_live_client_sends_again_are_not_counted_lost(
        daemon_factory, small_disk):
    """The same crash, but the job lives on: its client keeps what was not
    acknowledged and sends it again to the next slaqd, so nothing is lost
    and nothing is counted lost when the job ends."""
    import slaq
    d = daemon_factory("--enforce", "none", state=small_disk / "state")
    db = os.path.join(d.state, "state.db")
    c = slaq.Client(socket_path=d.sock, job_id=0, name="resends")
    wait_for(lambda: c.poll() or c.connected, what="the client to connect")
    for k in range(100):
        assert c.report(k, 1.0 / (k + 1), cpu_s=0.0)
    wait_for(lambda: c.poll() or c.acked == 99, what="100 acknowledged")
    jid = c.job_id
    _fill(small_disk / "filler")
    for k in range(100, 400):
        assert c.report(k, 1.0 / (k + 1), cpu_s=0.0)
    wait_for(lambda: c.poll() or d.job(jid)["reports"] == 400,
             what="all accepted")
    wait_for(lambda: not d.request({"type": "status"})["store_ok"],
             what="the store to fail")
    time.sleep(0.2)
    d.kill9()
    os.unlink(small_disk / "filler")
    assert _count(db, jid)[0] == 100
    d.start()
    wait_for(lambda: c.poll() or (c.connected and c.acked == 399),
             timeout=15, what="the reports sent again and acknowledged")
    c.close()
    wait_for(lambda: d.job(jid)["state"] != "running", what="the job's end")
    assert _count(db, jid) == (400, 400)
    assert d.request({"type": "status"})["reports_lost_total"] == 0
    assert "were lost when" not in d.cli("show", str(jid)).stdout
