"""u_torch_cores.py — a PyTorch MLP as many users first adapt one to slaq:
the thread count taken from the allocation, floor(cores()) (or ceil with
--ceil), at least one, at every report; a report every 50 mini-batches
through the plain client. Nothing else is set: the math libraries keep
their defaults."""
import argparse
import math

import torch

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.05)
p.add_argument("--epochs", type=int, default=6)
p.add_argument("--hidden", type=int, default=256)
p.add_argument("--every", type=int, default=50)
p.add_argument("--ceil", action="store_true")
a = p.parse_args()

client = slaq.Client()
torch.manual_seed(1)
x, y = fmnist.load()
x, y = torch.from_numpy(x), torch.from_numpy(y)
model = torch.nn.Sequential(torch.nn.Linear(784, a.hidden), torch.nn.ReLU(),
                            torch.nn.Linear(a.hidden, 10))
opt = torch.optim.SGD(model.parameters(), lr=a.lr)
lossf = torch.nn.CrossEntropyLoss()
step, losses = 0, []
for epoch in range(a.epochs):
    perm = torch.randperm(len(x))
    for i in range(0, len(x), 64):
        idx = perm[i:i + 64]
        opt.zero_grad()
        loss = lossf(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % a.every == 0:
            mean = sum(losses) / len(losses)
            losses = []
            client.report(step // a.every, mean, samples=64 * a.every)
            print("iter=%d loss=%.6f" % (step // a.every, mean), flush=True)
            c = client.cores()
            torch.set_num_threads(max(1, math.ceil(c) if a.ceil
                                      else math.floor(c)))
client.close()
