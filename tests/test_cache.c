/* test_cache.c - the compile cache with a fake backend: hits, every kind of
 * invalidation, failed builds, temporary files, concurrent processes. */
#include "engine/cache.h"
#include "check.h"
#include "core/fsutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a fake backend: build writes a small file and counts calls ---- */
static int fake_builds;           /* build() calls in this process */
static int fake_fail;             /* 1: the next builds fail like a compile error */
static const char *fake_toolchain = "fakecc 1.0";

static const char *fake_toolchain_id(kb_backend_ctx *x) { return fake_toolchain; }

static kb_status fake_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log)
{
    fake_builds++;
    FILE *f = fopen(out_path, "wb");
    if (!f)
        return KB_ERR_IO;
    fprintf(f, "artefact of %s sm_%d ndef=%d\n", req->source_path, req->sm, req->n_defines);
    fclose(f);
    if (fake_fail) {
        kb_sb_printf(log, "k.cu(3): error: expected a ';'\n");
        return KB_ERR_COMPILE; /* leaves a partial file behind: the cache must remove it */
    }
    kb_sb_printf(log, "fakecc: built %s\n", req->source_path);
    return KB_OK;
}

static const kb_backend fake_be = {
    .name = "fake",
    .toolchain_id = fake_toolchain_id,
    .artifact_ext = ".art",
    .build = fake_build,
};

/* ---- a scratch tree: src/k.cu -> "kb_dev.h" (include dir) -> "detail/x.h" ->
 * "y.h" (both next to the including file), plus a system include ---- */
static char root[256];

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECK(kb_fs_mkdir_parent(p) == KB_OK);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static char src_path[512], inc_dir[512], cache_dir[512];

static void make_tree(void)
{
    snprintf(root, sizeof root, "/tmp/kb_test_cache.XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    put("src/k.cu", "#include <stdint.h>\n  #  include \"kb_dev.h\"\n__global__ void k() {}\n");
    put("inc/kb_dev.h", "#pragma once\n#include \"detail/x.h\"\n#include \"not_there.h\"\n");
    put("inc/detail/x.h", "#include \"y.h\"\n#include \"x.h\" /* a cycle must terminate */\n");
    put("inc/detail/y.h", "#define Y 1\n");
    put("inc/unused.h", "#define UNUSED 1\n");
    snprintf(src_path, sizeof src_path, "%s/src/k.cu", root);
    snprintf(inc_dir, sizeof inc_dir, "%s/inc", root);
    snprintf(cache_dir, sizeof cache_dir, "%s/cache/nested", root); /* created by get */
}

static const char *defs_a[] = { "BLOCK=128", "VEC=4" };
static const char *defs_b[] = { "BLOCK=256", "VEC=4" };
static const char *defs_c[] = { "VEC=4", "BLOCK=128" };

static kb_compile_req req_default(void)
{
    kb_compile_req r = { src_path, inc_dir, defs_a, 2, 80 };
    return r;
}

static void key_of(const kb_compile_req *r, char key[KB_CACHE_KEY_LEN + 1])
{
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_cache_key(&fake_be, NULL, r, key, &err) == KB_OK);
    CHECK(strlen(key) == KB_CACHE_KEY_LEN);
    kb_sb_free(&err);
}

/* Count directory entries whose name contains needle. */
static int count_files(const char *dir, const char *needle)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strstr(e->d_name, needle))
            n++;
    closedir(d);
    return n;
}

