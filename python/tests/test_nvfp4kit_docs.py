"""Every ```python example of docs/python.md runs as written (in a scratch
folder); a block that imports torch is skipped where torch is missing, and
the test_* functions a block defines (the pytest example) are run too."""
import os
import re

import pytest

from conftest import REPO

DOC = os.path.join(REPO, "docs", "python.md")


def blocks():
    with open(DOC) as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_doc_has_examples():
    assert len(blocks()) >= 4


@pytest.mark.parametrize("i", range(len(blocks())))
def test_doc_example_runs(i, tmp_path, monkeypatch):
    code = blocks()[i]
    if re.search(r"^import torch|^import nvfp4kit.torch", code, flags=re.M):
        pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "docs_example_%d" % i}
    exec(compile(code, "%s[block %d]" % (DOC, i), "exec"), ns)
    for name, f in list(ns.items()):
        if name.startswith("test_") and callable(f):
            f()
