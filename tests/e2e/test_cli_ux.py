"""What the slaq commands print for a user: the dashboard URL in `slaq
status`, and `slaq show` / `slaq top` on jobs in every state."""

import json

from conftest import TOY, wait_for

from slaq.client import Client


def test_status_shows_dashboard_url(slaqd):
    out = slaqd.cli("status").stdout
    assert "dashboard    http://127.0.0.1:%d/\n" % slaqd.port in out
    assert "/api/status" not in out
    st = slaqd.request({"type": "status"})
    assert st["http_addr"] == "127.0.0.1" and st["http_port"] == slaqd.port


def test_show_finished_job_has_no_nan(slaqd):
    jid = slaqd.submit(TOY, "--iters", "6", "--iter-cpu", "0.002",
                       name="short")
    slaqd.wait_state(jid, "done")
    out = slaqd.cli("show", str(jid)).stdout
    assert "nan" not in out, out
    # six reports: all shown, and said so without "last 10 of 6"
    assert "last 10 of" not in out, out
    assert "  history (iteration, loss, cpu_s, samples):\n" in out, out
    # the rate of an ended job is its average over the run
    assert "it/s on average" in out, out
    assert "stop at     none (runs until it exits)\n" in out, out


def test_show_job_that_never_reported(slaqd):
    jid = slaqd.submit("sleep", "30", name="silent")
    wait_for(lambda: slaqd.job(jid)["state"] == "running", what="running")
    out = slaqd.cli("show", str(jid)).stdout
    assert "nan" not in out, out
    assert "  loss        none reported yet\n" in out, out


def test_show_names_only_the_limits_that_are_set(slaqd):
    jid = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002", name="lim",
                       target_reduction=0.9, max_iters=500)
    out = slaqd.cli("show", str(jid)).stdout
    assert "  stop at     90% loss reduction, 500 iterations\n" in out, out
    assert "(0: none)" not in out




def test_show_prints_the_declared_class(slaqd):
    dec = slaqd.submit(TOY, "--iters", "3", "--iter-cpu", "0.002",
                       name="dec", convergence="sublinear")
    und = slaqd.submit(TOY, "--iters", "3", "--iter-cpu", "0.002",
                       name="und")
    assert "  convergence sublinear (declared)\n" in \
        slaqd.cli("show", str(dec)).stdout
    assert "  convergence not declared\n" in \
        slaqd.cli("show", str(und)).stdout


def test_show_reduction_of_a_job_without_a_length_is_to_the_asymptote(slaqd):
    """A finished job that declared no length: its reduction is measured
    against the forecast's asymptote, which it stopped short of while its
    loss still fell; it is not "of the predicted total"."""
    jid = slaqd.submit(TOY, "--iters", "40", "--iter-cpu", "0.002",
                       name="short")
    slaqd.wait_state(jid, "done")
    j = slaqd.job(jid)
    assert 0 < j["reduction"] < 1 and j["declared_iters"] is None, j
    out = slaqd.cli("show", str(jid)).stdout
    assert "predicted total" not in out, out
    assert ("  reduction   %.1f%% of the way to the forecast's asymptote "
            "(loss %.6g);\n" % (100 * j["reduction"], j["end_loss"])) in out, out
    assert "no length declared" in out, out
    assert "  length" not in out, out


def test_show_reduction_of_a_job_with_a_length_is_to_its_end(slaqd):
    """A job that declared its length (hello "iters") keeps it after it
    ends, and its reduction is against the forecast at that iteration."""
    c = Client(socket_path=slaqd.sock, name="declared", iters=20)
    for k in range(21):
        c.report(k, 1.0 / (0.1 * k + 1) + 0.1, cpu_s=0.01)
    jid = wait_for(lambda: [j["id"] for j in slaqd.jobs()
                            if j["name"] == "declared"], what="attach")[0]
    wait_for(lambda: slaqd.job(jid)["reports"] >= 21, what="21 reports")
    c.close()
    j = slaqd.wait_state(jid, ("done", "stopped", "failed", "lost"))
    assert j["declared_iters"] == 20, j
    out = slaqd.cli("show", str(jid)).stdout
    assert "  length      20 iterations (declared)\n" in out, out
    assert "of the total predicted by its declared end, iteration 20" in out, out


