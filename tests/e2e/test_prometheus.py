"""slaqd scraped by a real Prometheus (Debian's prometheus package), with
the files a lab installs: dist/prometheus/prometheus.yml's relabelling and
dist/prometheus/slaq-rules.yml (docs/metrics.md, "Scraping slaqd with
Prometheus"). Everything is checked through Prometheus' own HTTP API: the
target is up, slaqd's series arrive with sane values and the per-job label
renamed, every rule loads and evaluates, the recording rules agree with
slaqd, and an alert goes pending for a slaqd that does not answer while
none does for the healthy one. promtool checks both files as a lab would,
and runs the rules' unit tests (tests/e2e/slaq-rules.test.yml).

Skipped, saying why, when the prometheus or promtool binary is missing."""

import json
import os
import re
import shutil
import subprocess
import urllib.parse

import pytest

from conftest import OPENER, ROOT, TOY, free_port, http_get, wait_for

DIST = os.path.join(ROOT, "dist", "prometheus")
EXAMPLE = os.path.join(DIST, "prometheus.yml")
RULES = os.path.join(DIST, "slaq-rules.yml")
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")

needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None,
    reason="no prometheus binary on PATH (Debian's prometheus package, "
           "deps/daemon.txt)")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="no promtool binary on PATH (Debian's prometheus package, "
           "deps/daemon.txt)")


def rule_names():
    """(recording rule names, alert names) of slaq-rules.yml, in order."""
    with open(RULES) as f:
        text = f.read()
    return (re.findall(r"^\s+- record: (\S+)$", text, re.M),
            re.findall(r"^\s+- alert: (\S+)$", text, re.M))


def example_relabelling():
    """The example's metric_relabel_configs block, as its text: the test
    scrapes with the relabelling a lab copies."""
    with open(EXAMPLE) as f:
        text = f.read()
    block = text[text.index("    metric_relabel_configs:"):]
    assert "exported_job" in block
    return block


class Prometheus:
    """One prometheus process on a loopback port and a tmp_path store."""

    def __init__(self, tmp_path, targets):
        self.port = free_port()
        self.dir = tmp_path / "prometheus"
        self.dir.mkdir()
        self.config = self.dir / "prometheus.yml"
        static = "".join(
            '      - targets: ["%s"]\n        labels:\n          role: %s\n'
            % (t, role) for t, role in targets)
        self.config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "  evaluation_interval: 1s\n"
            "rule_files:\n  - %s\n"
            "scrape_configs:\n  - job_name: slaq\n"
            "    metrics_path: /metrics\n    static_configs:\n%s%s"
            % (json.dumps(RULES), static, example_relabelling()))
        self.log_path = self.dir / "prometheus.log"
        self.proc = None

    def start(self):
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=%s" % self.config,
             "--storage.tsdb.path=%s" % (self.dir / "data"),
             "--web.listen-address=127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=str(self.dir))
        wait_for(self._ready, timeout=30, step=0.2,
                 what="prometheus to be ready")
        return self

    def _ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("prometheus exited with %s:\n%s"
                                 % (self.proc.returncode, self.read_log()))
        try:
            r = OPENER.open("http://127.0.0.1:%d/-/ready" % self.port,
                            timeout=2)
            return r.status == 200
        except OSError:
            return False

    def read_log(self):
        return self.log_path.read_text()[-4000:]

    def api(self, path, **params):
        """The `data` of a Prometheus API answer (status must be success)."""
        url = "http://127.0.0.1:%d/api/v1/%s" % (self.port, path)
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with OPENER.open(url, timeout=10) as r:
            doc = json.loads(r.read().decode())
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, expr):
        """An instant query's samples, as [(labels, value)]."""
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", data
        return [(s["metric"], float(s["value"][1])) for s in data["result"]]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()


