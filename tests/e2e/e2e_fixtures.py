"""Makes tests/e2e/conftest.py's fixtures and helpers those of another
suite's conftest (tests/security, tests/python): that file is imported
once under the name e2e_conftest (the other suite's own conftest is
"conftest" too), and its public names copied into the caller's.

    sys.path.insert(0, E2E)   # this directory
    import e2e_fixtures
    e2e_fixtures.load(globals())
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(into):
    """Copies e2e's conftest's public names (fixtures among them) into the
    dict `into`, a conftest's globals()."""
    mod = sys.modules.get("e2e_conftest")
    if mod is None:
        spec = importlib.util.spec_from_file_location(
            "e2e_conftest", os.path.join(HERE, "conftest.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules["e2e_conftest"] = mod
        spec.loader.exec_module(mod)
    into.update({k: v for k, v in vars(mod).items() if not k.startswith("_")})
