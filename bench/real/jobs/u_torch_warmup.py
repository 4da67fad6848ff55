"""u_torch_warmup.py — a deeper PyTorch network from a poor (small)
initialisation with a linear learning-rate warm-up: its loss stays flat
at ln 10 for its first reports, then falls. It starts slowly, as real
jobs do: the whole training set is loaded and standardised per pixel
before the first report. Threads from ceil(cores()); a report every 50
mini-batches."""
import argparse
import math

import numpy as np
import torch

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--warmup", type=int, default=300, help="steps")
a = p.parse_args()

client = slaq.Client()
torch.manual_seed(5)
x, y = fmnist.load(60000)                      # the start-up: all of it
mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-3
x = ((x - mu) / sd).astype(np.float32)
x, y = torch.from_numpy(x[:20000]), torch.from_numpy(y[:20000])
model = torch.nn.Sequential(
    torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
    torch.nn.ReLU(), torch.nn.Linear(256, 128), torch.nn.ReLU(),
    torch.nn.Linear(128, 10))
for m in model:
    if isinstance(m, torch.nn.Linear):
        torch.nn.init.normal_(m.weight, std=0.01)
        torch.nn.init.zeros_(m.bias)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: min(1.0, (s + 1) / a.warmup))
lossf = torch.nn.CrossEntropyLoss()
step, losses = 0, []
for epoch in range(a.epochs):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        opt.zero_grad()
        loss = lossf(model(x[idx]), y[idx])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        step += 1
        if step % 50 == 0:
            mean = sum(losses) / len(losses)
            losses = []
            client.report(step // 50, mean, samples=3200)
            print("iter=%d loss=%.6f" % (step // 50, mean), flush=True)
            torch.set_num_threads(max(1, math.ceil(client.cores())))
client.close()
