#!/usr/bin/env python3
"""tests/run_py.py JOBS DIR [FIRST...]: the Python cross-checks (`make check-py`), JOBS modules at a time.

Each tests/py/test_*.py module runs in its own `python -m unittest discover -s DIR -p MODULE -v`
process (what one discover of the whole folder would run for it). The modules named in FIRST (the
longest, by the seconds they took) start first, the rest in name order, so that the slots end
together. A module's output is printed in one piece when it ends, with its seconds, so that modules
running side by side do not interleave. The last lines are unittest's own for the whole set ("Ran N
tests in T s", then "OK" or "FAILED (failures=F, errors=E)"), so the run reads as one unittest run.
The exit status is 1 when a module failed or did not report, else 0.
"""
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import threading
import time


def run_module(python, folder, module):
    start = time.monotonic()
    p = subprocess.run([python, "-m", "unittest", "discover", "-s", folder, "-p", module, "-v"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    return p.returncode, p.stdout, time.monotonic() - start


def counts(rc, out):
    """(tests run, failures, errors) from unittest's closing lines, unexpected successes counted as
    failures; a module that died before them, or exited nonzero with none, counts one error."""
    ran = re.findall(r"^Ran (\d+) tests? in ", out, re.M)
    if not ran:
        return 1, 0, 1
    tail = "\n".join(out.rstrip().splitlines()[-3:])
    failures, errors = (sum(int(n) for n in re.findall(r"(?:%s)=(\d+)" % k, tail))
                        for k in ("failures|unexpected successes", "errors"))
    if rc != 0 and failures + errors == 0:
        errors = 1
    return int(ran[-1]), failures, errors


def main():
    jobs, folder, first = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    modules = sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, "test_*.py")))
    order = [m for m in first if m in modules] + [m for m in modules if m not in first]
    lock = threading.Lock()
    total = failures = errors = skipped = 0
    start = time.monotonic()

    def one(module):
        nonlocal total, failures, errors, skipped
        rc, out, secs = run_module(sys.executable, folder, module)
        n, f, e = counts(rc, out)
        with lock:
            total, failures, errors = total + n, failures + f, errors + e
            skipped += sum(int(k) for k in re.findall(r"^(?:OK|FAILED) \(.*?skipped=(\d+)", out, re.M))
            sys.stdout.write(out)
            print("%s %s (%d s)" % ("FAIL" if f + e else "PASS", module, round(secs)), flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for f in [pool.submit(one, m) for m in order]:
            f.result()
    print("-" * 70)
    print("Ran %d tests in %.3fs" % (total, time.monotonic() - start))
    print()
    if failures + errors:
        print("FAILED (failures=%d, errors=%d)" % (failures, errors), flush=True)
        return 1
    print("OK (skipped=%d)" % skipped if skipped else "OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
