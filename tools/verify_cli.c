/* verify_cli.c - the owned buffers of a verifier view the CLI builds. The
 * views of bundles, kernel files and quantization results are the
 * library's (nvfp4_vview_from_quantized, src/verify/report_views.c). */
#include "verify_cli.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

void vcli_view_free(vcli_view *v)
{
    free(v->x_owned);
    nvfp4_free(v->swz_owned);
    free(v->dq_owned);
    memset(v, 0, sizeof *v);
}
