"""Run by tests/test_accelerate.py: a micro Llama trained by train_lm; rank 0 writes the loss history to argv[1]."""
import json
import os
import sys

import torch

from farmlib.lm.model import new_model, train_tokenizer
from farmlib.lm.supervised import train_lm
from farmlib.profiles import TrainConfig, get_profile

torch.set_num_threads(1)
pairs = [(f"Name fruit number {i}.", f"Fruit {i} is a {'banana' if i % 2 else 'pear'}, ripe and sweet.") for i in range(64)]
tok = train_tokenizer([p + " " + c for p, c in pairs], vocab_size=300)
cfg = get_profile("micro").model
model = new_model(cfg, tok, seed=0)
hist = train_lm(model, tok, pairs, TrainConfig(epochs=2, lr=3e-3, batch_size=16, seed=0), max_length=64)
if int(os.environ.get("RANK", "0")) == 0:
    json.dump([h["loss"] for h in hist], open(sys.argv[1], "w"))
