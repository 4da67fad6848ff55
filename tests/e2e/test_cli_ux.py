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
