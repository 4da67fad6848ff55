"""End-to-end tests of what slaqd serves for its dashboard and for
monitoring: /metrics (Prometheus text format, checked line by line and
against the JSON API), /api/timeline, /api/jobs/ID/forecast and the page's
own files. The page itself is tested in a real browser by tests/browser."""

import re
import time
import urllib.error
import urllib.request

import pytest

from conftest import TOY, api, http_get, wait_for

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """Checks the exposition format and returns {(name, labels): value}.
    Every sample's metric must have a HELP and a TYPE line before it."""
    helped, typed, samples = set(), {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert kind in ("gauge", "counter"), line
            typed[name] = kind
            continue
        m = SAMPLE.match(line)
        assert m, "not a Prometheus sample line: %r" % line
        name, labels, value = m.group(1), m.group(3) or "", m.group(4)
        assert name in helped and name in typed, "no HELP/TYPE for " + name
        if typed[name] == "counter":
            assert name.endswith("_total"), name
        pairs = tuple(LABEL.findall(labels))
        assert ",".join('%s="%s"' % p for p in pairs) == labels, line
        samples[(name, pairs)] = float(value)
    assert text.endswith("\n")
    return samples


def test_metrics_format_and_values(daemon_factory):
    d = daemon_factory("--policy", "fair", "--cores", "2")
    ids = [d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="m%d" % i)
           for i in range(2)]
    # A forecast is scored at the epoch after it was fitted.
    wait_for(lambda: all(d.job(i)["reports"] > 30 and d.job(i)["cores"] > 0
                         and d.job(i)["forecast_norm_error"] is not None
                         for i in ids), what="reports and a scored forecast")
    before = d.request({"type": "status"})
    ctype, text = http_get(d, "/metrics")
    after = d.request({"type": "status"})
    assert ctype.startswith("text/plain; version=0.0.4")
    m = parse_metrics(text)
    assert m[("slaq_jobs", (("state", "running"),))] == 2
    assert m[("slaq_jobs", (("state", "done"),))] == 0
    assert m[("slaq_cores", ())] == 2
    assert m[("slaq_policy_info", (("policy", "fair"),))] == 1
    for i in ids:
        key = (("job", str(i)), ("name", "m%d" % (i - 1)))
        # Fair shares of 2 cores between two jobs.
        assert m[("slaq_job_cores", key)] == pytest.approx(1.0)
        assert m[("slaq_job_reports_total", key)] > 30
        # Forecasts of the toy job's smooth curve are close: well under a
        # tenth of its loss range one epoch ahead.
        assert 0 <= m[("slaq_job_predictor_error", key)] < 0.1
    assert (before["reports_total"] <= m[("slaq_reports_total", ())]
            <= after["reports_total"])
    assert before["epoch"] <= m[("slaq_epochs_total", ())] <= after["epoch"]
    assert m[("slaq_epoch_interval_seconds", ())] == pytest.approx(0.2)
    assert 0 < m[("slaq_epoch_duration_seconds", ())] < 0.2
    assert (m[("slaq_epoch_duration_seconds_max", ())]
            >= m[("slaq_epoch_duration_seconds", ())])
    assert 0 <= m[("slaq_predictor_error", ())] < 0.1
    assert m[("slaq_predictor_errors_total", ())] > 0

    d.cli("cancel", str(ids[0]))
    d.wait_state(ids[0], "cancelled")
    m = parse_metrics(http_get(d, "/metrics")[1])
    assert m[("slaq_jobs", (("state", "cancelled"),))] == 1
    assert m[("slaq_jobs", (("state", "running"),))] == 1
    assert not any(k[0] == "slaq_job_cores" and ("job", str(ids[0])) in k[1]
                   for k in m)


def test_metrics_escape_label_values(slaqd):
    jid = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002",
                       name='say "hi" \\ there')
    wait_for(lambda: slaqd.job(jid)["cores"] > 0, what="an allocation")
    m = parse_metrics(http_get(slaqd, "/metrics")[1])
    assert any(k[0] == "slaq_job_cores" and
               ("name", 'say \\"hi\\" \\\\ there') in k[1] for k in m)


