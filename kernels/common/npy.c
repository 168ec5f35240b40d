#include <stdio.h>
#include <string.h>
#include "npy.h"

int hx_npy_write(const char *path, const char *dtype, int ndim, const size_t *shape, const void *data, size_t bytes) {
    char hdr[256], dims[128] = "";
    int n = 0;
    for (int i = 0; i < ndim; i++)
        n += snprintf(dims + n, sizeof dims - n, "%zu%s", shape[i], i + 1 < ndim ? ", " : (ndim == 1 ? "," : ""));
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", dtype, dims);
    /* magic(6) + version(2) + header length(2) + header, padded to 64 with '\n' last */
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned short hl = (unsigned short)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f);
    fputc(hl >> 8, f);
    fwrite(hdr, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    size_t w = fwrite(data, 1, bytes, f);
    return (fclose(f) == 0 && w == bytes) ? 0 : -1;
}
