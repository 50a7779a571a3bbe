"""nvfp4kit.testing - assertions for pytest (or unittest) suites of kernels."""
from ._tools import verify


def assert_quantized_equal(actual, expected, errors=10):
    """Fails unless actual reproduces expected byte for byte.

    actual: a Quantized, a dict of the kernel's arrays / tensors under the
    bundle's names (data, scale, scale_swizzled, amax, dequant, *_t), or a
    file. expected: a golden bundle path or a Quantized. Raises
    AssertionError whose message is the verifier's report, its causes first.
    """
    rep = verify(expected, actual, errors=errors)
    if rep.ok:
        return rep
    causes = "".join("cause %s: %s\n" % c for c in rep.causes)
    raise AssertionError((causes + "\n" if causes else "") + str(rep))
