"""Do torch's CPU matrix products, and the sampler built on them, give the same bits on one thread as on two?

    python benchmarks/thread_invariance.py [--rows 64]

``farm book`` hands a chapter both cores while it computes alone and one core while two chapters compute, so which
thread count a computation gets depends on what else runs. This prints, for the products the tiny profile's model
makes (hidden 128, MLP 384, vocabulary 2048), the row counts at which one thread and two give different bits, and
whether the sampler's next-token logits differ for batches of those sizes (a batch's last rows decode at such
sizes; one flipped token then changes every later draw of the batch). Each case runs in a fresh process twice: with
``MKL_CBWR`` unset, and with ``MKL_CBWR=AUTO,STRICT`` (MKL's strict conditional numerical reproducibility), which
must be set before MKL's first product. It also prints, in each mode, the seconds of 2,000 products of a decoding
step's size and of 10 training steps of the model (forward, backward, AdamW) on two threads. On BLAS libraries
other than MKL the variable does nothing. MKL's strict mode covers matrix products (gemm) only: the benchmark also
prints whether a matrix-vector product (gemv) and torch's own parallel sum of a long vector (above its 32,768-element
grain) give the same bits on one thread as on two, which strict mode does not promise, and whether one row of a
product gives the same bits alone as among many (a score cached by text must).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import dataclasses, json, sys, time, torch
rows = int(sys.argv[1])
out = {"differ": {}, "seconds": None}
for k, n in [(128, 384), (128, 768), (384, 128), (128, 2048)]:
    g = torch.Generator().manual_seed(k + n)
    bad = []
    for m in range(1, rows + 1):
        x, w = torch.randn(m, 1, k, generator=g), torch.randn(n, k, generator=g)
        got = []
        for th in (1, 2):
            torch.set_num_threads(th)
            got.append(x @ w.T)
        if not torch.equal(*got):
            bad.append(m)
    out["differ"][f"{k}x{n}"] = bad
from farmlib import Farm  # after the products above: MKL kept the mode it started in, so importing farmlib changes nothing
from farmlib.lm.model import new_model
from farmlib.lm.sampling import LlamaDecoder
farm = Farm("micro")
tok = farm.tokenizer()
model = new_model(dataclasses.replace(farm.profile.model, hidden_size=128, intermediate_size=384, num_heads=4,
                                      num_layers=4), tok, seed=0).eval()
sampled = []
for b in range(1, 17):
    ids = torch.randint(3, tok.vocab_size, (b, 12), generator=torch.Generator().manual_seed(b))
    got = []
    for th in (1, 2):
        torch.set_num_threads(th)
        with torch.inference_mode():
            decoder = LlamaDecoder(model, torch.ones_like(ids), 4)
            got.append(decoder(decoder(ids).argmax(-1)[:, None]))  # the logits of a decoding step, b rows
    if not torch.equal(*got):
        sampled.append(b)
out["sampler_differs_at_batch"] = sampled
g = torch.Generator().manual_seed(0)
X, w = torch.randn(3193, 1050, generator=g), torch.randn(1050, generator=g)
longs = [torch.randn(n, generator=g) for n in (50_000, 200_000, 1_000_000) for _ in range(4)]
def differs(f):
    got = []
    for th in (1, 2):
        torch.set_num_threads(th)
        got.append(f())
    return not torch.equal(*got)
out["beyond_products"] = {
    "X @ w, a matrix times a vector (the judge head's fit)": f"{'differs' if differs(lambda: X @ w) else 'the same'}",
    "X @ w[:, None], the same as a matrix product": f"{'differs' if differs(lambda: X @ w[:, None]) else 'the same'}",
    "sums of 50,000 to 1,000,000 numbers (torch's own parallel reduction)":
        f"{sum(differs(v.sum) for v in longs)} of {len(longs)} differ",
}
torch.set_num_threads(2)
h, a = torch.randn(8, 40, 128, generator=g), torch.rand(8, 1, 40, generator=g)
alone = torch.equal(torch.bmm(a[:1], h[:1])[0], torch.bmm(a, h)[0])
out["beyond_products"]["a batched product's first row (bmm), alone and in a batch of 8"] = \
    "the same" if alone else "differs"
# a judge's score of a text, X[k] @ w, is cached by text: it must not depend on what else was scored with it
rows = range(0, 3193, 64)
as_gemm = X @ w[:, None]
out["beyond_products"]["X[k] @ w[:, None] (a judge's score), alone and among 3,193 rows"] = \
    f"{sum(not torch.equal(X[k:k + 1] @ w[:, None], as_gemm[k:k + 1]) for k in rows)} of {len(rows)} rows differ"
as_sum = (X * w).sum(-1)
out["beyond_products"]["(X[k] * w).sum(), the same score as a sum of products, alone and among 3,193 rows"] = \
    f"{sum(not torch.equal((X[k:k + 1] * w).sum(-1), as_sum[k:k + 1]) for k in rows)} of {len(rows)} rows differ"
# a reader's LM head over a batch's response tokens: a short answer's 1-3 rows alone, or among 3,000
head = torch.nn.Linear(128, 2048, bias=False)
H = torch.randn(3000, 128, generator=g)
with torch.no_grad():
    every = head(H)
    for m in (1, 3, 4, 16):
        starts = range(0, 2900, 97)
        bad = sum(not torch.equal(head(H[s:s + m]), every[s:s + m]) for s in starts)
        out["beyond_products"][f"an LM head's {m} row(s) (128 x 2048), alone and among 3,000"] = \
            f"{bad} of {len(starts)} differ"
torch.set_num_threads(2)
x, w = torch.randn(256, 1, 128), torch.randn(2048, 128)
t = time.perf_counter()
for _ in range(2000):
    x @ w.T
out["seconds"] = time.perf_counter() - t
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(3, tok.vocab_size, (32, 128), generator=torch.Generator().manual_seed(0))
model.train()
t = time.perf_counter()
for _ in range(10):
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad()
out["train_seconds"] = time.perf_counter() - t
print(json.dumps(out))
"""


def run(rows: int, cbwr: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
    if cbwr:
        env["MKL_CBWR"] = cbwr
    done = subprocess.run([sys.executable, "-c", CHILD, str(rows)], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=64, help="products with 1..rows rows")
    a = ap.parse_args()
    for label, cbwr in [("MKL_CBWR unset", None), ("MKL_CBWR=AUTO,STRICT", "AUTO,STRICT")]:
        r = run(a.rows, cbwr)
        print(f"{label}:")
        for shape, bad in r["differ"].items():
            print(f"  x @ w.T, {shape}: 1 and 2 threads differ at rows {bad or 'none'}")
        print(f"  the sampler's decoding step (4 layers): its logits differ at batch sizes "
              f"{r['sampler_differs_at_batch'] or 'none'} of 1-16")
        for name, verdict in r["beyond_products"].items():
            print(f"  {name}: {verdict}" + ("" if "alone" in name else " on 1 and 2 threads"))
        print(f"  2,000 products 256 x 128 x 2048 on 2 threads: {r['seconds']:.2f} s; 10 training steps of the "
              f"model on 32 x 128 tokens: {r['train_seconds']:.2f} s")


if __name__ == "__main__":
    main()
