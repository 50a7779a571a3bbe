/* cli_witness.c - the --witness option of `nvfp4 verify` and `nvfp4
 * identify` (docs/verify.md, "Witnesses"): runs the library's search
 * (nvfp4_witness_search), writes the bundle and prints its report after the
 * command's own, or adds it to the command's JSON as "witness". */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "verify_cli.h"

int vcli_witness(const char *cmd, const void *x, nvfp4_dtype dtype, size_t rows, size_t cols,
                 const nvfp4_tensor_set *actual, nvfp4_witness_opts *wo, const char *report_json)
{
    wo->what = report_json ? NVFP4_REPORT_JSON : NVFP4_REPORT_TEXT;
    nvfp4_witness w;
    nvfp4_error err;
    if (nvfp4_witness_search(x, dtype, rows, cols, actual, wo, &w, &err)) {
        if (report_json) puts(report_json); /* the command's result stands; the witness failed */
        return cli_fail(cmd, "--witness: %s", err.message);
    }
    if (!report_json) {
        fputs(w.text, stdout);
        nvfp4_witness_free(&w);
        return 0;
    }
    json_t *root = json_loads(report_json, 0, NULL), *wj = json_loads(w.json, 0, NULL);
    int rc = 0;
    if (!json_is_object(root) || !wj) {
        rc = cli_fail(cmd, "out of memory");
    } else {
        json_object_set_new(root, "witness", wj);
        wj = NULL;
        char *s = json_dumps(root, JSON_INDENT(2));
        if (s) puts(s);
        else rc = cli_fail(cmd, "out of memory");
        free(s);
    }
    json_decref(wj);
    json_decref(root);
    nvfp4_witness_free(&w);
    return rc;
}