def test_top_columns_stay_put_with_short_sparklines(slaqd):
    """A job with two losses and one with many: the CORES sparkline starts
    in the same column in both rows (block characters are one column)."""
    fast = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002", name="fast")
    slow = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.5", name="slow")
    wait_for(lambda: slaqd.job(fast)["reports"] > 20 and
             slaqd.job(slow)["reports"] >= 2 and
             slaqd.job(slow)["reports"] < 8 and
             len(slaqd.job(slow)["recent_cores"]) > 0,
             timeout=20, what="a long and a short loss history")
    out = slaqd.cli("top", "--once").stdout
    lines = out.splitlines()
    head = next(line for line in lines if line.startswith("ID "))
    col = head.index("CORES (recent)")
    rows = [line for line in lines if " fast " in line or " slow " in line]
    assert len(rows) == 2, out
    blocks = "▁▂▃▄▅▆▇█"
    for row in rows:
        assert row[col - 1] == " " and row[col] in blocks, \
            "cores sparkline not at column %d:\n%s\n%s" % (col, head, row)


def test_history_exports_every_report_in_pages(slaqd):
    """`slaq history` prints every report in iteration order, across pages
    of slaqd's replies, as a table, CSV and JSON; `slaq show` thins the
    same history to at most 500 rows."""
    n = 1234
    jid = slaqd.submit(TOY, "--iters", str(n), "--iter-cpu", "0.0002",
                       name="long")
    slaqd.wait_state(jid, "done", timeout=60)
    csv = slaqd.cli("history", str(jid), "--csv", "--page", "100").stdout
    lines = csv.splitlines()
    assert lines[0] == "iter,loss,cpu_s,samples,t,metric"
    iters = [int(line.split(",")[0]) for line in lines[1:]]
    assert iters == list(range(0, n + 1)), (iters[:5], iters[-5:])
    # the loss of iteration k is the toy job's 1/(0.1 k + 1) + 0.1
    last = lines[-1].split(",")
    assert abs(float(last[1]) - (1 / (0.1 * n + 1) + 0.1)) < 1e-9
    assert last[5] == ""  # no metric reported
    doc = json.loads(slaqd.cli("history", str(jid), "--json").stdout)
    assert doc["job"] == jid and doc["columns"][:2] == ["iter", "loss"]
    assert [r[0] for r in doc["rows"]] == list(range(0, n + 1))
    table = slaqd.cli("history", str(jid)).stdout.splitlines()
    assert table[0].split() == ["ITER", "LOSS", "CPU_S", "SAMPLES", "T",
                                "METRIC"]
    assert len(table) == n + 2
    shown = slaqd.cli("show", str(jid), "--json").stdout
    assert len(json.loads(shown)["history"]) <= 500
    bad = slaqd.cli("history", "999", check=False)
    assert bad.returncode != 0 and "999" in bad.stderr
    bad = slaqd.cli("history", str(jid), "--csv", "--json", check=False)
    assert bad.returncode == 2


def test_ls_lists_active_jobs_and_all_with_a(slaqd):
    """slaq ls lists the active jobs, -a/--all every job (as squeue and
    docker ps); --active, the default, is still taken."""
    done = slaqd.submit(TOY, "--iters", "3", "--iter-cpu", "0.001",
                        name="finished")
    slaqd.wait_state(done, "done")
    # none active: the header, and on stderr where the others are
    p = slaqd.cli("ls")
    assert p.stdout.splitlines()[0].split()[0] == "ID" and \
        len(p.stdout.splitlines()) == 1
    assert "no active jobs (slaq ls -a lists finished ones too)" in p.stderr
    live = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002",
                        name="running")
    wait_for(lambda: slaqd.job(live)["state"] == "running", what="running")

    def ids(*args):
        out = slaqd.cli("ls", *args).stdout.splitlines()
        assert out[0].split()[:2] == ["ID", "USER"], out
        return [int(r.split()[0]) for r in out[1:]]
    assert ids() == [live]
    assert ids("--active") == [live]
    assert ids("-a") == [done, live] and ids("--all") == [done, live]
    got = json.loads(slaqd.cli("ls", "--json").stdout)["jobs"]
    assert [j["id"] for j in got] == [live]
    got = json.loads(slaqd.cli("ls", "-a", "--json").stdout)["jobs"]
    assert [j["id"] for j in got] == [done, live]
    assert "-a, --all" in slaqd.cli("ls", "--help").stdout
    slaqd.cli("cancel", str(live))
