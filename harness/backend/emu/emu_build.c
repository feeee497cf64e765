/* emu_build.c - the host C++ compiler for the emulator (see emu_build.h). */
#include "backend/emu/emu_build.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The flags of every build (the -D of the arch and the defines follow). They are part of
 * kb_emu_cxx_id, so a change here misses the compile cache instead of reusing modules
 * built without it. */
static const char *const fixed_flags[] = {
    "-std=c++17", "-O2", "-fPIC", "-shared",
    "-fno-strict-aliasing",      /* kernels reinterpret memory the way CUDA code does */
    "-fvisibility=hidden",       /* only entries (__global__) and the ABI are exported */
    "-fstack-clash-protection",  /* a frame bigger than a page is probed on the way down, so
                                  * it hits the guard page below a fiber's stack instead of
                                  * landing in whatever is mapped beyond it */
    "-DKB_EMU",
    /* Kernel code is held to the harness's warnings (CMakeLists.txt): a warning fails the
     * module, so its cases are compile errors with the compiler's log. Not warned: an
     * argument a variant does not read (one entry signature serves every variant of a
     * family), and CUDA's own `#pragma unroll`, which the host compiler does not know. */
    "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-Wno-unknown-pragmas",
};
#define N_FIXED_FLAGS ((int)(sizeof fixed_flags / sizeof fixed_flags[0]))

/* The flags of a checked build (--emu-check): every load and store of kernel code calls
 * the __tsan_* hooks kb_device_emu.h defines (forwarded to the runtime); no thread
 * sanitizer runtime is linked. -g so a report can name the source line. */
static const char *const check_flags[] = {
    "-g", "-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0", "-DKB_EMU_CHECKED=1",
};
#define N_CHECK_FLAGS ((int)(sizeof check_flags / sizeof check_flags[0]))

/* 1 when the program named by word can be run: a path, or found on PATH. */
static int program_exists(const char *word)
{
    if (strchr(word, '/'))
        return access(word, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char buf[4096];
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 0 && snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, word) < (int)sizeof buf &&
            access(buf, X_OK) == 0)
            return 1;
        p += n + (end ? 1 : 0);
    }
    return 0;
}

/* ---- the builds in flight, paused while the emulator times a kernel ---- */

#define MAX_BUILDS 256   /* compile workers are at most 256 (engine/modules.c) */

struct kb_emu_builds {
    pthread_mutex_t lock;
    int paused;
    pid_t groups[MAX_BUILDS];   /* process group ids (= the compiler's pid) */
    int n;
};

static kb_emu_builds *builds_new(void)
{
    kb_emu_builds *b = calloc(1, sizeof *b);
    if (b)
        pthread_mutex_init(&b->lock, NULL);
    return b;
}

static void builds_free(kb_emu_builds *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

void kb_emu_cxx_free(kb_emu_cxx *c)
{
    free(c->words);
    builds_free(c->builds);
    memset(c, 0, sizeof *c);
}

/* A compiler started (its group is its pid): stopped at once when builds are paused. */
static void builds_add(kb_emu_builds *b, pid_t pid)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    if (b->n < MAX_BUILDS)
        b->groups[b->n++] = pid;
    if (b->paused)
        kill(-pid, SIGSTOP);
    pthread_mutex_unlock(&b->lock);
}

/* Before the compiler is reaped, while its pid cannot be reused. */
static void builds_remove(kb_emu_builds *b, pid_t pid)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < b->n; i++)
        if (b->groups[i] == pid) {
            b->groups[i] = b->groups[--b->n];
            break;
        }
    pthread_mutex_unlock(&b->lock);
}

void kb_emu_cxx_pause(kb_emu_cxx *c, int pause)
{
    kb_emu_builds *b = c->builds;
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    if (b->paused != pause) {
        b->paused = pause;
        for (int i = 0; i < b->n; i++)
            kill(-b->groups[i], pause ? SIGSTOP : SIGCONT);
    }
    pthread_mutex_unlock(&b->lock);
}

/* Run argv in a process group of its own (registered in builds, may be NULL), appending
 * its stdout+stderr to log (may be NULL). Returns the exit status (128 + signal when
 * killed), or -1 with err set when it could not be started. */
