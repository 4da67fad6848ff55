"""Fixtures for the attacker's suite (tests/security): slaqd's end-to-end
fixtures (tests/e2e/conftest.py: a real slaqd, the slaq command, free
ports) and its helpers (tests/e2e: the agent link, users made for a test).

Every test here is an attack an ordinary local user, a job, a network
peer or a node could make on slaqd run as root, and asserts that it
fails; docs/security.md's threat model names the test of each guarantee.
"""

import os
import sys

E2E = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "e2e")
if E2E not in sys.path:
    sys.path.insert(0, E2E)

import e2e_fixtures  # noqa: E402 (tests/e2e, on the path above)

e2e_fixtures.load(globals())