@pytest.fixture
def prometheus_factory(tmp_path):
    """start(targets) starts a prometheus scraping [(ADDR:PORT, role)];
    every one started is stopped at the end of the test."""
    started = []

    def start(targets):
        p = Prometheus(tmp_path, targets)
        started.append(p)
        return p.start()

    yield start
    for p in started:
        p.stop()
        assert p.proc.poll() is not None


@needs_prometheus
def test_prometheus_scrapes_slaqd_and_evaluates_the_rules(
        daemon_factory, prometheus_factory):
    d = daemon_factory("--cores", "2")
    ids = [d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="p%d" % i)
           for i in range(2)]
    wait_for(lambda: all(d.job(i)["reports"] > 5 and d.job(i)["cores"] > 0
                         for i in ids), what="both jobs reporting")
    live = "127.0.0.1:%d" % d.port
    # A port nobody listens on: a slaqd that is down.
    dead = "127.0.0.1:%d" % free_port()
    p = prometheus_factory([(live, "controller"), (dead, "agent")])
    try:
        check_prometheus(p, d, ids, live, dead)
    except AssertionError as e:
        raise AssertionError("%s\n--- prometheus log:\n%s"
                             % (e, p.read_log())) from None


def check_prometheus(p, d, ids, live, dead):
    def targets():
        t = {x["labels"]["instance"]: x
             for x in p.api("targets")["activeTargets"]}
        return t if (t.get(live, {}).get("health") == "up" and
                     t.get(dead, {}).get("health") == "down") else None
    t = wait_for(targets, timeout=15, step=0.2, what="the targets scraped")
    assert t[live]["labels"]["job"] == "slaq"
    assert t[live]["labels"]["role"] == "controller"
    assert t[live]["lastError"] == ""
    assert t[live]["scrapeUrl"] == "http://%s/metrics" % live

    sel = '{instance="%s"}' % live

    def one(expr):
        """The value of expr's one sample; a recording rule's first comes
        at the evaluation after the first scrape."""
        s = wait_for(lambda: p.query(expr), timeout=10, step=0.2, what=expr)
        assert len(s) == 1, (expr, s)
        return s[0][1]

    assert one("up" + sel) == 1
    # slaqd's series, with the values it has.
    assert one("slaq_reports_total" + sel) > 0
    assert one("slaq_cores" + sel) == 2
    assert one("slaq_store_ok" + sel) == 1
    assert one("slaq_reports_lost_total" + sel) == 0
    assert one("slaq_auth_failures_total" + sel) == 0
    assert one("slaq_epochs_total" + sel) > 0
    assert one("slaq_epoch_interval_seconds" + sel) == pytest.approx(0.2)
    assert 0 <= one("slaq_epoch_duration_seconds" + sel) < 0.2
    assert one("slaq_state_free_bytes" + sel) > 1e6
    assert one('slaq_jobs{state="running",instance="%s"}' % live) == 2
    assert one('slaq_policy_info{instance="%s"}' % live) == 1
    # Each job's samples: slaqd's job="ID" became slaq_job, the scrape
    # job's label stayed the scrape job's.
    jobs = wait_for(lambda: (lambda s: s if len(s) == 2 else None)(
        p.query("slaq_job_cores" + sel)), timeout=10, what="job samples")
    assert sorted(m["slaq_job"] for m, _ in jobs) == sorted(map(str, ids))
    assert {m["name"] for m, _ in jobs} == {"p0", "p1"}
    for m, v in jobs:
        assert m["job"] == "slaq" and "exported_job" not in m, m
        assert 0 < v <= 2
    assert not p.query("{exported_job!=\"\"}")

    # Every rule of the file loaded, in its two groups, and evaluates.
    records, alerts = rule_names()
    assert records and alerts

    def rules():
        groups = p.api("rules")["groups"]
        got = [r for g in groups for r in g["rules"]]
        if any(r["health"] != "ok" for r in got):
            bad = [(r["name"], r["health"], r.get("lastError")) for r in got
                   if r["health"] not in ("ok", "unknown")]
            assert not bad, bad
            return None
        return groups
    groups = wait_for(rules, timeout=10, step=0.2, what="every rule evaluated")
    by_name = {g["name"]: g for g in groups}
    assert sorted(by_name) == ["slaq.alerts", "slaq.rules"]
    assert all(g["file"] == RULES for g in groups)
    assert [r["name"] for r in by_name["slaq.rules"]["rules"]] == records
    assert [r["name"] for r in by_name["slaq.alerts"]["rules"]] == alerts
    for r in by_name["slaq.alerts"]["rules"]:
        assert r["type"] == "alerting"
        assert r["annotations"].get("summary"), r["name"]
        assert r["annotations"].get("description"), r["name"]
        assert r["labels"].get("severity") in ("critical", "warning", "info")

    # The rules use only series slaqd serves (and `up`): a misspelt name
    # would evaluate, health ok, to nothing ever.
    served = {line.split()[2] for line in http_get(d, "/metrics")[1]
              .splitlines() if line.startswith("# TYPE ")}
    used = set()
    for g in groups:
        for r in g["rules"]:
            used |= set(re.findall(r"\bslaq_[a-z0-9_]+", r["query"]))
    used.discard("slaq_job")  # the label the relabelling makes
    assert used and used <= served, sorted(used - served)

    # The recording rules agree with slaqd.
    assert one("slaq:jobs_active:count" + sel) == 2
    assert 0 < one("slaq:cores_allocated:sum" + sel) <= 2 + 1e-6
    assert one("slaq:min_share_cores" + sel) == pytest.approx(0.1)
    assert one("slaq:jobs_at_min_share:count" + sel) == 0
    assert 0 <= one("slaq:epoch_load:ratio" + sel) < 0.25
    # rate() needs two scrapes in its window.
    wait_for(lambda: (lambda s: s and s[0][1] > 0)(
        p.query("slaq:reports:rate5m" + sel)), timeout=10,
        what="a report rate")

    # The slaqd that is down: SlaqdDown is pending (it fires after 2 m);
    # the healthy one raises nothing.
    def down_pending():
        a = p.api("alerts")["alerts"]
        return a if any(x["labels"]["alertname"] == "SlaqdDown" and
                        x["labels"]["instance"] == dead and
                        x["state"] == "pending" for x in a) else None
    a = wait_for(down_pending, timeout=10, step=0.2, what="SlaqdDown pending")
    assert [x for x in a if x["labels"].get("instance") == live] == []
    assert d.job(ids[0])["state"] == "running"