def test_timeline_and_forecast(slaqd):
    def frames(job):
        s = api(slaqd, "/api/timeline")["jobs"].get(str(job), {})
        return len([v for v in s.get("pred_norm_loss", []) if v is not None])

    a = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002", name="a")
    wait_for(lambda: frames(a) > 3, what="job a in the timeline")
    b = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002", name="b")
    wait_for(lambda: frames(b) > 3, what="job b in the timeline")
    tl = api(slaqd, "/api/timeline")
    t = tl["t"]
    assert all(x < y for x, y in zip(t, t[1:]))
    assert set(tl["jobs"]) == {str(a), str(b)}
    for key, s in tl["jobs"].items():
        assert len(s["pred_norm_loss"]) == len(s["cores"]) == len(t)
        losses = [v for v in s["pred_norm_loss"] if v is not None]
        assert losses and all(-0.5 <= v <= 1.5 for v in losses)
        assert losses[-1] < losses[0]
        assert sum(c or 0 for c in s["cores"]) > 0
    # b arrived later: absent (null) from the frames before it.
    assert tl["jobs"][str(b)]["cores"][0] is None
    assert tl["jobs"][str(a)]["name"] == "a"
    # Stacked, the cores exceed the machine's only while a falling share
    # is held back for its job to follow its thread advice (at most 2 s,
    # SD_ADVICE_WAIT_S: the others' risen shares overlap it): a frame
    # above them is followed within 2 s and an epoch by one within them.
    st = slaqd.request({"type": "status"})
    cap, span = st["cores"] + 1e-6, 2.0 + float(st["epoch"]) + 0.5
    stacked = [sum(s["cores"][i] or 0 for s in tl["jobs"].values())
               for i in range(len(t))]
    for i, c in enumerate(stacked):
        assert c <= 2 * cap, (i, stacked)  # one job's share at the most
        if c > cap:
            later = [j for j in range(i + 1, len(t)) if t[j] - t[i] <= span]
            assert not later or t[-1] - t[i] <= span or any(
                stacked[j] <= cap for j in later), (i, t, stacked)

    fc = api(slaqd, "/api/jobs/%d/forecast" % a)
    assert fc["ok"] and fc["job"] == a and fc["state"] == "running"
    hist, ahead = fc["history"], fc["forecast"]
    assert hist[0]["iter"] == 0 and len(hist) > 20
    assert ahead[0]["iter"] == pytest.approx(fc["k0"])
    assert ahead[-1]["iter"] > ahead[0]["iter"]
    losses = [p["loss"] for p in ahead]
    assert all(y <= x + 1e-12 for x, y in zip(losses, losses[1:]))
    assert all(v >= fc["final_loss"] - 1e-9 for v in losses)
    job = api(slaqd, "/api/jobs/%d" % a)["job"]
    assert job["eta90_s"] is None or job["eta90_s"] >= 0
    # The bound on starvation's record: a spell never longer than the
    # job has run, and a count of lifts.
    assert 0 <= job["starved_max_s"] <= time.time() - job["submitted"] + 1
    assert isinstance(job["lifts"], int) and job["lifts"] >= 0
    assert 0 <= job["pred_norm_loss"] <= 1

    for path in ("/api/jobs/99/forecast", "/api/jobs/%d/nope" % a,
                 "/api/jobs/x/forecast"):
        with pytest.raises(urllib.error.HTTPError) as e:
            http_get(slaqd, path)
        assert e.value.code == 404


def test_dashboard_files(slaqd):
    ctype, html = http_get(slaqd, "/")
    assert ctype.startswith("text/html") and "<canvas" in html
    assert http_get(slaqd, "/index.html")[1] == html
    for path in re.findall(r'(?:src|href)="(/[^"]+)"', html):
        ctype, body = http_get(slaqd, path)
        assert body, path
    ctype, js = http_get(slaqd, "/chart.js")
    assert ctype.startswith("text/javascript") and "Chart" in js


def test_timeline_thins_and_serves_increments(daemon_factory):
    d = daemon_factory("--epoch", "0.01")
    d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="long")
    # 256 frames fill after 256 epochs; then every other one is dropped.
    tl = wait_for(lambda: (lambda r: r if r["stride_epochs"] >= 2 else None)(
        api(d, "/api/timeline")), timeout=30, what="the timeline to thin")
    t = tl["t"]
    assert 128 <= len(t) <= 256
    assert all(x < y for x, y in zip(t, t[1:]))
    s = tl["jobs"]["1"]
    assert len(s["pred_norm_loss"]) == len(s["cores"]) == len(t)
    since = t[-5]
    inc = api(d, "/api/timeline?since=%r" % since)
    assert inc["t"] and inc["t"][0] > since
    assert inc["t"][:4] == t[-4:] or inc["stride_epochs"] != tl["stride_epochs"]
    assert len(inc["jobs"]["1"]["cores"]) == len(inc["t"])
    assert api(d, "/api/timeline?since=%r" % (inc["t"][-1] + 1e6))["t"] == []
    with pytest.raises(urllib.error.HTTPError) as e:
        http_get(d, "/api/timeline?since=soon")
    assert e.value.code == 400


