"""slaqd's configuration file: every option can be set in it, flags
override it, ./slaqd.conf is read by default from a build tree, and a bad
file stops slaqd with the file's name and line."""
import os
import signal
import socket
import subprocess

import pytest

from conftest import SLAQD, Daemon, free_port, wait_for


def write(path, text):
    path.write_text(text)
    return str(path)


def run_bad(tmp_path, text, *args):
    conf = write(tmp_path / "bad.conf", text)
    p = subprocess.run([SLAQD, "--config", conf, "--state-dir",
                        str(tmp_path / "st")] + list(args),
                       capture_output=True, text=True, timeout=30)
    return conf, p


def test_every_option_from_the_file(tmp_path):
    token = write(tmp_path / "token", "sekrit-token-1234\n")
    state = tmp_path / "fromfile"
    sock = tmp_path / "other.sock"
    tcp = free_port()
    conf = write(tmp_path / "all.conf", """\
# every setting slaqd has
state-dir = %s
socket = %s      # a trailing comment
http = off
tcp = 127.0.0.1:%d
token-file = %s
epoch = 0.5
policy = slaq-maxmin
cores = 3
unit = 0.25
enforce = none
grace = 4
share = quota
normalise = max-delta
predictor = strawman
startup-reports = 5
hysteresis = 0.25
damping = 0.75
horizon-iters = 2
verbose = 1
""" % (state, sock, tcp, token))
    # The factory adds --state-dir, --http, --epoch and --grace flags;
    # this slaqd gets --config alone (Daemon only for its requests).
    d = Daemon(state, [])
    d.sock = str(sock)
    with open(d.log_path, "a") as log:
        d.proc = subprocess.Popen([SLAQD, "--config", conf],
                                  stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_for(lambda: os.path.exists(str(sock)) and d._up(),
                 what="slaqd on the configured socket")
        st = d.request({"type": "status"})
        assert st["state_dir"] == str(state)
        assert st["socket"] == str(sock)
        assert st["http_port"] == 0
        assert st["epoch_s"] == 0.5
        assert st["policy"] == "slaq-maxmin"
        assert st["cores"] == 3
        assert st["enforce"] == "none"
        assert st["share"] == "quota"
        assert st["normalise"] == "max-delta"
        assert st["predictor"] == "strawman"
        assert st["startup_reports"] == 5
        assert st["hysteresis"] == 0.25
        assert st["damping"] == 0.75
        assert st["horizon_iters"] == 2
        socket.create_connection(("127.0.0.1", tcp), timeout=5).close()
        log = d.read_log()
        assert "configuration: %s" % conf in log
        assert "units of 0.25" in log
    finally:
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=30) == 0


def test_flags_override_the_file(daemon_factory, tmp_path):
    conf = write(tmp_path / "s.conf", "policy = fair\nepoch = 0.5\n"
                 "cores = 2\nenforce = none\n")
    # the factory passes --epoch 0.2; --policy here overrides the file too
    d = daemon_factory("--config", conf, "--policy", "slaq-maxmin")
    st = d.request({"type": "status"})
    assert st["policy"] == "slaq-maxmin"  # flag
    assert st["epoch_s"] == 0.2           # flag
    assert st["cores"] == 2               # file
    assert st["enforce"] == "none"        # file


def test_slaqd_conf_in_the_working_directory(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    write(work / "slaqd.conf", "policy = fair\nenforce = none\nhttp = off\n")
    p = subprocess.Popen([SLAQD, "--state-dir", "st"], cwd=str(work),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    d = Daemon(work / "st", [])
    d.proc = p
    try:
        wait_for(lambda: os.path.exists(d.sock) and d.request(
            {"type": "status"})["ok"], what="slaqd")
        assert d.request({"type": "status"})["policy"] == "fair"
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0
        assert "configuration: ./slaqd.conf" in p.stderr.read()


@pytest.mark.parametrize("text,line,what", [
    ("epoch = 1\nbogus = 3\n", 2, "unknown key 'bogus'"),
    ("# comment\n\nepoch = soon\n", 3, "epoch: expected a number from 0.01 "
     "to 3600, got 'soon'"),
    ("policy = fast\n", 1, "unknown policy 'fast'"),
    ("enforce = magic\n", 1, "unknown mode 'magic'"),
    ("cores = -2\n", 1, "cores: expected a positive number"),
    ("verbose = lots\n", 1, "expected 0, 1 or 2"),
    ("policy = fair\npolicy = slaq\n", 2, "already set on line 1"),
    ("policy fair\n", 1, "expected 'key = value'"),
    ("http =\n", 1, "'http' has no value"),
    ("config = other.conf\n", 1, "unknown key 'config'"),
])
def test_bad_file_names_the_line(tmp_path, text, line, what):
    conf, p = run_bad(tmp_path, text)
    assert p.returncode == 2, p.stderr
    assert "slaqd: %s:%d: " % (conf, line) in p.stderr
    assert what in p.stderr


def test_missing_config_file_is_an_error(tmp_path):
    p = subprocess.run([SLAQD, "--config", str(tmp_path / "none.conf")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "none.conf: No such file" in p.stderr


def test_status_shows_every_scheduler_setting(daemon_factory, tmp_path):
    """slaqd's status reply carries every setting of the core's table by
    its option name, as the text the option takes, and `slaq status`
    prints them; a setting from the file and one from a flag both show."""
    conf = write(tmp_path / "s.conf", "hysteresis = 0.25\nmax-fits = 7\n"
                 "query-window = 24\nenforce = none\n")
    d = daemon_factory("--config", conf, "--cores", "2", "--damping", "0.1",
                       "--policy", "fair")
    st = d.request({"type": "status"})
    s = st["settings"]
    assert s["hysteresis"] == "0.25" and s["max-fits"] == "7"
    assert s["query-window"] == "24" and s["damping"] == "0.1"
    assert s["policy"] == "fair" and s["cores"] == "2"
    assert s["epoch"] == "0.2" and s["unit"] == "0.1"  # cores / 20
    assert s["startup-reports"] == "3" and s["normalise"] == "span"
    help_text = subprocess.run([SLAQD, "--help"], capture_output=True,
                               text=True, timeout=30).stdout
    names = [l.split()[0][2:] for l in
             help_text.split("Scheduler settings")[1].splitlines()
             if l.startswith("  --")]
    assert sorted(names) == sorted(s)  # every setting of the table
    # the older typed fields stay
    assert st["hysteresis"] == 0.25 and st["damping"] == 0.1
    out = d.cli("status").stdout
    for name in names:
        assert "%s=%s" % (name, s[name]) in out, name
    # a policy changed at run time shows as the one in force
    d.cli("policy", "slaq")
    assert d.request({"type": "status"})["settings"]["policy"] == "slaq"
