"""slaqd's share policies as a user meets them: the `policy` request and
`slaq policy` name every policy of libslaq's table (src/core/policy.c),
the ones slaqd refuses included, and each can be set at run time."""

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


def test_mlfs_rl_is_refused_with_where_it_runs(slaqd, tmp_path):
    # mlfs-rl needs a trained network, which slaqd does not load: the
    # request is refused naming where it runs, and the policy stays.
    was = slaqd.request({"type": "status"})["policy"]
    r = slaqd.request({"type": "policy", "name": "mlfs-rl"})
    assert not r["ok"] and r["code"] == "bad_policy"
    assert "slaq sim --deadlines --model" in r["message"], r["message"]
    assert slaqd.request({"type": "status"})["policy"] == was
    help_text = subprocess.run([SLAQ, "policy", "--help"], capture_output=True,
                               text=True, check=True).stdout
    assert "\n  mlfs-rl " not in help_text
    assert "slaq sim --deadlines --model FILE" in help_text
