"""slaq's thread rule is one rule: the Python client's threads_for() gives
the same answer as the C library's slaq_client_threads_for() (loaded from
the built libslaq-client.so) over a grid of allocations and CPU counts, and
Client.threads() applies it to the current allocation."""

import ctypes
import os

import pytest

from conftest import BUILD

import slaq

LIB = os.path.join(BUILD, "lib", "libslaq-client.so")


@pytest.fixture(scope="module")
def c_rule():
    lib = ctypes.CDLL(LIB)
    f = lib.slaq_client_threads_for
    f.argtypes = [ctypes.c_double, ctypes.c_long]
    f.restype = ctypes.c_int
    return f


def test_python_and_c_give_the_same_threads(c_rule):
    grid = [i / 100 for i in range(0, 1001)]          # 0.00 .. 10.00
    grid += [0.74, 0.75, 1.74, 1.75, 2.749999, 2.75, 1e-9, -1.0, 1e6,
             float("inf"), float("nan")]
    for cpus in (0, 1, 2, 3, 4, 8, 64):
        for cores in grid:
            assert slaq.threads_for(cores, cpus) == c_rule(cores, cpus), \
                "%r cores on %d CPUs" % (cores, cpus)


def test_rule_boundaries():
    want = {0.1: 1, 0.74: 1, 0.75: 1, 1.0: 1, 1.74: 1, 1.75: 2, 2.3: 2,
            2.75: 3, 9.0: 8, 100.0: 8}
    for cores, threads in want.items():
        assert slaq.threads_for(cores, 8) == threads, cores
    assert slaq.threads_for(100.0) == (os.cpu_count() or 1)


def test_client_threads_follow_the_default_allocation():
    c = slaq.Client(socket_path="", default_cores=1.8)
    assert c.threads() == min(2, os.cpu_count() or 1)
    c = slaq.Client(socket_path="", default_cores=1.7)
    assert c.threads() == 1
