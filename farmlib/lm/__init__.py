"""Language models: a small Llama and its tokenizer (``model``), our KV-cache sampler
(``sampling``), and the supervised loop used for pretraining and SFT (``supervised``)."""

from farmlib.lm.model import load_model, load_tokenizer, n_params, n_trainable, new_model, train_tokenizer, with_lora
from farmlib.lm.sampling import respond, sample_batch
from farmlib.lm.supervised import lm_loss, train_lm

__all__ = ["load_model", "load_tokenizer", "lm_loss", "n_params", "n_trainable", "new_model", "respond",
           "sample_batch", "train_lm", "train_tokenizer", "with_lora"]
