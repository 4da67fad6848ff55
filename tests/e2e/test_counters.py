"""slaqd's counters (src/daemon/counters.c, docs/metrics.md "slaqd's
counters"): one table writes both the `status` reply and /metrics. These
tests read both from a running slaqd and hold them, and the documented
table, to each other: every row is where it says, with one value under
its two names, and no counter is in one output without the other."""

import os
import re
import socket

import pytest

from conftest import ROOT, TOY, api, http_get, wait_for
from test_dashboard_api import parse_metrics

DOC = os.path.join(ROOT, "docs", "metrics.md")
DASHBOARD_DOC = os.path.join(ROOT, "docs", "dashboard.md")
ROW = re.compile(r"^\| (—|`(\w+)`( \(ms\))?) \| (—|`(\w+)`( \(s\))?) "
                 r"\| (counter|gauge) \| (.+) \|$")


def doc_rows():
    """The rows of docs/metrics.md's counter table, as dicts with key,
    prom (None when the row names no such output), ms (the status value
    is in milliseconds, the Prometheus one in seconds), type and help."""
    with open(DOC) as f:
        text = f.read()
    section = text[text.index("## slaqd's counters"):]
    if "\n## " in section:
        section = section[:section.index("\n## ")]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| `status` key"):
            continue
        m = ROW.match(line)
        assert m, "docs/metrics.md: not a counter row: %r" % line
        assert bool(m.group(3)) == bool(m.group(6)), line
        rows.append({"key": m.group(2), "prom": m.group(5),
                     "ms": bool(m.group(3)), "type": m.group(7),
                     "help": m.group(8)})
    assert len(rows) > 20
    return rows


def source_rows():
    """The rows of the table in src/daemon/counters.c, in the form of
    doc_rows(). Every line of the table that opens a row must parse."""
    with open(os.path.join(ROOT, "src", "daemon", "counters.c")) as f:
        src = f.read()
    start = src.index("static const counter_row counters[] = {")
    table = src[start:src.index("\n};\n", start)]
    opened = len(re.findall(r"^    \{", table, re.M))
    found = re.findall(
        r'^    \{(NULL|"\w+"),\s*(NULL|"\w+"),\s*"(\w+)",\s*'
        r'((?:"(?:[^"\\]|\\.)*"\s*)+),\s*(FIELD|FN|MS_FIELD)\(', table, re.M)
    assert len(found) == opened > 20, (len(found), opened)
    rows = []
    for key, prom, kind, help_, how in found:
        text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', help_))
        rows.append({"key": None if key == "NULL" else key.strip('"'),
                     "prom": None if prom == "NULL" else prom.strip('"'),
                     "ms": how == "MS_FIELD", "type": kind,
                     "help": text.replace('\\"', '"')})
    return rows


def test_doc_lists_the_table_row_for_row():
    """docs/metrics.md's table is src/daemon/counters.c's, in its order,
    the meaning of a status-only row included."""
    assert doc_rows() == source_rows()


def help_and_type(text):
    """{name: (HELP text, TYPE)} of a /metrics page."""
    helps, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, h = line[len("# HELP "):].partition(" ")
            helps[name] = h
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            types[name] = kind
    return {n: (helps.get(n), types.get(n)) for n in set(helps) | set(types)}


def in_status(row, value):
    """A status value as /metrics shows it."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return value / 1000 if row["ms"] else float(value)


def busy_daemon(daemon_factory):
    """A slaqd that has run a job to its end and refused a message, so
    that counters have moved off zero; its epochs are long enough that
    status and /metrics can be read within one."""
    d = daemon_factory("--epoch", "0.5")
    job = d.submit(TOY, "--iters", "40", "--iter-cpu", "0.002", name="c")
    d.wait_state(job, "done", timeout=30)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(d.sock)
        s.sendall(b"this is not json\n")
        s.recv(4096)
    wait_for(lambda: (lambda st: st["errors_total"] >= 1 and st["epoch"] >= 2)(
        d.request({"type": "status"})), what="a refused message and epochs")
    return d


def steady_read(d, rows):
    """status, /metrics text and samples read while no row that is in both
    changed: status before and after /metrics agree on all of them."""
    both = [r["key"] for r in rows if r["key"] and r["prom"]]
    for _ in range(50):
        before = api(d, "/api/status")
        text = http_get(d, "/metrics")[1]
        after = api(d, "/api/status")
        if all(before[k] == after[k] for k in both):
            return before, text, parse_metrics(text)
    pytest.fail("status kept changing between two reads 50 times")


def test_every_row_in_both_outputs_with_one_value(daemon_factory):
    rows = doc_rows()
    d = busy_daemon(daemon_factory)
    status, text, samples = steady_read(d, rows)
    meta = help_and_type(text)
    assert status["reports_total"] >= 40 and status["errors_total"] >= 1
    assert status["epoch"] > 0
    for r in rows:
        if r["key"]:
            assert r["key"] in status, "status has no " + r["key"]
        if not r["prom"]:
            continue
        assert (r["prom"], ()) in samples, "/metrics has no " + r["prom"]
        # The documented meaning is the HELP line, word for word.
        assert meta[r["prom"]] == (r["help"], r["type"]), r["prom"]
        if r["key"]:
            assert samples[(r["prom"], ())] == in_status(
                r, status[r["key"]]), (r["key"], r["prom"])


def test_no_counter_in_one_output_only(daemon_factory):
    """Whatever either output counts is in the table: a sample /metrics
    writes outside it, a *_total key of status outside it, or a counter
    row with one name fails here."""
    rows = doc_rows()
    d = busy_daemon(daemon_factory)
    status, text, samples = steady_read(d, rows)
    with open(DASHBOARD_DOC) as f:
        labelled_doc = f.read()
    proms = {r["prom"] for r in rows if r["prom"]}
    for name, labels in samples:
        if labels:
            # Per-job and per-state samples: listed in docs/dashboard.md.
            assert "`%s{" % name in labelled_doc, name
            assert name not in proms, name
        else:
            assert name in proms, "/metrics has %s, docs/metrics.md's " \
                                  "counter table does not" % name
    by_key = {r["key"]: r for r in rows if r["key"]}
    for key in status:
        if key.endswith("_total"):
            assert key in by_key, "status has %s, docs/metrics.md's " \
                                  "counter table does not" % key
    for r in rows:
        # A counter is in both; only gauges (timing breakdowns, sizes)
        # may stay in status alone.
        if r["type"] == "counter" and r["key"]:
            assert r["prom"], "status has counter %s, /metrics does " \
                              "not" % r["key"]
    assert len({r["key"] for r in rows if r["key"]}) == len(by_key)
    assert len(proms) == len([r for r in rows if r["prom"]])
