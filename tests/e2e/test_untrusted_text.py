"""test_untrusted_text.py — text that came from someone else (a job's name
or command, a request's fields) is escaped by one function (src/io/text.c)
wherever slaq prints it and wherever slaqd logs it: control characters as
\\xNN, bidirectional controls such as U+202E as \\uXXXX. Nothing raw
reaches the terminal or the log, where it could rewrite the screen or show
a name reversed.
"""

import json
import os
import socket

from conftest import TOY, wait_for

RAW = ("\x1b", "\x07", "\u202e", "\u2066", "\x9b")


def assert_clean(text, where):
    for ch in RAW:
        assert ch not in text, (where, repr(ch), text[-2000:])


def test_names_are_escaped_in_the_cli_and_the_log(slaqd, tmp_path):
    # --name takes bidi controls (they are not C0/C1): shown escaped.
    jid = slaqd.submit(TOY, "--iters", "3", name="invoice\u202egnp.exe")
    # A name taken from the command's file name, with both kinds.
    evil = tmp_path / "job\x1b]0;owned\x07\u2066x"
    os.symlink(TOY, evil)
    jid2 = slaqd.submit(str(evil), "--iters", "3")
    slaqd.wait_state(jid, "done")
    slaqd.wait_state(jid2, "done")
    for args in (["ls", "--all"], ["show", str(jid)], ["show", str(jid2)],
                 ["top", "--once", "--all"]):
        out = slaqd.cli(*args).stdout
        assert_clean(out, args)
    assert "invoice\\u202egnp.e" in slaqd.cli("ls", "-a").stdout  # 18 bytes
    assert "invoice\\u202egnp.exe" in slaqd.cli("show", str(jid)).stdout
    assert "job\\x1b]0;owned\\x07\\u2066x" in slaqd.cli("show",
                                                       str(jid2)).stdout
    log = wait_for(lambda: (lambda t: t if "job\\x1b]0;owned" in t else None)(
        slaqd.read_log()), what="the job in the log")
    assert_clean(log, "slaqd's log")
    assert "invoice\\u202egnp.exe" in log


def test_request_fields_are_escaped_in_the_log(slaqd):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(slaqd.sock)
    f = s.makefile("rb")
    # A job session (an attached job), whose rejected messages are logged.
    s.sendall(b'{"type": "hello", "name": "session"}\n')
    assert json.loads(f.readline())["type"] == "welcome"
    s.sendall(json.dumps({"type": "\x1b[2J\u202eevil\x9b"}).encode() + b"\n")
    reply = json.loads(f.readline())
    s.close()
    assert reply["code"] == "unknown_type", reply
    log = wait_for(lambda: (lambda t: t if "unknown_type" in t else None)(
        slaqd.read_log()), what="the rejection in the log")
    assert_clean(log, "slaqd's log")
    assert "\\x1b[2J\\u202eevil\\x9b" in log, log[-1000:]
