#!/usr/bin/env python3
"""Byte n-gram baselines for the lab's GPT text: the held-out cross-entropy
(nats per byte) of interpolated Kneser-Ney count models of order 1 to N,
fitted on the GPT's training text and scored on its held-out text.

The split is the lab's (src/study/seqdata.c): the files of Debian's
`fortunes` package, in the lab's fixed order, each file's first 90% (the
integer cut n - n // 10) to the training text and its last 10% to the
held-out text. Every held-out byte after the first N - 1 of each file's
held-out part is scored with the full context; the GPT's windows see up to
64 bytes before a byte, so these are the levels a model with that much
context should pass (docs/studies.md, "The regime config").

Usage: tools/ngram_baseline.py [--order N (default 5)] [--dir DIR]
Exit 2 when the corpus is missing (apt-get install fortunes).
Standard library only.
"""
import argparse
import math
import os
import sys
from collections import defaultdict

FILES = ["art", "computers", "cookie", "definitions", "disclaimer", "drugs", "education", "ethnic", "food",
         "goedel", "humorists", "kids", "knghtbrd", "law", "linux", "linuxcookie", "love", "magic", "medicine",
         "men-women", "miscellaneous", "news", "paradoxum", "people", "perl", "pets", "platitudes", "politics",
         "pratchett", "science", "songs-poems", "sports", "startrek", "tao", "wisdom", "work", "zippy"]
DISCOUNT = 0.75  # the usual absolute discount of interpolated Kneser-Ney
VOCAB = 256


def read_split(directory):
    train, held = [], []
    for name in FILES:
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as f:
                b = f.read()
        except OSError as e:
            _fail(path, e)
        cut = len(b) - len(b) // 10
        train.append(b[:cut])
        held.append(b[cut:])
    return train, held


def _fail(path, e):
    print(f"ngram_baseline: cannot read {path} ({e.strerror}): the text comes from the Debian package "
          f"'fortunes' (apt-get install -y fortunes)", file=sys.stderr)
    sys.exit(2)


class KneserNey:
    """Interpolated Kneser-Ney over bytes, orders 1..n, ending in the uniform
    distribution over 256 bytes."""

    def __init__(self, texts, n):
        self.n = n
        # raw counts of the highest order; continuation counts below it
        grams = [defaultdict(int) for _ in range(n + 1)]  # grams[k][(h, w)] for context length k - 1
        for t in texts:
            for i in range(len(t)):
                for k in range(1, n + 1):
                    if i - k + 1 < 0:
                        break
                    grams[k][t[i - k + 1:i + 1]] += 1
        self.count = [None] * (n + 1)
        for k in range(1, n + 1):
            if k == n:
                self.count[k] = grams[k]
            else:  # distinct left extensions of each k-gram
                cont = defaultdict(int)
                for g in grams[k + 1]:
                    cont[g[1:]] += 1
                self.count[k] = cont
        # per context: total and distinct followers
        self.ctx_total = [None] * (n + 1)
        self.ctx_types = [None] * (n + 1)
        for k in range(1, n + 1):
            tot, typ = defaultdict(int), defaultdict(int)
            for g, c in self.count[k].items():
                tot[g[:-1]] += c
                typ[g[:-1]] += 1
            self.ctx_total[k], self.ctx_types[k] = tot, typ

    def prob(self, ctx, w):
        p = 1.0 / VOCAB
        for k in range(1, self.n + 1):  # lowest order first, each interpolating the one below
            h = ctx[len(ctx) - (k - 1):] if k > 1 else b""
            if len(h) != k - 1:
                break
            tot = self.ctx_total[k].get(h, 0)
            if tot == 0:
                continue  # unseen context: this order adds nothing
            c = self.count[k].get(h + bytes([w]), 0)
            p = max(c - DISCOUNT, 0.0) / tot + DISCOUNT * self.ctx_types[k][h] / tot * p
        return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--order", type=int, default=5)
    ap.add_argument("--dir", default=os.environ.get("NVFP4_FORTUNES_DIR") or "/usr/share/games/fortunes")
    a = ap.parse_args()
    if not 1 <= a.order <= 8:
        print("ngram_baseline: --order must be 1..8", file=sys.stderr)
        sys.exit(2)
    train, held = read_split(a.dir)
    print(f"training text {sum(map(len, train)):,} bytes, held-out {sum(map(len, held)):,} bytes ({a.dir})")
    for n in range(1, a.order + 1):
        m = KneserNey(train, n)
        nll, cnt = 0.0, 0
        for t in held:
            for i in range(a.order - 1, len(t)):  # the same bytes scored at every order
                nll -= math.log(m.prob(t[i - n + 1:i] if n > 1 else b"", t[i]))
                cnt += 1
        print(f"order {n} ({n - 1} bytes of context): {nll / cnt:.4f} nats/byte over {cnt:,} held-out bytes")


if __name__ == "__main__":
    main()
