"""torch_mlp.py — a PyTorch MLP on Fashion-MNIST, written as a user writes
one: mini-batch SGD, one report to slaq per epoch (the epoch's mean
training loss), threads sized to slaq's allocation every epoch."""
import argparse
import sys
import time

import torch

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.1)
p.add_argument("--epochs", type=int, default=12)
p.add_argument("--hidden", type=int, default=256)
p.add_argument("--batch", type=int, default=64)
a = p.parse_args()

job = slaq.Client(iters=a.epochs)
torch.manual_seed(0)
x, y = fmnist.load()
x, y = torch.from_numpy(x), torch.from_numpy(y)
model = torch.nn.Sequential(torch.nn.Linear(784, a.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(a.hidden, 10))
opt = torch.optim.SGD(model.parameters(), lr=a.lr)
lossf = torch.nn.CrossEntropyLoss()
with torch.no_grad():
    loss0 = lossf(model(x), y).item()
print("iter=0 loss=%.6f" % loss0, flush=True)
job.report(0, loss0)
for epoch in range(1, a.epochs + 1):
    torch.set_num_threads(job.threads())
    c0 = time.process_time()
    perm = torch.randperm(len(x))
    total = 0.0
    for i in range(0, len(x), a.batch):
        idx = perm[i:i + a.batch]
        opt.zero_grad()
        loss = lossf(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    loss = total / len(x)
    print("iter=%d loss=%.6f" % (epoch, loss), flush=True)
    job.report(epoch, loss, cpu_s=time.process_time() - c0, samples=len(x))
    if job.should_stop():
        break
job.close()
sys.exit(0)
