"""slaqd's share policies as a user meets them: the `policy` request and
`slaq policy` name every policy of libslaq's table (src/core/policy.c),
and each can be set at run time."""

import subprocess

from conftest import SLAQ

POLICIES = ("fair", "slaq", "slaq-maxmin", "relaqs")


def test_unknown_policy_error_names_every_policy(slaqd):
    r = slaqd.request({"type": "policy", "name": "nonsense"})
    assert not r["ok"] and r["code"] == "bad_policy"
    assert "nonsense" in r["message"]
    for name in POLICIES:
        assert name in r["message"], (name, r["message"])
    p = slaqd.cli("policy", "nonsense", check=False)
    assert p.returncode == 2 and "relaqs" in p.stderr


def test_every_policy_can_be_set_and_is_in_help(slaqd):
    help_text = subprocess.run([SLAQ, "policy", "--help"], capture_output=True,
                               text=True, check=True).stdout
    for name in POLICIES:
        assert "\n  %s " % name in help_text, name
        assert slaqd.cli("policy", name).stdout.strip() == name
        assert slaqd.request({"type": "status"})["policy"] == name


def test_mlfs_rl_runs_with_the_network_slaqd_loaded(slaqd):
    # mlfs-rl needs MLF-RL's network, which slaqd reads at start (its
    # default, the committed model): it can be set at run time like any
    # other, and `slaq policy --help` lists it and says where the network
    # comes from (tests/e2e/test_rl_policy.py checks the order it gives).
    help_text = subprocess.run([SLAQ, "policy", "--help"], capture_output=True,
                               text=True, check=True).stdout
    assert "\n  mlfs-rl " in help_text
    assert "slaqd --rl-model FILE" in help_text
    assert slaqd.cli("policy", "mlfs-rl").stdout.strip() == "mlfs-rl"
    assert slaqd.request({"type": "status"})["policy"] == "mlfs-rl"