static void test_miss_then_hit(void)
{
    kb_compile_req r = req_default();
    kb_cache_entry e1, e2;
    fake_builds = 0;
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e1) == KB_OK);
    CHECK(e1.hit == 0 && fake_builds == 1);
    CHECK(e1.path && strstr(e1.path, e1.key) && strstr(e1.path, ".art"));
    CHECK(e1.log && strstr(e1.log, "fakecc: built"));
    char *text = NULL;
    CHECK(kb_fs_read_all(e1.path, &text, NULL) == KB_OK);
    CHECK(text && strstr(text, "sm_80 ndef=2"));
    free(text);

    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e2) == KB_OK);
    CHECK(e2.hit == 1 && fake_builds == 1);           /* no second build */
    CHECK(strcmp(e1.key, e2.key) == 0 && strcmp(e1.path, e2.path) == 0);
    CHECK(e2.log && strcmp(e1.log, e2.log) == 0);      /* the saved log comes back */
    CHECK(count_files(cache_dir, ".tmp.") == 0);
    CHECK(count_files(cache_dir, ".art") == 1 && count_files(cache_dir, ".log") == 1);
    CHECK(count_files(cache_dir, ".sum") == 1);
    kb_cache_entry_free(&e1);
    kb_cache_entry_free(&e2);
    kb_cache_entry_free(&e2); /* twice is harmless */
}

/* A damaged entry - truncated, emptied, overwritten with text, or written by a kbench
 * that recorded no checksum - is rebuilt with a note, never handed out. */
static void test_damaged_entry_is_rebuilt(void)
{
    kb_compile_req r = req_default();
    r.defines = defs_b;
    kb_cache_entry e;
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK && e.note[0] == 0);
    char path[1024], sum[1024];
    snprintf(path, sizeof path, "%s", e.path);
    snprintf(sum, sizeof sum, "%s/%s.sum", cache_dir, e.key);
    kb_cache_entry_free(&e);
    char *good = NULL;
    size_t good_len = 0;
    CHECK(kb_fs_read_all(path, &good, &good_len) == KB_OK && good_len > 2);
    const char *damage[] = { "half", "empty", "text", "nosum" };
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (!f) break;
        if (i == 0) fwrite(good, 1, good_len / 2, f);
        if (i == 2) fputs("#!/bin/sh\necho swapped\n", f);
        if (i == 3) fwrite(good, 1, good_len, f);
        fclose(f);
        if (i == 3) unlink(sum);
        fake_builds = 0;
        CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
        CHECK_MSG(e.hit == 0 && fake_builds == 1 && strstr(e.note, "is damaged") && strstr(e.note, "rebuilt"),
                  "%s: hit %d builds %d note '%s'", damage[i], e.hit, fake_builds, e.note);
        char *now = NULL;
        size_t now_len = 0;
        CHECK(kb_fs_read_all(path, &now, &now_len) == KB_OK && now_len == good_len && !memcmp(now, good, good_len));
        free(now);
        kb_cache_entry_free(&e);
        /* and the rebuilt entry is a plain hit again */
        CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK && e.hit == 1 && e.note[0] == 0);
        kb_cache_entry_free(&e);
    }
    free(good);
}

static void test_key_changes(void)
{
    char k0[33], k[33];
    kb_compile_req r = req_default();
    key_of(&r, k0);
    key_of(&r, k);
    CHECK(strcmp(k0, k) == 0);                        /* deterministic */

    r.defines = defs_b; key_of(&r, k); CHECK(strcmp(k0, k) != 0);
    r.defines = defs_c; key_of(&r, k); CHECK(strcmp(k0, k) != 0);  /* order matters */
    r.n_defines = 1; r.defines = defs_a; key_of(&r, k); CHECK(strcmp(k0, k) != 0);
    r = req_default(); r.sm = 90; key_of(&r, k); CHECK(strcmp(k0, k) != 0);
    char k90[KB_CACHE_KEY_LEN + 1];   /* sm_90 and sm_90a are different artefacts (core/arch.h codes) */
    memcpy(k90, k, sizeof k90);
    r.sm = 90 + KB_ARCH_SPECIFIC; key_of(&r, k); CHECK(strcmp(k90, k) != 0 && strcmp(k0, k) != 0);
    r = req_default();
    fake_toolchain = "fakecc 1.1"; key_of(&r, k); CHECK(strcmp(k0, k) != 0);
    fake_toolchain = "fakecc 1.0"; key_of(&r, k); CHECK(strcmp(k0, k) == 0);

    /* A file nobody includes does not matter. */
    put("inc/unused.h", "#define UNUSED 2\n");
    key_of(&r, k); CHECK(strcmp(k0, k) == 0);
}

