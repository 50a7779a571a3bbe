# mk/mpi.mk - nvfp4-mpi, the nvfp4 command whose study runner spreads the
# (arm, seed) jobs over MPI ranks (docs/studies.md, "MPI"). Built by `make
# all` only where mpicc exists (Debian: openmpi-bin, libopenmpi-dev); the
# project builds without it. Only tools/mpi/nvfp4_mpi.c sees mpi.h; the
# libraries and the plain nvfp4 link no MPI.

MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
CLI_MPI := $(BUILD)/bin/nvfp4-mpi
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null)
MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null)

all: $(CLI_MPI)

# tools/nvfp4.c again, its main renamed, for nvfp4_mpi.c's main to call
$(BUILD)/obj/mpi/nvfp4_main.o: tools/nvfp4.c $(BUILD)/gen/cli_commands.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wno-missing-prototypes -Dmain=nvfp4_cli_main -c $< -o $@

$(BUILD)/obj/mpi/nvfp4_mpi.o: tools/mpi/nvfp4_mpi.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itools $(MPI_CFLAGS) -c $< -o $@

$(CLI_MPI): $(filter-out $(BUILD)/obj/tools/nvfp4.o,$(CLI_OBJ)) $(BUILD)/obj/mpi/nvfp4_main.o \
            $(BUILD)/obj/mpi/nvfp4_mpi.o $(STUDY_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter-out $(BUILD)/obj/tools/nvfp4.o,$(CLI_OBJ)) $(BUILD)/obj/mpi/nvfp4_main.o \
	    $(BUILD)/obj/mpi/nvfp4_mpi.o $(STUDY_A) $(LIB_A) $(LDLIBS_ALL) $(MPI_LIBS)
endif
