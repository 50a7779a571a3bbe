"""llmc_oneshot.py - writes a checkpoint with llm-compressor's own `oneshot`
(llm-compressor 0.14 with compressed-tensors 0.19) for test_ckpt.py, run as a
child process whose sys.path starts with the folder llm-compressor was
installed into (pip install --no-deps --target: llm-compressor pins
compressed-tensors 0.19 and older torch/transformers, so it is kept out of
the test process, which imports compressed-tensors 0.20.1).

    python3 llmc_oneshot.py ARCH SCHEME DTYPE OUT [INIT_STD]

ARCH llama or mixtral, SCHEME an llm-compressor preset (NVFP4, NVFP4A16),
DTYPE float32, bfloat16 or float16, INIT_STD the weights' initializer_range
(default transformers' 0.02). A tiny random model (seed 0) is saved with a
word-level tokenizer to OUT-orig (its weights in DTYPE: the original), loaded
back as a user loads a model, calibrated on 4 random sequences of 16 tokens
and saved compressed to OUT."""
import os
import shutil
import sys

import pyarrow as pa
import torch
from datasets import Dataset
from llmcompressor import oneshot
from llmcompressor.modifiers.quantization import QuantizationModifier
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM, MixtralConfig, MixtralForCausalLM,
                          PreTrainedTokenizerFast)


def tiny_model(arch, std):
    torch.manual_seed(0)
    if arch == "llama":
        cfg = LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                          initializer_range=std)
        cfg.architectures = ["LlamaForCausalLM"]
        return LlamaForCausalLM(cfg).eval()
    cfg = MixtralConfig(vocab_size=64, hidden_size=64, intermediate_size=64, num_hidden_layers=1,
                        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                        max_position_embeddings=64, initializer_range=std)
    cfg.architectures = ["MixtralForCausalLM"]
    return MixtralForCausalLM(cfg).eval()


def tokenizer():
    tk = Tokenizer(models.WordLevel({f"t{i}": i for i in range(64)}, unk_token="t0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="t0", pad_token="t1", eos_token="t2",
                                   bos_token="t3")


def main(arch, scheme, dtype, out, std="0.02"):
    orig = out + "-orig"
    for d in (out, orig):
        shutil.rmtree(d, ignore_errors=True)
    dt = getattr(torch, dtype)
    tok = tokenizer()
    tiny_model(arch, float(std)).to(dt).save_pretrained(orig)
    tok.save_pretrained(orig)
    model = AutoModelForCausalLM.from_pretrained(orig, dtype=dt)
    g = torch.Generator().manual_seed(1)
    # a Dataset built from an Arrow table with a fixed fingerprint: from_dict would hash its
    # contents with dill, which fails on some pyarrow versions (MonthDayNano)
    ds = Dataset(pa.table({"input_ids": [torch.randint(0, 64, (16,), generator=g).tolist() for _ in range(4)],
                           "attention_mask": [[1] * 16 for _ in range(4)]}), fingerprint="calibration")
    ignore = ["lm_head", "re:.*block_sparse_moe.gate$", "re:.*mlp.gate$"]
    oneshot(model=model, dataset=ds, recipe=QuantizationModifier(targets="Linear", scheme=scheme, ignore=ignore),
            num_calibration_samples=4, max_seq_length=16, processor=tok)
    model.save_pretrained(out, save_compressed=True)


if __name__ == "__main__":
    main(*sys.argv[1:6])