static void test_invalidation_on_files(void)
{
    kb_compile_req r = req_default();
    kb_cache_entry e;
    char k0[33];
    key_of(&r, k0);
    fake_builds = 0;

    /* a header two levels below the include dir's kb_dev.h */
    put("inc/detail/y.h", "#define Y 2\n");
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
    CHECK(e.hit == 0 && fake_builds == 1 && strcmp(e.key, k0) != 0);
    kb_cache_entry_free(&e);
    put("inc/detail/y.h", "#define Y 1\n");           /* back: the old entry hits again */
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
    CHECK(e.hit == 1 && fake_builds == 1 && strcmp(e.key, k0) == 0);
    kb_cache_entry_free(&e);

    /* the first-level header */
    put("inc/kb_dev.h", "#pragma once\n#include \"detail/x.h\"\n#include \"not_there.h\"\n// edit\n");
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
    CHECK(e.hit == 0 && fake_builds == 2);
    kb_cache_entry_free(&e);

    /* the source */
    put("src/k.cu", "#include <stdint.h>\n#include \"kb_dev.h\"\n__global__ void k() { }\n");
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
    CHECK(e.hit == 0 && fake_builds == 3);
    kb_cache_entry_free(&e);

    /* a header next to the source shadows the include dir's one of the same name */
    char k1[33], k2[33];
    key_of(&r, k1);
    put("src/kb_dev.h", "#define SHADOW 1\n");
    key_of(&r, k2);
    CHECK(strcmp(k1, k2) != 0);
    put("inc/detail/y.h", "#define Y 3\n");           /* no longer reached */
    key_of(&r, k1);
    CHECK(strcmp(k1, k2) == 0);
    CHECK(count_files(cache_dir, ".tmp.") == 0);
}

static void test_failed_build_caches_nothing(void)
{
    kb_compile_req r = req_default();
    r.sm = 89; /* a key not built yet */
    kb_cache_entry e;
    int arts = count_files(cache_dir, ".art"), logs = count_files(cache_dir, ".log");
    fake_fail = 1;
    fake_builds = 0;
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_ERR_COMPILE);
    CHECK(e.path == NULL && e.hit == 0);
    CHECK(e.log && strstr(e.log, "expected a ';'"));
    kb_cache_entry_free(&e);
    CHECK(count_files(cache_dir, ".art") == arts && count_files(cache_dir, ".log") == logs);
    CHECK(count_files(cache_dir, ".tmp.") == 0);
    /* the failure is not remembered: fixed, the next get builds */
    fake_fail = 0;
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
    CHECK(e.hit == 0 && fake_builds == 2);
    kb_cache_entry_free(&e);
}

static void test_missing_source(void)
{
    kb_compile_req r = req_default();
    r.source_path = "/nonexistent/dir/k.cu";
    kb_cache_entry e;
    fake_builds = 0;
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_ERR_IO);
    CHECK(e.path == NULL && e.log && strstr(e.log, "/nonexistent/dir/k.cu"));
    CHECK(fake_builds == 0);
    kb_cache_entry_free(&e);
}

/* Several processes missing on the same key at once: all succeed, and every reader
 * sees a complete artefact (each child checks the file's text). */
