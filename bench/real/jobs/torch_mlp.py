"""torch_mlp.py — a PyTorch MLP on Fashion-MNIST, written as a user writes
one: mini-batch SGD, one report to slaq per epoch (the epoch's mean
training loss), threads sized to slaq's advice every epoch — through the
client's PyTorch helper, slaq.torch.Job (docs/client.md)."""
import argparse
import sys

import torch

import fmnist
import slaq
import slaq.torch

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.1)
p.add_argument("--epochs", type=int, default=12)
p.add_argument("--hidden", type=int, default=256)
p.add_argument("--batch", type=int, default=64)
a = p.parse_args()

# Opens the client before loading the data, as the job did before the
# helper: the first report's CPU seconds cover the loading.
client = slaq.Client(iters=a.epochs)
torch.manual_seed(0)
x, y = fmnist.load()
# A report per epoch (its batches' sample-weighted mean loss), numbered by
# epoch; the advice and slaqd's stop are taken at the epochs' ends only
# (check_seconds), as this job did before the helper, so the benchmark's
# results stay comparable.
job = slaq.torch.Job(
    every_steps=len(range(0, len(x), a.batch)), iteration="report",
    check_seconds=float("inf"), client=client,
    on_report=lambda r: print("iter=%d loss=%.6f" % (r.iteration, r.loss),
                              flush=True))
x, y = torch.from_numpy(x), torch.from_numpy(y)
model = torch.nn.Sequential(torch.nn.Linear(784, a.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(a.hidden, 10))
opt = torch.optim.SGD(model.parameters(), lr=a.lr)
lossf = torch.nn.CrossEntropyLoss()
with torch.no_grad():
    job.initial_loss(lossf(model(x), y).item())
for epoch in range(1, a.epochs + 1):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), a.batch):
        idx = perm[i:i + a.batch]
        opt.zero_grad()
        loss = lossf(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        going = job.step(loss, samples=len(idx))  # reports at the epoch's end
    if not going:
        break
job.close()
client.close()
sys.exit(0)
