"""Fixtures for the Python side's tests (tests/python): slaqd's end-to-end
fixtures (tests/e2e/conftest.py: a real slaqd on a temporary state
directory, the slaq command, free ports), and the repository's python/
first on the import path, so that `import slaq` is this tree's.

Each test here runs real Python code a user would write (the control API,
the training-loop helpers of PyTorch, scikit-learn, XGBoost and skorch)
against a real slaqd.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
E2E = os.path.join(ROOT, "tests", "e2e")
for p in (os.path.join(ROOT, "python"), E2E):
    if p not in sys.path:
        sys.path.insert(0, p)

import e2e_fixtures  # noqa: E402 (tests/e2e, on the path above)

e2e_fixtures.load(globals())
