"""slaq._lib — imports a training library for one of slaq's helpers, with
an error that says what to install."""

import importlib

_PACKAGES = {
    "torch": ("PyTorch", "python3-torch", "torch"),
    "sklearn": ("scikit-learn", "python3-sklearn", "scikit-learn"),
    "threadpoolctl": ("threadpoolctl", "python3-threadpoolctl",
                      "threadpoolctl"),
    "xgboost": ("XGBoost", "python3-xgboost", "xgboost"),
    "skorch": ("skorch", "python3-skorch", "skorch"),
}


def need(module, helper):
    """Imports ``module`` (a key of _PACKAGES) for the helper module
    ``helper``; raises ImportError naming the Debian and pip packages."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        what, deb, pip = _PACKAGES[module]
        raise ImportError("%s needs %s (Debian: apt install %s; in a virtual "
                          "environment: pip install %s): %s"
                          % (helper, what, deb, pip, e)) from e
