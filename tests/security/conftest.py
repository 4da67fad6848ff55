"""Fixtures for the attacker's suite (tests/security): slaqd's end-to-end
fixtures (tests/e2e/conftest.py: a real slaqd, the slaq command, free
ports) and its helpers (tests/e2e: the agent link, users made for a test).

Every test here is an attack an ordinary local user, a job, a network
peer or a node could make on slaqd run as root, and asserts that it
fails; docs/security.md's threat model names the test of each guarantee.
"""

import importlib.util
import os
import sys

E2E = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "e2e")
if E2E not in sys.path:
    sys.path.insert(0, E2E)

# tests/e2e/conftest.py under a name of its own (this file is "conftest"
# too), its fixtures and helpers made this module's.
_spec = importlib.util.spec_from_file_location(
    "e2e_conftest", os.path.join(E2E, "conftest.py"))
e2e_conftest = importlib.util.module_from_spec(_spec)
sys.modules["e2e_conftest"] = e2e_conftest
_spec.loader.exec_module(e2e_conftest)
globals().update({k: v for k, v in vars(e2e_conftest).items()
                  if not k.startswith("_")})
