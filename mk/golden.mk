# mk/golden.mk - the committed golden suite (reference/) and SHA-256.
#
# SHA-256 (MANIFEST files, meta.json checksums) comes from libcrypto, linked
# by the main Makefile.

.PHONY: golden golden-check

## golden: regenerate the committed golden suite reference/ (byte for byte; see tools/golden-reference.sh)
golden: $(CLI)
	bash tools/golden-reference.sh $(CURDIR)/$(CLI) reference
	@du -sh reference

## golden-check: regenerate reference/ into a temporary folder and compare byte for byte
golden-check: $(CLI)
	NVFP4=$(CURDIR)/$(CLI) bash tests/cli/test_reference.sh