static int run_capture(kb_emu_builds *builds, char *const argv[], kb_sb *log, char *err, size_t errlen)
{
    int fds[2], status = 0;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    if (pipe2(fds, O_CLOEXEC) != 0) {   /* CLOEXEC: other children must not hold the pipe open */
        snprintf(err, errlen, "emu: pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);   /* its own group: paused and resumed as one */
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc == 0)
        builds_add(builds, pid);
    if (rc != 0) {
        close(fds[0]);
        snprintf(err, errlen, "emu: cannot run C++ compiler '%s': %s", argv[0], strerror(rc));
        return -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (log)
            kb_sb_append(log, buf, (size_t)n);
    }
    close(fds[0]);
    builds_remove(builds, pid);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* "<first line of CXX --version> <fixed flags>" into c->id. 0, or the exit status of
 * --version (-1 when it could not be started) with err set. */
static int read_id(kb_emu_cxx *c, char *err, size_t errlen)
{
    char *argv[KB_EMU_CXX_MAX_WORDS + 1];
    kb_sb out, id;
    int i;
    for (i = 0; i < c->n; i++)
        argv[i] = c->argv[i];
    argv[i++] = "--version";
    argv[i] = NULL;
    kb_sb_init(&out);
    kb_sb_init(&id);
    int rc = run_capture(c->builds, argv, &out, err, errlen);
    if (rc == 0 && out.len > 0)
        kb_sb_printf(&id, "%.*s", (int)strcspn(out.s, "\n"), out.s);
    else
        kb_sb_printf(&id, "%s (version unknown)", c->argv[0]);
    for (i = 0; i < N_FIXED_FLAGS; i++)
        kb_sb_printf(&id, " %s", fixed_flags[i]);
    for (i = 0; c->checks && i < N_CHECK_FLAGS; i++)
        kb_sb_printf(&id, " %s", check_flags[i]);
    snprintf(c->id, sizeof c->id, "%s", id.s);
    kb_sb_free(&out);
    kb_sb_free(&id);
    return rc;
}

void kb_emu_cxx_set_checks(kb_emu_cxx *c, unsigned checks)
{
    if (c->checks == checks)
        return;
    c->checks = checks;
    char err[256];
    read_id(c, err, sizeof err);     /* the id names the flags */
}

const char *kb_emu_cxx_id(kb_emu_cxx *c)
{
    char err[256];
    if (!c->id[0])
        read_id(c, err, sizeof err);
    return c->id;
}

kb_status kb_emu_cxx_init(kb_emu_cxx *c, char *err, size_t errlen)
{
    const char *cxx = getenv("CXX");
    memset(c, 0, sizeof *c);
    if (!cxx || !*cxx)
        cxx = KB_CXX_COMPILER;
    c->words = strdup(cxx);
    c->builds = builds_new();
    if (!c->words || !c->builds) {
        kb_emu_cxx_free(c);
        snprintf(err, errlen, "emu: out of memory");
        return KB_ERR_OOM;
    }
    for (char *s = strtok(c->words, " \t"); s && c->n < KB_EMU_CXX_MAX_WORDS - 1; s = strtok(NULL, " \t"))
        c->argv[c->n++] = s;
    if (c->n == 0 || !program_exists(c->argv[0])) {
        snprintf(err, errlen, "emu: C++ compiler '%s' not found: install g++ or set CXX", cxx);
        kb_emu_cxx_free(c);
        return KB_ERR_SETUP;
    }
    /* a compiler that cannot even say its version cannot build kernels: one setup error
     * now, not "did not compile" for every case */
    char why[256] = "";
    int rc = read_id(c, why, sizeof why);
    if (rc != 0) {
        snprintf(err, errlen, "emu: %s%s: '%s --version' %s%s: the emulator needs a working C++ compiler "
                 "(install g++ or set CXX)", getenv("CXX") && *getenv("CXX") ? "CXX=" : "C++ compiler ", cxx,
                 cxx, rc < 0 ? "could not start: " : "failed", rc < 0 ? why : "");
        kb_emu_cxx_free(c);
        return KB_ERR_SETUP;
    }
    return KB_OK;
}

/* Run one compiler step; KB_OK, KB_ERR_SETUP (could not start) or KB_ERR_COMPILE. */
static kb_status run_step(const kb_emu_cxx *c, char **argv, const char *what, kb_sb *log, char *err, size_t errlen)
{
    int rc = run_capture(c->builds, argv, log, err, errlen);
    if (rc < 0)
        return KB_ERR_SETUP;
    if (rc == 0)
        return KB_OK;
    kb_sb_printf(log, "emu: %s exited with status %d %s\n", c->argv[0], rc, what);
    snprintf(err, errlen, "emu: %s failed %s (status %d), see the compile log", c->argv[0], what, rc);
    return KB_ERR_COMPILE;
}

/* A checked module: compile with the instrumentation, then link without it, so no
 * sanitizer runtime is pulled in (the hooks are the module's own, kb_device_emu.h). */
static kb_status link_checked(const kb_emu_cxx *c, char **argv, int n, const char *out_path, kb_sb *log, char *err,
                              size_t errlen)
{
    kb_sb obj;
    kb_sb_init(&obj);
    kb_sb_printf(&obj, "%s.o", out_path);
    argv[n - 1] = obj.s;                      /* -o <out>.o */
    argv[n] = "-c";
    argv[n + 1] = NULL;
    kb_status st = run_step(c, argv, "compiling a checked module", log, err, errlen);
    if (st == KB_OK) {
        char *link[KB_EMU_CXX_MAX_WORDS + 6];
        int k = 0;
        for (int i = 0; i < c->n; i++)
            link[k++] = c->argv[i];
        link[k++] = "-shared";
        link[k++] = obj.s;
        link[k++] = "-o";
        link[k++] = (char *)out_path;
        link[k] = NULL;
        st = run_step(c, link, "linking a checked module", log, err, errlen);
    }
    unlink(obj.s);
    kb_sb_free(&obj);
    return st;
}

kb_status kb_emu_cxx_build(kb_emu_cxx *c, const kb_compile_req *req, int default_sm, const char *out_path,
                           kb_sb *log, char *err, size_t errlen)
{
    int n_args = c->n + N_FIXED_FLAGS + N_CHECK_FLAGS + 12 + req->n_defines; /* 3 arch, -I, -x c++ src -o out, -c, NULL */
    char **argv = calloc((size_t)n_args, sizeof *argv);
    char **owned = calloc((size_t)req->n_defines + 4, sizeof *owned);  /* strings made here */
    int n = 0, n_owned = 0;
    kb_status st = KB_OK;
    if (!argv || !owned)
        goto oom;
    for (int i = 0; i < c->n; i++)
        argv[n++] = c->argv[i];
    for (int i = 0; i < N_FIXED_FLAGS; i++)
        argv[n++] = (char *)fixed_flags[i];
    for (int i = 0; c->checks && i < N_CHECK_FLAGS; i++)
        argv[n++] = (char *)check_flags[i];
    /* the gating defines every module gets, on both backends (core/arch.h); KB_EMU_ARCH
     * is the emulator's older name of KB_ARCH */
    char def_arch[32], def_specific[32];
    int code = req->sm ? req->sm : default_sm;
    if (kb_arch_defines(code, def_arch, def_specific) != 0) {
        snprintf(err, errlen, "emu: no architecture of code %d in kbench's table (core/arch.h)", code);
        st = KB_ERR_INPUT;
        goto done;
    }
    if (asprintf(&owned[n_owned], "-DKB_EMU_ARCH=%d", kb_arch_cc(code)) < 0)
        goto oom;
    argv[n++] = owned[n_owned++];
    if (asprintf(&owned[n_owned], "-D%s", def_arch) < 0)
        goto oom;
    argv[n++] = owned[n_owned++];
    if (asprintf(&owned[n_owned], "-D%s", def_specific) < 0)
        goto oom;
    argv[n++] = owned[n_owned++];
    for (int i = 0; i < req->n_defines; i++) {
        if (asprintf(&owned[n_owned], "-D%s", req->defines[i]) < 0)
            goto oom;
        argv[n++] = owned[n_owned++];
    }
    if (req->include_dir) {
        if (asprintf(&owned[n_owned], "-I%s", req->include_dir) < 0)
            goto oom;
        argv[n++] = owned[n_owned++];
    }
    argv[n++] = "-x";
    argv[n++] = "c++";
    argv[n++] = (char *)req->source_path;
    argv[n++] = "-o";
    argv[n++] = (char *)out_path;
    argv[n] = NULL;
    if (c->checks)
        st = link_checked(c, argv, n, out_path, log, err, errlen);
    else
        st = run_step(c, argv, "compiling", log, err, errlen);
    if (st == KB_ERR_COMPILE)
        kb_sb_printf(log, "emu: (the source was %s)\n", req->source_path);
    goto done;
oom:
    snprintf(err, errlen, "emu: out of memory");
    st = KB_ERR_OOM;
done:
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(argv);
    return st;
}
