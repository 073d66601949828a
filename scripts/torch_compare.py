#!/usr/bin/env python3
"""PyTorch twin of senc's graph network (src/model/network.rs) for timing.

Builds the same encode-process-decode network -- MLPs in -> L -> ... -> out
with ReLU and output LayerNorm, the edge MLP's first layer split into
W_e e + (W_s h)[s] + (W_r h)[r], sum aggregation with index_add_, residual
updates -- on a random graph with the given node and edge counts, and times
the forward pass and forward + backward + Adam (gradient-norm clip 1) with
the surrogate loss sum(x * g), on the CPU with a fixed thread count.

    python3 scripts/torch_compare.py --threads 2 --size cpu
    python3 scripts/torch_compare.py --threads 2 --size paper

Edge counts default to the 1500-vertex benchmark scene of benches/model.rs
(printed by `cargo bench --bench model`); override with --edges.
"""
import argparse
import statistics
import time

import torch
from torch import nn

SIZES = {
    # latent, hidden layers, block string, coarse levels
    "cpu": (32, 2, "f,c0,s|f,c0,s|d:c0|u:f,c0,s|f,c0,s|f,s", 1),
    "paper": (128, 2, "f,c0,s|f,c0,s|f,c0,s|d:c0,c1|c0,c1|c0,c1|d:c1|c1|c1|"
              "u:c0,c1|c0,c1|c0,c1|u:f,c0,s|f,c0,s|f,c0,s", 2),
}
EDGE_FEATURES = {"b": 9}  # every other set has 12


class Mlp(nn.Module):
    def __init__(self, parts, width, hidden, out, layer_norm):
        super().__init__()
        first_out = width if hidden > 0 else out
        self.first = nn.ModuleList(
            nn.Linear(d, first_out, bias=(k == 0)) for k, d in enumerate(parts))
        self.rest = nn.ModuleList(
            nn.Linear(width, out if l == hidden else width) for l in range(1, hidden + 1))
        self.norm = nn.LayerNorm(out) if layer_norm else None

    def finish(self, x):
        for layer in self.rest:
            x = layer(torch.relu(x))
        return self.norm(x) if self.norm is not None else x

    def forward(self, parts):
        return self.finish(sum(f(p) for f, p in zip(self.first, parts)))


def parse_blocks(text):
    blocks = []
    for raw in text.split("|"):
        raw = raw.split(":", 1)[-1]
        blocks.append(raw.split(",") + ["b"])  # body edges join every block
    return blocks


class GraphNet(nn.Module):
    def __init__(self, latent, hidden, blocks, node_features, kinds):
        super().__init__()
        mlp = lambda parts, out, norm: Mlp(parts, latent, hidden, out, norm)
        self.kinds = kinds
        self.blocks_sets = blocks
        self.node_encoder = mlp([node_features], latent, True)
        self.edge_encoders = nn.ModuleDict(
            {k: mlp([EDGE_FEATURES.get(k, 12)], latent, True) for k in kinds})
        self.edge_updates = nn.ModuleList(
            nn.ModuleDict({k: mlp([latent] * 3, latent, True) for k in sets}) for sets in blocks)
        self.node_updates = nn.ModuleList(
            mlp([latent] * (len(sets) + 1), latent, True) for sets in blocks)
        self.decoder = mlp([latent], 3, False)

    def forward(self, nodes, edges, num_garment):
        h = self.node_encoder([nodes])
        e = {k: self.edge_encoders[k]([f]) for k, (f, _, _) in edges.items()}
        for sets, updates, node_update in zip(self.blocks_sets, self.edge_updates,
                                              self.node_updates):
            parts = [h]
            for k in sets:
                _, s, r = edges[k]
                m = updates[k]
                first = m.first[0](e[k]) + m.first[1](h)[s] + m.first[2](h)[r]
                e[k] = e[k] + m.finish(first)
                parts.append(torch.zeros_like(h).index_add_(0, r, e[k]))
            h = h + node_update(parts)
        return self.decoder([h[:num_garment]])


def timed(fn, repeats):
    fn(), fn()  # warm up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=SIZES, default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--garment", type=int, default=1500, help="garment nodes")
    ap.add_argument("--body", type=int, default=1474, help="body nodes")
    ap.add_argument("--edges", default="f=8800,c0=7040,c1=1760,s=1348,b=3000",
                    help="directed edges per set, e.g. f=8700,s=2850")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    latent, hidden, block_string, levels = SIZES[args.size]
    blocks = parse_blocks(block_string)
    kinds = sorted({k for sets in blocks for k in sets})
    counts = dict(kv.split("=") for kv in args.edges.split(","))
    n = args.garment + args.body
    node_features = 3 + 3 + (levels + 1) + 3 + 1 + 1 + 3 + 3
    edges = {}
    for k in kinds:
        count = int(counts[k])
        edges[k] = (torch.randn(count, EDGE_FEATURES.get(k, 12)),
                    torch.randint(0, n, (count,)), torch.randint(0, n, (count,)))
    nodes = torch.randn(n, node_features)
    net = GraphNet(latent, hidden, blocks, node_features, kinds)
    adam = torch.optim.Adam(net.parameters(), lr=1e-5)
    g = torch.randn(args.garment, 3)

    def forward():
        with torch.no_grad():
            net(nodes, edges, args.garment)

    def train_step():
        adam.zero_grad(set_to_none=True)
        x = net(nodes, edges, args.garment)
        (x * g).sum().backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        adam.step()

    fwd = timed(forward, args.repeats)
    step = timed(train_step, args.repeats)
    params = sum(p.numel() for p in net.parameters())
    print(f"torch {torch.__version__} threads={args.threads} size={args.size} "
          f"nodes={n} edges={ {k: int(counts[k]) for k in kinds} } params={params}")
    print(f"forward     median {fwd[0] * 1e3:8.1f} ms  min {fwd[1] * 1e3:8.1f} ms")
    print(f"train_step  median {step[0] * 1e3:8.1f} ms  min {step[1] * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
