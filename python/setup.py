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

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 carries bdist_wheel; before, the wheel package did
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

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


class BinaryDistribution(Distribution):
    """Binary (the library and the program built by make): the files go to
    platlib, the root of the wheel, as for an extension module."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """The wheel carries an x86-64 (or aarch64) shared library and program, so
    it is tagged for the platform it was built on (py3-none-linux_x86_64; `make
    wheel` then lets auditwheel turn that into manylinux where it can), never
    py3-none-any. The Python side is plain ctypes: any Python 3, no ABI tag."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithMake, "bdist_wheel": PlatformWheel})