@needs_promtool
def test_promtool_checks_the_rules_and_the_example():
    r = subprocess.run([PROMTOOL, "check", "rules", RULES],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    records, alerts = rule_names()
    assert "SUCCESS: %d rules found" % (len(records) + len(alerts)) in \
        r.stdout + r.stderr
    # The example loads the rules beside it: checked too.
    r = subprocess.run([PROMTOOL, "check", "config", EXAMPLE],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "slaq-rules.yml" in r.stdout + r.stderr
    # docs/metrics.md explains every rule.
    with open(os.path.join(ROOT, "docs", "metrics.md")) as f:
        doc = f.read()
    doc = doc[doc.index("## Scraping slaqd with Prometheus"):]
    missing = [n for n in records + alerts if "| `%s`" % n not in doc]
    assert not missing, "docs/metrics.md does not explain " + str(missing)


@needs_promtool
def test_promtool_unit_tests_of_the_rules():
    """tests/e2e/slaq-rules.test.yml: each alert fires on the series of a
    slaqd in its trouble, after its `for`, and nothing fires on a healthy
    controller and agent. Every alert of the file has a case."""
    tests = os.path.join(ROOT, "tests", "e2e", "slaq-rules.test.yml")
    r = subprocess.run([PROMTOOL, "test", "rules", tests],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout + r.stderr
    with open(tests) as f:
        text = f.read()
    _, alerts = rule_names()
    untested = [a for a in alerts if 'alertname="%s"' % a not in text]
    assert not untested, "alerts without a case in %s: %s" % (tests,
                                                              untested)
