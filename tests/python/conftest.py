"""Fixtures for the Python side's tests (tests/python): slaqd's end-to-end
fixtures (tests/e2e/conftest.py: a real slaqd on a temporary state
directory, the slaq command, free ports), and the repository's python/
first on the import path, so that `import slaq` is this tree's.

Each test here runs real Python code a user would write (the control API,
the training-loop helpers of PyTorch, scikit-learn, XGBoost and skorch)
against a real slaqd.
"""

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
E2E = os.path.join(ROOT, "tests", "e2e")
for p in (os.path.join(ROOT, "python"), E2E):
    if p not in sys.path:
        sys.path.insert(0, p)

# tests/e2e/conftest.py under a name of its own (this file is "conftest"
# too), its fixtures and helpers made this module's.
_spec = importlib.util.spec_from_file_location(
    "e2e_conftest", os.path.join(E2E, "conftest.py"))
e2e_conftest = importlib.util.module_from_spec(_spec)
sys.modules["e2e_conftest"] = e2e_conftest
_spec.loader.exec_module(e2e_conftest)
globals().update({k: v for k, v in vars(e2e_conftest).items()
                  if not k.startswith("_")})
