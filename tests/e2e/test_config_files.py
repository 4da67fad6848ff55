"""End-to-end tests of slaqd's configuration and files (docs/security.md):
refused configurations, the database it will and will not open, one slaqd
per state directory and per socket, file modes, and job names that cannot
inject into a terminal."""

import json
import os
import socket
import sqlite3
import stat
import subprocess

from conftest import SLAQD, TOY, free_port


def run_slaqd(state, *args, timeout=10, umask=None):
    """Runs a slaqd that is expected to refuse to start; returns the
    CompletedProcess (a slaqd that hangs or starts fails the test)."""
    cmd = [SLAQD, "--state-dir", str(state), "--http",
           "127.0.0.1:%d" % free_port()] + list(args)
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=pre)


def test_configuration_with_too_many_units_per_epoch_is_refused(tmp_path):
    for args in (["--cores", "1e308"], ["--cores", "4", "--unit", "1e-9"],
                 ["--cores", "1e7", "--unit", "0.5"]):
        p = run_slaqd(tmp_path / "s", *args)
        assert p.returncode == 2, (args, p.stderr)
        assert "allocation units per epoch" in p.stderr
        assert "at most 10000000" in p.stderr
    p = run_slaqd(tmp_path / "s", "--cores", "2", "--unit", "3")
    assert p.returncode == 2 and "more than the 2 cores" in p.stderr
    p = run_slaqd(tmp_path / "s", "--epoch", "0.001")
    assert p.returncode == 2 and "--epoch" in p.stderr


def test_empty_database_is_refused_unless_init(tmp_path, daemon_factory):
    state = tmp_path / "s"
    state.mkdir()
    (state / "state.db").write_bytes(b"")
    p = run_slaqd(state)
    assert p.returncode == 1
    assert "is empty (0 bytes)" in p.stderr and "--init" in p.stderr
    assert (state / "state.db").stat().st_size == 0
    d = daemon_factory("--init", state=state)
    jid = d.submit("true")
    assert jid == 1
    d.wait_state(jid, "done")
    d.stop()
    # Once it holds slaqd's data, no --init is needed.
    d2 = daemon_factory(state=state)
    assert d2.job(1)["state"] == "done"


def test_foreign_database_file_is_refused_and_left_alone(tmp_path):
    state = tmp_path / "s"
    state.mkdir()
    db = state / "state.db"
    db.write_bytes(b"these are someone's notes\n" * 100)
    before = db.read_bytes()
    for args in ([], ["--init"]):
        p = run_slaqd(state, *args)
        assert p.returncode == 1
        assert "is not an SQLite database" in p.stderr
        assert db.read_bytes() == before
    db.unlink()
    con = sqlite3.connect(str(db))
    con.execute("CREATE TABLE invoices(id INTEGER, total REAL)")
    con.commit()
    con.close()
    for args in ([], ["--init"]):
        p = run_slaqd(state, *args)
        assert p.returncode == 1
        assert "database of another program" in p.stderr
    con = sqlite3.connect(str(db))
    tables = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")]
    con.close()
    assert tables == ["invoices"]


def test_a_database_without_tables_needs_init(tmp_path, daemon_factory):
    state = tmp_path / "s"
    state.mkdir()
    con = sqlite3.connect(str(state / "state.db"))
    con.execute("PRAGMA user_version = 1")  # a valid, empty database
    con.commit()
    con.close()
    p = run_slaqd(state)
    assert p.returncode == 1 and "empty database" in p.stderr
    daemon_factory("--init", state=state)


def test_second_daemon_on_same_state_dir_is_refused(daemon_factory, tmp_path):
    d = daemon_factory()
    p = run_slaqd(d.state, "--socket", str(tmp_path / "other.sock"))
    assert p.returncode == 1
    assert "another slaqd is using this state directory" in p.stderr
    assert d.request({"type": "status"})["ok"]


def test_a_socket_served_by_a_live_slaqd_is_not_taken(daemon_factory,
                                                      tmp_path):
    d = daemon_factory()
    ino = os.stat(d.sock).st_ino
    p = run_slaqd(tmp_path / "other", "--socket", d.sock)
    assert p.returncode == 1
    assert "another slaqd is serving it" in p.stderr
    assert os.stat(d.sock).st_ino == ino
    assert d.request({"type": "status"})["pid"] == d.proc.pid


def test_a_file_that_is_not_a_socket_is_never_removed(tmp_path):
    path = tmp_path / "precious.txt"
    path.write_text("keep me\n")
    p = run_slaqd(tmp_path / "s", "--socket", str(path))
    assert p.returncode == 1 and "not a socket" in p.stderr
    assert path.read_text() == "keep me\n"


def test_a_stale_socket_is_replaced(daemon_factory, tmp_path):
    state = tmp_path / "s"
    state.mkdir()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(state / "slaq.sock"))
    s.close()  # bound, never listened: what a crashed server leaves
    d = daemon_factory(state=state)
    assert d.request({"type": "status"})["ok"]


def test_database_files_are_private_even_with_a_loose_umask(tmp_path,
                                                           daemon_factory):
    state = tmp_path / "s"
    state.mkdir(mode=0o755)
    # A database an older slaqd created 0644 is tightened too.
    d = daemon_factory(state=state)
    d.stop()
    os.chmod(state / "state.db", 0o644)
    old = os.umask(0o022)
    try:
        d = daemon_factory(state=state)
    finally:
        os.umask(old)
    d.submit(TOY, "--iters", "3")
    names = ["state.db", "state.db-wal", "state.db-shm"]
    for n in names:
        mode = stat.S_IMODE(os.stat(state / n).st_mode)
        assert mode == 0o600, (n, oct(mode))
    assert stat.S_IMODE(os.stat(d.sock).st_mode) == 0o600


def test_control_characters_in_names(slaqd, tmp_path):
    # Refused where a name is given: submit and an attaching hello.
    for bad in ("red\x1b[31m", "two\nlines", "csi\u009b2J", "x" * 201):
        p = slaqd.cli("submit", "--name", bad, "--", "true", check=False)
        assert p.returncode == 2, bad
        assert "--name" in p.stderr
        r = slaqd.request({"type": "submit", "cmd": ["true"], "name": bad})
        assert not r["ok"] and "job name" in r["message"], r
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(slaqd.sock)
        s.sendall(json.dumps({"type": "hello", "name": bad}).encode() + b"\n")
        reply = json.loads(s.makefile("rb").readline())
        s.close()
        assert reply["code"] == "bad_name", reply
    assert slaqd.jobs() == []
    assert slaqd.submit("true", name="x" * 200) == 1
    # A name taken from the command's file name is shown escaped.
    evil = tmp_path / "job\x1b]0;owned\x07\x1b[2J"
    os.symlink(TOY, evil)
    jid = slaqd.submit(str(evil), "--iters", "5")
    slaqd.wait_state(jid, "done")
    for args in (["ls", "--all"], ["show", str(jid)],
                 ["top", "--once", "--all"]):
        out = slaqd.cli(*args).stdout
        assert "\x1b" not in out and "\x07" not in out, (args, out)
        assert "job\\x1b]0;owned" in out, (args, out)
