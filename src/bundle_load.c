/* bundle_load.c - nvfp4_bundle_load: reads a golden bundle of any kind and
 * validates it with its own validator, the per-tensor bundle's (bundle.c)
 * or, where the metadata has "groups", the grouped one's (bundle_grouped.c).
 * It sits above both, so that neither calls the other back. */
#include <string.h>

#include "nvfp4/io.h"

nvfp4_status nvfp4_bundle_load(const char *path, nvfp4_tensor_set *out, nvfp4_error *err)
{
    nvfp4_status st = nvfp4_tset_read(path, out, err);
    if (st) return st;
    const char *f = nvfp4_tset_meta_get(out, "format");
    if (!f || strcmp(f, NVFP4_BUNDLE_FORMAT) != 0)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a golden bundle (metadata \"format\" is not \"%s\")", path,
                               NVFP4_BUNDLE_FORMAT);
    if (nvfp4_tset_meta_get(out, "groups")) return nvfp4_grouped_bundle_validate(out, path, true, err);
    return nvfp4_bundle_validate(out, path, true, err);
}
