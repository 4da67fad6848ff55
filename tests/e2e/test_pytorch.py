"""test_pytorch.py — examples/pytorch_job.py trains a real PyTorch model
under slaqd through the Python client.

tests/e2e/test_daemon.py already runs the example, but it falls back to
plain Python when torch is missing; this test insists on the PyTorch path
(torch.set_num_threads sized to the job's allocation) and is skipped, with
the reason, when torch (Debian: python3-torch) is not installed.
"""

import importlib.util
import os
import sys

import pytest

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "pytorch_job.py")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="PyTorch is not installed for %s (Debian package "
                    "python3-torch); the PyTorch example is not run"
                    % sys.executable)
def test_pytorch_example_trains_with_torch_under_slaqd(daemon_factory):
    d = daemon_factory("--policy", "slaq", "--cores", "2")
    jid = d.submit(sys.executable, EXAMPLE, "--epochs", "10",
                   "--samples", "500")
    job = d.wait_state(jid, "done", timeout=120)
    assert job["reports"] == 11
    assert job["history"][-1][1] < job["history"][0][1]  # it learnt
    assert "trained 10 epochs with PyTorch" in d.cli("logs", str(jid)).stdout
