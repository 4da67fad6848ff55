"""u_torch_default.py — a PyTorch MLP that reports to slaq and ignores it
for threads: PyTorch's and the BLAS library's thread pools keep their
defaults (one thread per CPU, or per physical core). It reports every
mini-batch, the loss of that batch."""
import argparse

import torch

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.02)
p.add_argument("--epochs", type=int, default=6)
p.add_argument("--hidden", type=int, default=128)
a = p.parse_args()

client = slaq.Client()
torch.manual_seed(2)
x, y = fmnist.load()
x, y = torch.from_numpy(x), torch.from_numpy(y)
model = torch.nn.Sequential(torch.nn.Linear(784, a.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(a.hidden, a.hidden),
                            torch.nn.ReLU(), torch.nn.Linear(a.hidden, 10))
opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
lossf = torch.nn.CrossEntropyLoss()
step, window = 0, []
for epoch in range(a.epochs):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        opt.zero_grad()
        loss = lossf(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        step += 1
        client.report(step, loss.item(), samples=len(idx))
        window.append(loss.item())
        if step % 25 == 0:  # the benchmark's log: a smoothed line
            print("iter=%d loss=%.6f" % (step, sum(window) / len(window)),
                  flush=True)
            window = []
client.close()
