/* kb_nvrtc.c - NVRTC compile to CUBIN and ptxas log parsing (see nvrtc.h). */
#include "backend/cuda/kb_nvrtc.h"

#include "backend/cuda/kb_nvrtc_lib.h" /* the NVRTC chosen at run time */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KB_CUDA_INCLUDE_DIR
#define KB_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

/* ---- the NVRTC check (same shape as KB_CU_CHECK): the report goes into the log,
 * because a compile's log is what the case records ---- */

static kb_status nvrtc_status(nvrtcResult r)
{
    switch (r) {
    case NVRTC_SUCCESS: return KB_OK;
    case NVRTC_ERROR_COMPILATION:
    case NVRTC_ERROR_INVALID_OPTION: return KB_ERR_COMPILE;
    case NVRTC_ERROR_OUT_OF_MEMORY: return KB_ERR_OOM;
    case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: return KB_ERR_SETUP; /* libnvrtc-builtins missing */
    default: return KB_ERR_INTERNAL;
    }
}

static kb_status nvrtc_check(const kb_nvrtc_lib *nv, nvrtcResult r, kb_sb *log, const char *file, int line,
                             const char *func, const char *call)
{
    if (r == NVRTC_SUCCESS)
        return KB_OK;
    /* nvrtcGetErrorString returns the enum's name, e.g. "NVRTC_ERROR_COMPILATION". */
    kb_sb_printf(log, "%s:%d %s: %s -> %s\n", file, line, func, call, nv->GetErrorString(r));
    return nvrtc_status(r);
}

#define NV_CHECK(call) nvrtc_check(nv, (call), log, __FILE__, __LINE__, __func__, #call)

/* Append the program log (ptxas report or diagnostics) to *log, newline-terminated. */
static void append_program_log(const kb_nvrtc_lib *nv, nvrtcProgram prog, kb_sb *log)
{
    size_t n = 0;
    if (nv->GetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n <= 1)
        return; /* the size counts the NUL: 1 means empty */
    char *text = malloc(n);
    if (!text) {   /* say so: a missing ptxas report would read as "no spills" */
        kb_sb_printf(log, "kbench: out of memory: the compiler log of %zu bytes was not kept\n", n);
        return;
    }
    if (nv->GetProgramLog(prog, text) == NVRTC_SUCCESS) {
        size_t len = strlen(text);
        kb_sb_append(log, text, len);
        if (len && text[len - 1] != '\n')
            kb_sb_append(log, "\n", 1);
    }
    free(text);
}

/* Option strings are built into one array the function owns. */
typedef struct {
    char **v;
    int n, cap;
} opt_list;

static int opt_add(opt_list *o, const char *prefix, const char *value, size_t value_len)
{
    if (o->n == o->cap) {
        int cap = o->cap ? o->cap * 2 : 16;
        char **v = realloc(o->v, cap * sizeof *v);
        if (!v)
            return -1;
        o->v = v;
        o->cap = cap;
    }
    size_t pl = strlen(prefix);
    char *s = malloc(pl + value_len + 1);
    if (!s)
        return -1;
    memcpy(s, prefix, pl);
    memcpy(s + pl, value, value_len);
    s[pl + value_len] = 0;
    o->v[o->n++] = s;
    return 0;
}

static void opt_free(opt_list *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->v[i]);
    free(o->v);
}

/* The options of a compile for the architecture a (see kb_nvrtc_compile). 0, or -1 when
 * out of memory. */
static int build_options(opt_list *o, const kb_arch *a, const char *const *include_dirs, int n_inc,
                         const char *const *defines, int n_def)
{
    char def_arch[32], def_specific[32];
    kb_arch_defines(a->code, def_arch, def_specific);
    /* A real architecture (sm_XX, not compute_XX) makes NVRTC run ptxas, so a CUBIN
     * exists and the log carries ptxas's resource report; the PTX stays available. */
    int bad = opt_add(o, "--gpu-architecture=", a->nvrtc_arch, strlen(a->nvrtc_arch));
    bad |= opt_add(o, "-std=c++17", "", 0);
    for (int i = 0; i < n_inc; i++)
        bad |= opt_add(o, "-I", include_dirs[i], strlen(include_dirs[i]));
    /* The toolkit's include dir last, so project headers win. CMake may hand
     * over a ';'-separated list. */
    for (const char *p = KB_CUDA_INCLUDE_DIR; *p;) {
        size_t len = strcspn(p, ";");
        if (len)
            bad |= opt_add(o, "-I", p, len);
        p += len + (p[len] == ';');
    }
    /* the gating defines every module gets, on both backends (core/arch.h) */
    bad |= opt_add(o, "-D", def_arch, strlen(def_arch));
    bad |= opt_add(o, "-D", def_specific, strlen(def_specific));
    for (int i = 0; i < n_def; i++)
        bad |= opt_add(o, "-D", defines[i], strlen(defines[i]));
    bad |= opt_add(o, "--ptxas-options=-v", "", 0);
    return bad ? -1 : 0;
}

