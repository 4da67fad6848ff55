"""What the slaq commands print for a user: the dashboard URL in `slaq
status`, and `slaq show` / `slaq top` on jobs in every state."""
import json

from conftest import TOY, wait_for


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
