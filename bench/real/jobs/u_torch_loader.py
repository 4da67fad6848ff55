"""u_torch_loader.py — a PyTorch CNN-free MLP fed by a DataLoader with
two worker processes, as tutorials write it, with OMP_NUM_THREADS=1 set
at the top of the script (a common fix for oversubscription); a report
every 100 mini-batches."""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--workers", type=int, default=2)
a = p.parse_args()

client = slaq.Client()
torch.manual_seed(4)
x, y = fmnist.load()
data = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
loader = DataLoader(data, batch_size=64, shuffle=True,
                    num_workers=a.workers, persistent_workers=True)
model = torch.nn.Sequential(torch.nn.Linear(784, 200), torch.nn.Tanh(),
                            torch.nn.Linear(200, 10))
opt = torch.optim.Adam(model.parameters(), lr=5e-4)
lossf = torch.nn.CrossEntropyLoss()
step, losses = 0, []
for epoch in range(a.epochs):
    for xb, yb in loader:
        opt.zero_grad()
        loss = lossf(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % 100 == 0:
            mean = sum(losses) / len(losses)
            client.report(step // 100, mean, samples=6400)
            print("iter=%d loss=%.6f" % (step // 100, mean), flush=True)
            losses = []
client.close()