/* Copy the compiled program's CUBIN (ptx 0) or PTX (ptx 1, NUL-terminated, its size
 * without the NUL) into a malloc'ed *image. */
static kb_status take_image(const kb_nvrtc_lib *nv, nvrtcProgram prog, int ptx, const char *arch, void **image,
                            size_t *bytes, kb_sb *log)
{
    kb_status st;
    size_t n = 0;
    char *buf = NULL;
    if ((st = ptx ? NV_CHECK(nv->GetPTXSize(prog, &n)) : NV_CHECK(nv->GetCUBINSize(prog, &n))) != KB_OK)
        return st;
    if (n == 0) {
        kb_sb_printf(log, "%s:%d %s: NVRTC produced an empty %s for %s\n", __FILE__, __LINE__, __func__,
                     ptx ? "PTX" : "CUBIN", arch);
        return KB_ERR_INTERNAL;
    }
    if (!(buf = malloc(n + 1)))
        return KB_ERR_OOM;
    if ((st = ptx ? NV_CHECK(nv->GetPTX(prog, buf)) : NV_CHECK(nv->GetCUBIN(prog, buf))) != KB_OK) {
        free(buf);
        return st;
    }
    buf[n] = 0;
    *image = buf;
    *bytes = ptx ? strlen(buf) : n;
    return KB_OK;
}

static kb_status compile_to(const char *src, const char *name, const char *const *include_dirs, int n_inc,
                            const char *const *defines, int n_def, int sm, int ptx, void **image,
                            size_t *image_bytes, kb_sb *log)
{
    kb_status st = KB_ERR_INTERNAL;
    nvrtcProgram prog = NULL;
    opt_list o = { 0 };

    *image = NULL;
    *image_bytes = 0;
    const kb_nvrtc_lib *nv = kb_nvrtc_lib_current();
    if (!nv) {
        kb_sb_printf(log, "%s:%d %s: no NVRTC could be loaded (set KBENCH_LIBNVRTC to a libnvrtc.so.13 or .so.12)\n",
                     __FILE__, __LINE__, __func__);
        return KB_ERR_SETUP;
    }
    const kb_arch *a = kb_arch_get(sm);
    if (!a) {
        kb_sb_printf(log, "%s:%d %s: no architecture of code %d in kbench's table (core/arch.h)\n", __FILE__,
                     __LINE__, __func__, sm);
        return KB_ERR_INPUT;
    }
    if (build_options(&o, a, include_dirs, n_inc, defines, n_def) != 0) {
        st = KB_ERR_OOM;
        kb_sb_printf(log, "%s:%d %s: out of memory building NVRTC options\n", __FILE__, __LINE__, __func__);
        goto fail;
    }
    if ((st = NV_CHECK(nv->CreateProgram(&prog, src, name, 0, NULL, NULL))) != KB_OK) {
        prog = NULL;
        goto fail;
    }
    /* On failure the one-line report comes first, then NVRTC's diagnostics; on
     * success the log is ptxas's resource report. Either way the log is kept. */
    st = NV_CHECK(nv->CompileProgram(prog, o.n, (const char *const *)o.v));
    append_program_log(nv, prog, log);
    if (st == KB_OK)
        st = take_image(nv, prog, ptx, a->name, image, image_bytes, log);
fail:
    if (prog)
        nv->DestroyProgram(&prog);
    opt_free(&o);
    return st;
}

kb_status kb_nvrtc_compile(const char *src, const char *name,
                           const char *const *include_dirs, int n_inc,
                           const char *const *defines, int n_def, int sm,
                           void **cubin, size_t *cubin_bytes, kb_sb *log)
{
    return compile_to(src, name, include_dirs, n_inc, defines, n_def, sm, 0, cubin, cubin_bytes, log);
}

