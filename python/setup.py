"""setup.py - builds the C library with the repository's Makefile and ships it.

`pip install ./python` (or `pip install -e ./python`) runs `make` in the
repository root for two targets, BUILD/lib/libnvfp4.so and BUILD/bin/nvfp4,
and copies them into nvfp4kit/_native/, where nvfp4kit/_lib.py loads the
library with ctypes and finds the command. Nothing is prebuilt and nothing
compiles at import time. BUILD is build/python under the repository unless
NVFP4KIT_BUILD names another make build folder (make reuses what is up to
date there); NVFP4KIT_JOBS sets make's -j (default: the CPU count).
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


class BuildWithMake(build_py):
    def run(self):
        super().run()
        if not os.path.exists(os.path.join(REPO, "Makefile")) or not os.path.isdir(os.path.join(REPO, "src")):
            raise SystemExit("nvfp4kit: %s is not the nvfp4kit repository (no Makefile, no src/): "
                             "install from a checkout with pip install ./python" % REPO)
        build = os.environ.get("NVFP4KIT_BUILD") or os.path.join(REPO, "build", "python")
        build = os.path.abspath(build)
        jobs = os.environ.get("NVFP4KIT_JOBS") or str(os.cpu_count() or 1)
        lib = os.path.join(build, "lib", "libnvfp4.so")
        cli = os.path.join(build, "bin", "nvfp4")
        subprocess.check_call(["make", "-C", REPO, "-j" + jobs, "BUILD=" + build, lib, cli])
        # editable installs import the package from the source tree
        pkg = os.path.join(HERE if getattr(self, "editable_mode", False) else self.build_lib, "nvfp4kit")
        native = os.path.join(pkg, "_native")
        os.makedirs(native, exist_ok=True)
        shutil.copyfile(os.path.realpath(lib), os.path.join(native, "libnvfp4.so"))
        shutil.copyfile(cli, os.path.join(native, "nvfp4"))
        os.chmod(os.path.join(native, "libnvfp4.so"), 0o755)
        os.chmod(os.path.join(native, "nvfp4"), 0o755)


setup(cmdclass={"build_py": BuildWithMake})
