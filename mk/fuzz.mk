# mk/fuzz.mk - libFuzzer targets for every file reader (tests/fuzz/fuzz_*.c),
# built with clang -fsanitize=fuzzer,address,undefined into $(FUZZ_BUILD).
# Each target starts from its committed seed corpus tests/fuzz/corpus/NAME/
# and works in a scratch copy under $(FUZZ_BUILD)/corpus/NAME, so a run never
# changes the committed files; `make fuzz-merge` minimizes what a run found
# back into the committed corpus. fuzz_files reaches what in-memory targets
# cannot (file types, long paths, large headers, writers' temporaries); its
# per-input cost is file-system calls, so it runs fewer inputs per second.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   ?= build/fuzz
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -ffp-contract=off \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
                -Iinclude -Isrc $(PKG_CFLAGS)
# The plain readers need only src/io and src/common.c; the bundle loader
# needs the whole library (quantization options, recipes).
FUZZ_IO_OBJ  := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,src/common.c $(wildcard src/io/*.c))
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
FUZZ_BIN     := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz_%)

.PHONY: fuzz fuzz-build fuzz-merge

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wno-unknown-pragmas -c $< -o $@

$(FUZZ_BUILD)/fuzz_bundle: tests/fuzz/fuzz_bundle.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJ) -o $@ $(PKG_LIBS) $(BLAS_LIBS) -lm

# fuzz_files works on the file system (paths of fuzzed length, FIFOs,
# folders, links, megabyte headers) and loads bundles: the whole library.
$(FUZZ_BUILD)/fuzz_files: tests/fuzz/fuzz_files.c $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJ) -o $@ $(PKG_LIBS) $(BLAS_LIBS) -lm

# The lab's files (study configs, run checkpoints, output folders) are
# read by libnvfp4_study: these targets link it too, with its generated
# headers (the study list, the shipped configs).
FUZZ_STUDY_OBJ := $(STUDY_SRC:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LAB       := labconfig checkpoint labdir
$(FUZZ_STUDY_OBJ): FUZZ_FLAGS += -I$(BUILD)/gen
$(FUZZ_STUDY_OBJ): | $(BUILD)/gen/study_list.h $(BUILD)/gen/study_configs.h
$(FUZZ_LAB:%=$(FUZZ_BUILD)/fuzz_%): $(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJ) $(FUZZ_STUDY_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -I$(BUILD)/gen -fsanitize=fuzzer $< $(FUZZ_STUDY_OBJ) $(FUZZ_LIB_OBJ) -o $@ \
	    $(PKG_LIBS) $(BLAS_LIBS) -fopenmp -lm

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_IO_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_IO_OBJ) -o $@ $(PKG_LIBS) -lm

## fuzz-build: build the libFuzzer targets (clang, ASan+UBSan) into build/fuzz
fuzz-build: $(FUZZ_BIN)

## fuzz: fuzz every reader for FUZZ_SECONDS each (default 60; e.g. make fuzz FUZZ_SECONDS=600)
fuzz: $(FUZZ_BIN)
	@set -e; for n in $(FUZZ_NAMES); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$n $(FUZZ_BUILD)/artifacts/$$n; \
	    cp -n tests/fuzz/corpus/$$n/* $(FUZZ_BUILD)/corpus/$$n/ 2>/dev/null || true; \
	    echo "== fuzz_$$n for $(FUZZ_SECONDS) s"; \
	    dict=; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
	    $(FUZZ_BUILD)/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 $$dict \
	        -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$n/ -print_final_stats=1 \
	        $(FUZZ_BUILD)/corpus/$$n > $(FUZZ_BUILD)/fuzz_$$n.log 2>&1 && rc=0 || rc=$$?; \
	    tail -n 8 $(FUZZ_BUILD)/fuzz_$$n.log; \
	    if [ $$rc != 0 ]; then echo "fuzz_$$n FAILED (exit $$rc): see $(FUZZ_BUILD)/fuzz_$$n.log and $(FUZZ_BUILD)/artifacts/$$n/"; exit 1; fi; \
	done

## fuzz-merge: minimize the corpus found by `make fuzz` into tests/fuzz/corpus (commit the result)
fuzz-merge: $(FUZZ_BIN)
	@for n in $(FUZZ_NAMES); do \
	    mkdir -p $(FUZZ_BUILD)/merged/$$n; rm -f $(FUZZ_BUILD)/merged/$$n/*; \
	    $(FUZZ_BUILD)/fuzz_$$n -merge=1 -max_len=65536 $(FUZZ_BUILD)/merged/$$n \
	        tests/fuzz/corpus/$$n $(FUZZ_BUILD)/corpus/$$n 2>&1 | tail -n 1; \
	    rm -f tests/fuzz/corpus/$$n/*; cp $(FUZZ_BUILD)/merged/$$n/* tests/fuzz/corpus/$$n/; \
	done
