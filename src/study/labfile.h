/* labfile.h - the lab's file plumbing (labfile.c): folders, study files
 * written atomically, lab files read whole. Not public. */
#ifndef NVFP4_STUDY_LABFILE_H
#define NVFP4_STUDY_LABFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nvfp4/study.h"

#define ST_MAX_LAB_FILE ((size_t)1 << 30)

bool st_mkdir_p(const char *dir, nvfp4_error *err);
/* One line of f without its line ending; false at the end of the file. */
bool st_read_line(FILE *f, char *buf, size_t n);
/* A study file composed in memory (st_file_open gives its stream), then
 * written to dir/name by nvfp4_file_write_atomic (st_file_commit) or
 * dropped (st_file_discard); either one closes the stream. */
typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} st_file;
FILE *st_file_open(st_file *sf, nvfp4_error *err);
nvfp4_status st_file_commit(st_file *sf, const char *dir, const char *name, nvfp4_error *err);
void st_file_discard(st_file *sf);
/* A lab file (CSV, JSON, .done) read whole as a stream; a FIFO, a device or
 * a folder is refused without waiting on it. Free *buf after fclose. NULL
 * with *absent set (when absent is given) when the file does not exist. */
FILE *st_open_lab_file(const char *path, char **buf, bool *absent, nvfp4_error *err);
/* Writes to f what compose writes (composed in memory first), then a line
 * with the SHA-256 of those bytes in hex: the checksummed files of --resume
 * (run checkpoints, shadow traces). compose reports a failure through the
 * stream's error flag; a short write to f sets f's, which the atomic writer
 * reports. `what` names the file's kind in an out-of-memory error. */
nvfp4_status st_write_summed(FILE *f, void (*compose)(FILE *m, const void *ctx), const void *ctx, const char *what,
                             nvfp4_error *err);
/* Whether buf[0..len) ends in the line st_write_summed writes, the SHA-256
 * of the bytes before it; *body: their length. */
#define ST_SUM_LINE_LEN 65 /* 64 hex digits and a line feed */
bool st_summed_ok(const uint8_t *buf, size_t len, size_t *body);
json_t *st_load_lab_json(const char *path, bool *absent, nvfp4_error *err);

#endif