kb_status kb_nvrtc_compile_ptx(const char *src, const char *name,
                               const char *const *include_dirs, int n_inc,
                               const char *const *defines, int n_def, int sm,
                               char **ptx, size_t *ptx_bytes, kb_sb *log)
{
    void *image = NULL;
    kb_status st = compile_to(src, name, include_dirs, n_inc, defines, n_def, sm, 1, &image, ptx_bytes, log);
    *ptx = image;
    return st;
}

int kb_nvrtc_version(int *major, int *minor)
{
    const kb_nvrtc_lib *nv = kb_nvrtc_lib_current();
    if (!nv)
        return -1;
    *major = nv->major;
    *minor = nv->minor;
    return 0;
}

/* ---- ptxas log parsing ---- */

static const char *line_end(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

/* The integer written just before `unit` on the line [p, end), e.g. 368 in
 * "..., 368 bytes smem"; -1 when the unit or its number is absent. */
static int num_before(const char *p, const char *end, const char *unit)
{
    size_t ul = strlen(unit);
    for (const char *q = p; q + ul <= end; q++) {
        if (memcmp(q, unit, ul) != 0)
            continue;
        const char *d = q;
        while (d > p && d[-1] == ' ')
            d--;
        const char *digits_end = d;
        while (d > p && d[-1] >= '0' && d[-1] <= '9')
            d--;
        if (d == digits_end)
            return -1;
        return atoi(d);
    }
    return -1;
}

/* First occurrence of needle in [from, to); NULL when none. */
static const char *find_in(const char *from, const char *to, const char *needle)
{
    const char *q = strstr(from, needle);
    return q && q < to ? q : NULL;
}

/* Find `head` immediately followed by the exact entry name and then `tail`
 * (tail "" means: followed by the end of the line). */
static const char *find_named(const char *log, const char *head, const char *entry, const char *tail)
{
    size_t hl = strlen(head), el = strlen(entry), tl = strlen(tail);
    for (const char *q = strstr(log, head); q; q = strstr(q + 1, head)) {
        const char *nm = q + hl;
        if (strncmp(nm, entry, el) != 0)
            continue;
        const char *after = nm + el;
        if (tl ? strncmp(after, tail, tl) == 0 : (*after == '\n' || *after == '\r' || *after == 0))
            return q;
    }
    return NULL;
}

int kb_ptxas_parse(const char *log, const char *entry, kb_resources *out)
{
    static const char compiling[] = "Compiling entry function '";
    out->registers = out->spill_store_bytes = out->spill_load_bytes = -1;
    out->stack_bytes = out->static_shmem_bytes = out->max_threads = -1;
    if (!log || !entry || !*entry)
        return -1;

    /* The entry's section runs to the next "Compiling entry function". */
    const char *sec = find_named(log, compiling, entry, "'");
    if (!sec)
        return -1;
    const char *sec_end = strstr(sec + 1, compiling);
    if (!sec_end)
        sec_end = sec + strlen(sec);

    const char *used = find_in(sec, sec_end, "Used ");
    if (!used)
        return -1;
    const char *used_end = line_end(used);
    int regs = num_before(used, used_end, " registers");
    if (regs < 0)
        return -1;
    out->registers = regs;
    int smem = num_before(used, used_end, " bytes smem");
    out->static_shmem_bytes = smem < 0 ? 0 : smem; /* ptxas omits "smem" when there is none */

    /* Stack and spills are on the line after "Function properties for <entry>".
     * Searching by name (not "the next stack line") matters: non-inlined device
     * functions get their own "Function properties" blocks inside a section. */
    const char *props = find_named(log, "Function properties for ", entry, "");
    const char *stack = NULL;
    if (props) {
        const char *next = line_end(props);
        if (*next)
            stack = next + 1;
    } else {
        stack = find_in(sec, sec_end, "bytes stack frame"); /* older layouts */
        while (stack && stack > sec && stack[-1] != '\n')
            stack--;
    }
    if (stack) {
        const char *e = line_end(stack);
        out->stack_bytes = num_before(stack, e, " bytes stack frame");
        out->spill_store_bytes = num_before(stack, e, " bytes spill stores");
        out->spill_load_bytes = num_before(stack, e, " bytes spill loads");
    }
    return 0;
}