static void test_concurrent_processes(void)
{
    kb_compile_req r = req_default();
    r.sm = 100; /* fresh key */
    enum { N = 6 };
    pid_t kids[N];
    for (int i = 0; i < N; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            kb_cache_entry e;
            int bad = kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) != KB_OK;
            char *text = NULL;
            if (!bad && (kb_fs_read_all(e.path, &text, NULL) != KB_OK || !strstr(text, "ndef=2\n")))
                bad = 1;
            free(text);
            kb_cache_entry_free(&e);
            _exit(bad);
        }
        CHECK(kids[i] > 0);
    }
    for (int i = 0; i < N; i++) {
        int status = -1;
        CHECK(waitpid(kids[i], &status, 0) == kids[i]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    kb_cache_entry e;
    fake_builds = 0;
    CHECK(kb_cache_get(&fake_be, NULL, &r, cache_dir, &e) == KB_OK);
    CHECK(e.hit == 1 && fake_builds == 0);
    kb_cache_entry_free(&e);
    CHECK(count_files(cache_dir, ".tmp.") == 0);
}

static void test_cache_dir_env(void)
{
    char *saved_kb = getenv("KBENCH_CACHE_DIR") ? strdup(getenv("KBENCH_CACHE_DIR")) : NULL;
    char *saved_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char want[512];
    kb_sb d;
    kb_sb_init(&d);

    snprintf(want, sizeof want, "%s/envdir/a/b", root);
    setenv("KBENCH_CACHE_DIR", want, 1);
    CHECK(kb_cache_dir(&d) == KB_OK && strcmp(d.s, want) == 0);
    CHECK(access(want, W_OK) == 0);                  /* created */

    unsetenv("KBENCH_CACHE_DIR");
    snprintf(want, sizeof want, "%s/xdg", root);
    setenv("XDG_CACHE_HOME", want, 1);
    strcat(want, "/kbench");
    CHECK(kb_cache_dir(&d) == KB_OK && strcmp(d.s, want) == 0);
    CHECK(access(want, W_OK) == 0);

    setenv("XDG_CACHE_HOME", "", 1);                 /* empty counts as unset */
    snprintf(want, sizeof want, "%s/home", root);
    setenv("HOME", want, 1);
    strcat(want, "/.cache/kbench");
    CHECK(kb_cache_dir(&d) == KB_OK && strcmp(d.s, want) == 0);
    CHECK(access(want, W_OK) == 0);

    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK(kb_cache_dir(&d) == KB_ERR_SETUP);

    /* a regular file in the way */
    put("blocker", "x");
    snprintf(want, sizeof want, "%s/blocker/sub", root);
    setenv("KBENCH_CACHE_DIR", want, 1);
    CHECK(kb_cache_dir(&d) == KB_ERR_IO && strstr(d.s, "blocker"));

    if (saved_kb) setenv("KBENCH_CACHE_DIR", saved_kb, 1); else unsetenv("KBENCH_CACHE_DIR");
    if (saved_xdg) setenv("XDG_CACHE_HOME", saved_xdg, 1);
    if (saved_home) setenv("HOME", saved_home, 1);
    free(saved_kb); free(saved_xdg); free(saved_home);
    kb_sb_free(&d);
}

/* cache_dir NULL uses the environment's directory. */
static void test_default_dir(void)
{
    char *saved = getenv("KBENCH_CACHE_DIR") ? strdup(getenv("KBENCH_CACHE_DIR")) : NULL;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/default-cache", root);
    setenv("KBENCH_CACHE_DIR", dir, 1);
    kb_compile_req r = req_default();
    kb_cache_entry e;
    CHECK(kb_cache_get(&fake_be, NULL, &r, NULL, &e) == KB_OK);
    CHECK(e.path && strncmp(e.path, dir, strlen(dir)) == 0);
    CHECK(count_files(dir, ".art") == 1);
    kb_cache_entry_free(&e);
    if (saved) setenv("KBENCH_CACHE_DIR", saved, 1); else unsetenv("KBENCH_CACHE_DIR");
    free(saved);
}

int main(void)
{
    make_tree();
    RUN(test_miss_then_hit);
    RUN(test_damaged_entry_is_rebuilt);
    RUN(test_key_changes);
    RUN(test_invalidation_on_files);
    RUN(test_failed_build_caches_nothing);
    RUN(test_missing_source);
    RUN(test_concurrent_processes);
    RUN(test_cache_dir_env);
    RUN(test_default_dir);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", root);
    TEST_MAIN_END();
}