def _norm(loss, first, end):
    """docs/metrics.md's normalised loss, as slaq_norm_loss computes it."""
    if loss is None or first is None or end is None:
        return None
    if not first - end > 0:
        return 1.0
    return 1 - min(1.0, max(0.0, (first - loss) / (first - end)))


def test_timeline_normalised_loss_has_one_normaliser(daemon_factory):
    """A job's normalised-loss line is its loss curve scaled by one L_end
    (its newest estimate), so it falls wherever the loss falls. The toy
    job's sublinear curve, 1/(0.05k + 1) + 0.1, makes every refit move
    the predicted end; scaling each frame by the end of its own epoch (as
    slaqd did) drew lines that started low and jumped back up."""
    d = daemon_factory("--cores", "1", "--epoch", "0.1")
    j = d.submit(TOY, "--forever", "--iter-cpu", "0.01", "--rate", "0.05",
                 name="sublinear")

    def series():
        s = api(d, "/api/timeline")["jobs"].get(str(j), {})
        n = [v for v in s.get("pred_norm_loss", []) if v is not None]
        return s if len(n) >= 30 else None

    s = wait_for(series, timeout=30, what="30 frames of the job")
    t = api(d, "/api/timeline")["t"]
    assert len(s["loss"]) == len(s["pred_norm_loss"]) == len(t)
    first, end = s["first_loss"], s["end_loss"]
    assert first == pytest.approx(1.1)
    assert end is not None and 0.1 - 1e-9 <= end < first
    loss = [v for v in s["loss"] if v is not None]
    norm = [v for v in s["pred_norm_loss"] if v is not None]
    assert len(loss) == len(norm)
    # every point uses the same normaliser, the one the reply names
    for lv, nv in zip(loss, norm):
        assert nv == pytest.approx(_norm(lv, first, end), abs=1e-9)
    # the toy's loss only falls, so its normalised loss never rises
    assert all(y <= x + 1e-9 for x, y in zip(norm, norm[1:])), norm
    assert all(0 <= v <= 1 for v in norm) and norm[-1] < norm[0]
    # the job view's live value is the line's newest point's formula
    job = api(d, "/api/jobs/%d" % j)["job"]
    assert job["pred_norm_loss"] == pytest.approx(
        _norm(job["loss"], job["first_loss"], job["end_loss"]), abs=1e-9)
    # an increment carries the job's newest normaliser, so a poller can
    # rescale what it holds
    inc = api(d, "/api/timeline?since=%r" % t[-3])
    si = inc["jobs"][str(j)]
    assert "first_loss" in si and "end_loss" in si and len(si["loss"]) == \
        len(inc["t"])


def test_renamed_fields_keep_their_old_names_for_one_release(daemon_factory):
    """pred_norm_loss (the normalised loss against the predicted end) and
    forecast_norm_error (slaq_eval_curve's normalised error, one epoch
    ahead) are the names; norm_loss and predictor_error stay as
    deprecated aliases with the same values until the next release."""
    d = daemon_factory("--cores", "1")
    j = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="alias")
    job = wait_for(lambda: (lambda x: x if x["forecast_norm_error"]
                            is not None and x["reports"] > 30 else None)(
                                d.job(j)),
                   timeout=20, what="30 reports and a scored forecast")
    assert job["norm_loss"] == job["pred_norm_loss"]
    assert job["predictor_error"] == job["forecast_norm_error"]
    http_job = api(d, "/api/jobs/%d" % j)["job"]
    assert http_job["norm_loss"] == http_job["pred_norm_loss"]
    assert http_job["predictor_error"] == http_job["forecast_norm_error"]
    s = api(d, "/api/timeline")["jobs"][str(j)]
    assert s["norm_loss"] == s["pred_norm_loss"]
    # one unit for every error of a job: its loss range so far, as
    # slaq_eval_curve's (L(0) - min L); the toy's smooth curve is
    # forecast well within a tenth of it
    assert 0 <= job["forecast_norm_error"] < 0.1
