/* test_compile_emit.c - `kbench compile --emit`'s files (cli/compile_emit.h): names made
 * safe from case ids, one file per module with the hash where cases share it or names
 * collide, each written once, and no file ever overwritten. */
#include "check.h"
#include "cli/compile_emit.h"
#include "spawn.h"

#include <sys/stat.h>

static char dir[256];

static void test_safe_names(void)
{
    char out[200];
    CHECK(!strcmp(kb_emit_safe_name("gemm/mma(BM=128,BN=64)/bf16/4096x4096x4096/pad0/eager", out, sizeof out),
                  "gemm_mma_BM_128_BN_64_bf16_4096x4096x4096_pad0_eager"));
    CHECK(!strcmp(kb_emit_safe_name("../../etc/passwd", out, sizeof out), "etc_passwd"));   /* no path, no leading dot */
    CHECK(!strcmp(kb_emit_safe_name("a.b-c_d e", out, sizeof out), "a.b-c_d_e"));
    CHECK(!strcmp(kb_emit_safe_name("///", out, sizeof out), "case"));
    CHECK(!strcmp(kb_emit_safe_name("", out, sizeof out), "case"));
    /* a long id is cut and ends with its own hash: two long ids that share the first 160 bytes stay apart */
    char a[400], b[400], na[200], nb[200];
    memset(a, 'x', 300);
    a[300] = 0;
    snprintf(b, sizeof b, "%s", a);
    b[299] = 'y';
    kb_emit_safe_name(a, na, sizeof na);
    kb_emit_safe_name(b, nb, sizeof nb);
    CHECK(strlen(na) <= 160 && strlen(nb) <= 160 && strcmp(na, nb) != 0 && na[strlen(na) - 9] == '_');
    char tiny[8];
    CHECK(strlen(kb_emit_safe_name("abcdefghijkl", tiny, sizeof tiny)) == 7);
}

/* n files in the directory d */
static int files_in(const char *d)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls -1 %s | wc -l", d);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

static void test_one_file_per_module(void)
{
    char out[300], art[300], why[256];
    snprintf(out, sizeof out, "%s/emit", dir);
    snprintf(art, sizeof art, "%s/artefact.ptx", dir);
    FILE *f = fopen(art, "w");
    CHECK(f && fputs(".target sm_90a\n", f) >= 0 && fclose(f) == 0);
    kb_emit *e = NULL;
    CHECK(kb_emit_open(out, "ptx", &e) == -1 && e);
    if (!e)
        return;
    CHECK(kb_emit_plan(e, "gelu/vec(VEC=8)/bf16/31/pad0/eager", "gelu.cu\nA") == 0);
    CHECK(kb_emit_plan(e, "gelu/vec(VEC=8)/bf16/31/pad0/graph", "gelu.cu\nA") == 0);   /* shares A */
    CHECK(kb_emit_plan(e, "gemm/mma/fp16/1x1x1/pad0/eager", "gemm.cu\nB") == 0);
    CHECK(kb_emit_plan(e, "a/b", "x.cu\nC") == 0);   /* "a/b" and "a_b" make the same name: both hashed */
    CHECK(kb_emit_plan(e, "a_b", "x.cu\nD") == 0);
    CHECK(kb_emit_check(e) == -1);
    const char *fa = kb_emit_write(e, "gelu.cu\nA", art, why, sizeof why);
    CHECK_MSG(fa && !strncmp(fa, "gelu_vec_VEC_8_bf16_31_pad0_eager.", 34) && strlen(fa) == 34 + 8 + 4, "%s",
              fa ? fa : why);
    CHECK(kb_emit_write(e, "gelu.cu\nA", art, why, sizeof why) == fa);   /* once per module */
    const char *fb = kb_emit_write(e, "gemm.cu\nB", art, why, sizeof why);
    CHECK(fb && !strcmp(fb, "gemm_mma_fp16_1x1x1_pad0_eager.ptx"));      /* one case: no hash */
    const char *fc = kb_emit_write(e, "x.cu\nC", art, why, sizeof why), *fd = kb_emit_write(e, "x.cu\nD", art, why,
                                                                                               sizeof why);
    CHECK(fc && fd && strcmp(fc, fd) != 0 && !strncmp(fc, "a_b.", 4) && !strncmp(fd, "a_b.", 4));
    CHECK(!kb_emit_write(e, "never announced", art, why, sizeof why) && strstr(why, "no case announced"));
    CHECK(kb_emit_count(e) == 4 && files_in(out) == 4);
    kb_emit_free(e);
    /* again into the same directory: refused before anything is written */
    CHECK(kb_emit_open(out, "ptx", &e) == -1);
    CHECK(kb_emit_plan(e, "gemm/mma/fp16/1x1x1/pad0/eager", "gemm.cu\nB") == 0);
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    CHECK(kb_emit_check(e) == 2);
    dup2(saved, 2);
    close(saved);
    close(null);
    kb_emit_free(e);
    /* a file that appears between the check and the write is not overwritten either (O_EXCL) */
    CHECK(kb_emit_open(out, "cubin", &e) == -1);
    CHECK(kb_emit_plan(e, "late", "late.cu\nE") == 0 && kb_emit_check(e) == -1);
    char late[400];
    snprintf(late, sizeof late, "%s/late.cubin", out);
    f = fopen(late, "w");
    CHECK(f && fputs("theirs", f) >= 0 && fclose(f) == 0);
    CHECK(!kb_emit_write(e, "late.cu\nE", art, why, sizeof why) && strstr(why, "cannot write"));
    char *kept = slurp(late);
    CHECK(kept && !strcmp(kept, "theirs"));
    free(kept);
    kb_emit_free(e);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kbench-emit-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(test_safe_names);
    RUN(test_one_file_per_module);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
    TEST_MAIN_END();
}
