"""fmnist.py — Fashion-MNIST from Debian's dataset-fashion-mnist, as a
user's training script would load it: IDX files read with gzip and numpy,
pixels scaled to [0, 1]. The first N training images (SLAQ_BENCH_ROWS,
default 20000) keep a batch of jobs to about a minute on two cores."""
import gzip
import os

import numpy as np

DIR = os.environ.get("FMNIST_DIR", "/usr/share/datasets/fashion-mnist")


def _idx(name):
    with gzip.open(os.path.join(DIR, name), "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
             for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(rows=None):
    rows = rows or int(os.environ.get("SLAQ_BENCH_ROWS", "20000"))
    x = _idx("train-images-idx3-ubyte.gz")[:rows].reshape(-1, 784)
    y = _idx("train-labels-idx1-ubyte.gz")[:rows]
    return x.astype(np.float32) / 255.0, y.astype(np.int64)
