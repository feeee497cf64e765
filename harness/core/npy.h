/* npy.h - NumPy .npy (format version 1.0) writers, for dumping a case's inputs,
 * outputs and references so they can be inspected with numpy.load.
 *
 * Layout: "\x93NUMPY", version 1.0, a little-endian uint16 header length, then the
 * header: a Python dict literal {'descr': ..., 'fortran_order': False, 'shape': (...), }
 * padded with spaces and ended by '\n' so that the data starts at a multiple of 64
 * bytes, then the raw C-order data.
 */
#ifndef KB_NPY_H
#define KB_NPY_H

#include "core/kb.h"

/* Write n = prod(shape) floats as descr "<f4". ndim 0 writes a scalar (one element).
 * The parent directory is created (a case's folder under --dump DIR), then the file is
 * written by the output rule (core/output.h: replaced atomically, a device or FIFO
 * written through). KB_ERR_INPUT for a negative dim
 * or ndim outside [0, 32]; KB_ERR_IO when the file cannot be written (no partial file is
 * left). */
kb_status kb_npy_write_f32(const char *path, const float *data, const int64_t *shape, int ndim);

/* Write prod(shape) elements of elem_bytes each, with the given NumPy type string
 * ("<f4", "<f2", "<u2", "|i1", "<i4", ...); the data is written as it is in memory
 * (the host is little-endian, which "<" asserts). Errors as kb_npy_write_f32, plus
 * KB_ERR_INPUT for an empty descr or a header too long for format 1.0. */
kb_status kb_npy_write_raw(const char *path, const char *descr, const void *data,
                           size_t elem_bytes, const int64_t *shape, int ndim);

/* Read a .npy file of "<f4" elements in C order, as kb_npy_write_f32 writes it (any shape;
 * the elements are returned flat). On KB_OK *data is malloc'ed (caller frees) and *n set.
 * KB_ERR_IO when the file cannot be read, KB_ERR_INPUT when it is not a version-1.0
 * little-endian float32 C-order .npy or its data is cut short. */
kb_status kb_npy_read_f32(const char *path, float **data, int64_t *n);

#endif /* KB_NPY_H */
