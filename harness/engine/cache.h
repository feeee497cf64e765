/* cache.h - one persistent compile cache shared by both backends.
 *
 * An artefact (a .cubin from NVRTC, a .so from the host compiler) is stored as
 * <dir>/<key><artifact_ext> next to its compile log <dir>/<key>.log and its size and
 * content hash <dir>/<key>.sum, recorded at write and checked before every use: an
 * entry that was truncated, emptied or overwritten is rebuilt (with a note), never
 * handed to the loader. The key is a
 * 128-bit hash (32 hex digits) of everything that decides the artefact:
 *   backend name, toolchain id, target sm, the defines in order, the source text, and
 *   the text of every header reached through #include "..." (resolved against the
 *   including file's directory, then req->include_dir; recursively, each file once).
 * System <...> headers are covered by the toolchain id. A quoted include that cannot be
 * found is hashed by its name only; the compiler reports it.
 *
 * Files appear in the cache only through rename() of a complete temporary file in the
 * same directory, so concurrent kbench processes sharing a cache never see a partial
 * artefact; two processes missing on the same key both build and the last rename wins
 * (both files are complete and equivalent). The log is renamed into place before the
 * artefact, so an artefact that exists always has its log. A failed build leaves
 * nothing behind.
 */
#ifndef KB_CACHE_H
#define KB_CACHE_H

#include "backend/backend.h"

#define KB_CACHE_KEY_LEN 32   /* hex digits of the 128-bit key */

typedef struct {
    char key[KB_CACHE_KEY_LEN + 1]; /* 32 hex digits, NUL-terminated */
    char *path;   /* artefact path (malloc'ed); NULL when the build failed */
    char *log;    /* compile log text (malloc'ed, never NULL after kb_cache_get) */
    int hit;      /* 1: found in the cache, the build was not run */
    char note[512]; /* "" or one line worth telling the operator (a damaged entry rebuilt) */
} kb_cache_entry;

/* The default cache directory: $KBENCH_CACHE_DIR, else $XDG_CACHE_HOME/kbench, else
 * $HOME/.cache/kbench (empty variables count as unset). out is cleared and receives
 * the path; the directory is created (mkdir -p). KB_ERR_SETUP when none of the
 * variables is set, KB_ERR_IO (message in out) when it cannot be created. */
kb_status kb_cache_dir(kb_sb *out);

/* Compute the key of req for backend be (bx is passed to be->toolchain_id, which may be
 * NULL: then the toolchain id is ""). key receives 32 hex digits. KB_ERR_IO when the
 * source itself cannot be read (message in err, which may be NULL). */
kb_status kb_cache_key(const kb_backend *be, kb_backend_ctx *bx, const kb_compile_req *req,
                       char key[KB_CACHE_KEY_LEN + 1], kb_sb *err);

/* Find or build the artefact of req. cache_dir NULL means kb_cache_dir(). On a hit:
 * out->path, out->log (the saved log), hit=1, KB_OK. On a miss: be->build into a
 * temporary file, renamed into place on success (hit=0, KB_OK). On a failed build:
 * the build's status, out->path NULL, out->log the build log, nothing cached. Other
 * failures (unreadable source, unwritable cache) return KB_ERR_IO/KB_ERR_SETUP with a
 * message in out->log. out is always initialised; release it with kb_cache_entry_free. */
kb_status kb_cache_get(const kb_backend *be, kb_backend_ctx *bx, const kb_compile_req *req,
                       const char *cache_dir, kb_cache_entry *out);

/* Free path and log; safe on a zeroed or already freed entry. */
void kb_cache_entry_free(kb_cache_entry *e);

#endif /* KB_CACHE_H */
