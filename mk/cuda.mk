# mk/cuda.mk - the CUDA path (src/cuda/, docs/cuda.md). Included by the
# Makefile. Builds only where nvcc is found; elsewhere `make cuda` says the
# CUDA path is skipped and succeeds.
#
# Golden-path device code: -fmad=false (no FMA contraction), -prec-div=true
# and -prec-sqrt=true (IEEE division), -ftz=false (subnormals kept); host code
# of the .cu files: -ffp-contract=off and -Werror. Targets sm_90 (H100/H200,
# everything emulated in software), sm_100a (B200) and sm_103a (B300); on
# the two Blackwell targets the native cvt is opt-in (docs/cuda.md).

NVCC_BIN := $(shell command -v $(NVCC) 2>/dev/null)
CUDA_ARCHS ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100a,code=sm_100a \
              -gencode arch=compute_103a,code=sm_103a
# The native Blackwell cvt path is compiled in (guarded by __CUDA_ARCH__ and
# the architecture-specific feature macro; its SR cast only where
# src/core/sr_rbits.h knows the random-byte order: sm_103a) and switched on at run time only
# (nvfp4-gpu --native, or NVFP4_CUDA_NATIVE_CVT=1). NATIVE_CVT=0 leaves it out.
NATIVE_CVT ?= 1
NVCC_FP   := -fmad=false -prec-div=true -prec-sqrt=true -ftz=false
# -fvisibility=hidden as for the C library: libnvfp4_cuda.so exports what
# nvfp4/cuda.h declares (NVFP4_BEGIN_DECLS) and the public API of the CPU
# library linked into it, nothing internal.
NVCC_HOST := -Xcompiler -Wall,-Wextra,-Wshadow,-Wconversion,-Werror,-ffp-contract=off,-fno-fast-math,-fPIC,-fopenmp,-fvisibility=hidden
NVCCFLAGS_ALL = -std=c++17 -O3 -g $(CUDA_ARCHS) $(NVCC_FP) $(NVCC_HOST) -Werror all-warnings \
                $(if $(filter 1,$(NATIVE_CVT)),-DNVFP4_CUDA_NATIVE_CVT=1,) \
                -Iinclude -Isrc $(NVCCFLAGS)

CUDA_SRC    := $(filter-out src/cuda/nvfp4_gpu_main.cu,$(wildcard src/cuda/*.cu))
CUDA_OBJ    := $(CUDA_SRC:%.cu=$(BUILD)/obj/%.o)
CUDA_MAIN_OBJ := $(BUILD)/obj/src/cuda/nvfp4_gpu_main.o
CUDA_BIN    := $(BUILD)/bin/nvfp4-gpu
CUDA_LDLIBS  = $(PKG_LIBS) -lgomp -lm
# nvfp4-gpu must run on a bare GPU machine (tools/gpu-check.sh may carry a
# binary built elsewhere): the CUDA runtime (nvcc's default), libgomp,
# libstdc++ and libgcc are linked statically; it needs only glibc and the
# NVIDIA driver (one that supports the toolkit's CUDA version).
# GSL (the verifier's SR test, which nvfp4_cuda_check_quantized's explanation
# links in) is static too.
CUDA_BIN_LDLIBS = -Xcompiler -static-libstdc++,-static-libgcc $(shell $(CC) -print-file-name=libgomp.a) \
    $(shell $(CC) -print-file-name=libgsl.a) $(shell $(CC) -print-file-name=libgslcblas.a) -lm -lpthread

.PHONY: cuda cuda-selftest-emulated

ifneq ($(NVCC_BIN),)
## cuda: build build/lib/libnvfp4_cuda.so and build/bin/nvfp4-gpu with nvcc (sm_90, sm_100a, sm_103a); skipped without nvcc
cuda: $(CUDA_LIB_SO) $(CUDA_BIN)

$(BUILD)/obj/src/cuda/%.o: src/cuda/%.cu $(wildcard src/cuda/*.cuh src/cuda/*.h src/core/*.h include/nvfp4/*.h src/recipes/recipe.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS_ALL) -c $< -o $@

# libnvfp4_cuda.so (CUDA_LIB_SO, defined in the Makefile for `make install`)
# carries the whole CPU library (its objects, not the archive, so that it
# exports all of libnvfp4's public API rather than whatever the CUDA code
# happens to pull in) and the CUDA runtime (nvcc's default, static): a
# program needs -lnvfp4_cuda alone (nvfp4-cuda.pc). Soname
# libnvfp4_cuda.so.$(SO_MAJOR), with the soname link next to it as for libnvfp4.
$(CUDA_LIB_SO): $(CUDA_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(NVCC) -shared $(CUDA_ARCHS) -Xlinker -soname=libnvfp4_cuda.so.$(SO_MAJOR),--no-undefined -o $@ \
	    $(CUDA_OBJ) $(LIB_OBJ) $(CUDA_LDLIBS)
	ln -sf libnvfp4_cuda.so $@.$(SO_MAJOR)

$(CUDA_BIN): $(CUDA_MAIN_OBJ) $(CUDA_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	$(NVCC) $(CUDA_ARCHS) -o $@ $(CUDA_MAIN_OBJ) $(CUDA_OBJ) $(LIB_A) $(CUDA_BIN_LDLIBS)

## cuda-selftest-emulated: run the GPU self-test's kernel bodies on the CPU (no GPU needed)
cuda-selftest-emulated: $(CUDA_BIN)
	$(CUDA_BIN) selftest --emulate
else
cuda:
	@echo "make cuda: nvcc not found (NVCC=$(NVCC)): the CUDA path is skipped"

cuda-selftest-emulated: cuda
endif
