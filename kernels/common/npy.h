/* Writes NumPy .npy (format 1.0) files: the verification round's evidence. */
#ifndef HX_NPY_H
#define HX_NPY_H
#include <stddef.h>
/* dtype: numpy descr such as "<f4", "|u1", "|i1", "<i2", "<i4". */
int hx_npy_write(const char *path, const char *dtype, int ndim, const size_t *shape, const void *data, size_t bytes);
#endif
