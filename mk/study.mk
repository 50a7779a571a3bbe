# mk/study.mk - `make studies`: run every built-in error-accumulation study
# with its default size (docs/studies.md). Included by the Makefile.
# STUDY_OUT sets the output folder; STUDY_ARGS passes options (e.g. --seeds 3).

STUDY_OUT ?= $(BUILD)/study-out
STUDY_ARGS ?=

.PHONY: studies

## studies: run every `nvfp4 study` with default sizes into $(BUILD)/study-out (tens of minutes on 2 cores)
studies: $(CLI)
	@set -e; for s in $$($(CLI) study list | cut -d' ' -f1); do \
	    $(CLI) study run $$s --out $(STUDY_OUT)/$$s $(STUDY_ARGS); done
