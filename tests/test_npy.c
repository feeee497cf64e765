/* test_npy.c - .npy v1.0 files: header bytes, alignment, data; loaded by numpy when
 * it is installed, otherwise parsed by a small independent Python reader when
 * python3 exists. */
#include "check.h"
#include "core/fsutil.h"
#include "core/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[128];

/* Read path and split it into header text and data; returns the file length. */
static size_t load(const char *path, char **file, char **hdr, size_t *hdr_len, const unsigned char **data)
{
    size_t len = 0;
    *file = NULL;
    CHECK(kb_fs_read_all(path, file, &len) == KB_OK);
    if (!*file || len < 10) return 0;
    const unsigned char *u = (const unsigned char *)*file;
    CHECK(memcmp(u, "\x93NUMPY\x01\x00", 8) == 0);
    *hdr_len = (size_t)u[8] | (size_t)u[9] << 8;
    *hdr = *file + 10;
    *data = u + 10 + *hdr_len;
    CHECK((10 + *hdr_len) % 64 == 0);                 /* data aligned to 64 */
    CHECK((*hdr)[*hdr_len - 1] == '\n');
    CHECK(memchr(*hdr, '\n', *hdr_len) == *hdr + *hdr_len - 1); /* one newline, at the end */
    return len;
}

static void test_f32_2d(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/sub/a.npy", dir);    /* parent created */
    float v[6] = { 1.0f, -2.5f, 3.25f, 0.0f, 1e-30f, 65504.0f };
    int64_t shape[2] = { 2, 3 };
    CHECK(kb_npy_write_f32(path, v, shape, 2) == KB_OK);
    char *file, *hdr;
    size_t hl = 0;
    const unsigned char *data;
    size_t len = load(path, &file, &hdr, &hl, &data);
    if (!file) return;
    const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK(strncmp(hdr, want, strlen(want)) == 0);
    for (size_t i = strlen(want); i + 1 < hl; i++)
        CHECK(hdr[i] == ' ');
    CHECK(len == 10 + hl + sizeof v);
    CHECK(memcmp(data, v, sizeof v) == 0);
    free(file);
}

static void test_raw_1d_0d_empty(void)
{
    char path[256];
    char *file, *hdr;
    size_t hl = 0;
    const unsigned char *data;

    snprintf(path, sizeof path, "%s/b.npy", dir);
    int8_t q[5] = { -128, -1, 0, 1, 127 };
    int64_t n5 = 5;
    CHECK(kb_npy_write_raw(path, "|i1", q, 1, &n5, 1) == KB_OK);
    size_t len = load(path, &file, &hdr, &hl, &data);
    if (!file) return;
    CHECK(strstr(hdr, "'descr': '|i1'") && strstr(hdr, "'shape': (5,)"));
    CHECK(len == 10 + hl + 5 && memcmp(data, q, 5) == 0);
    free(file);

    snprintf(path, sizeof path, "%s/c.npy", dir);
    uint16_t h = 0x3c00;
    CHECK(kb_npy_write_raw(path, "<f2", &h, 2, NULL, 0) == KB_OK);   /* scalar */
    len = load(path, &file, &hdr, &hl, &data);
    if (!file) return;
    CHECK(strstr(hdr, "'shape': ()") != NULL);
    CHECK(len == 10 + hl + 2 && data[0] == 0x00 && data[1] == 0x3c);
    free(file);

    snprintf(path, sizeof path, "%s/d.npy", dir);
    int64_t empty[3] = { 4, 0, 7 };
    CHECK(kb_npy_write_f32(path, NULL, empty, 3) == KB_OK);
    len = load(path, &file, &hdr, &hl, &data);
    if (!file) return;
    CHECK(strstr(hdr, "'shape': (4, 0, 7)") && len == 10 + hl);
    free(file);
}

static void test_errors(void)
{
    char path[256];
    float x = 1;
    int64_t neg = -1, one = 1;
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    CHECK(kb_npy_write_f32(path, &x, &neg, 1) == KB_ERR_INPUT);
    CHECK(kb_npy_write_raw(path, "", &x, 4, &one, 1) == KB_ERR_INPUT);
    CHECK(access(path, F_OK) != 0);                  /* nothing written */
    snprintf(path, sizeof path, "%s/sub/a.npy/inside.npy", dir);  /* a file in the way */
    CHECK(kb_npy_write_f32(path, &x, &one, 1) == KB_ERR_IO);
}

/* Run python3 -c code [arg]; returns its exit status, -1 if it could not run.
 * quiet: stderr to /dev/null (for the probes, whose failure is an answer). */
static int run_python(const char *code, const char *arg, int quiet)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = quiet ? open("/dev/null", O_WRONLY) : -1;
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp("python3", "python3", "-c", code, arg, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static const char *numpy_check =
    "import sys, numpy as np\n"
    "a = np.load(sys.argv[1] + '/sub/a.npy')\n"
    "assert a.dtype == np.float32 and a.shape == (2, 3), (a.dtype, a.shape)\n"
    "assert a[1, 2] == 65504.0 and a[0, 1] == -2.5\n"
    "b = np.load(sys.argv[1] + '/b.npy')\n"
    "assert b.dtype == np.int8 and list(b) == [-128, -1, 0, 1, 127]\n"
    "c = np.load(sys.argv[1] + '/c.npy')\n"
    "assert c.dtype == np.float16 and c.shape == () and c == 1.0\n"
    "d = np.load(sys.argv[1] + '/d.npy')\n"
    "assert d.shape == (4, 0, 7)\n";

/* The same checks without numpy: the header read as the format specification says
 * (a Python literal), the data unpacked with struct. */
static const char *plain_check =
    "import sys, ast, struct\n"
    "def load(p):\n"
    "    b = open(p, 'rb').read()\n"
    "    assert b[:8] == b'\\x93NUMPY\\x01\\x00'\n"
    "    n = struct.unpack('<H', b[8:10])[0]\n"
    "    assert (10 + n) % 64 == 0\n"
    "    h = ast.literal_eval(b[10:10 + n].decode('latin1'))\n"
    "    return h, b[10 + n:]\n"
    "h, d = load(sys.argv[1] + '/sub/a.npy')\n"
    "assert h == {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}, h\n"
    "assert struct.unpack('<6f', d)[5] == 65504.0\n"
    "h, d = load(sys.argv[1] + '/b.npy')\n"
    "assert h['shape'] == (5,) and struct.unpack('5b', d) == (-128, -1, 0, 1, 127)\n"
    "h, d = load(sys.argv[1] + '/c.npy')\n"
    "assert h['shape'] == () and h['descr'] == '<f2' and len(d) == 2\n";

/* kb_npy_read_f32 reads back what kb_npy_write_f32 wrote, and refuses other files. */
static void test_read_back(void)
{
    char path[512], bad[512];
    snprintf(path, sizeof path, "%s/rb.npy", dir);
    snprintf(bad, sizeof bad, "%s/rb_i4.npy", dir);
    const float v[6] = { 1.5f, -2.f, 0.f, 3.25f, 1e30f, -0.f };
    const int64_t shape[2] = { 2, 3 };
    CHECK(kb_npy_write_f32(path, v, shape, 2) == KB_OK);
    float *got = NULL;
    int64_t n = 0;
    CHECK(kb_npy_read_f32(path, &got, &n) == KB_OK && n == 6);
    CHECK(got && memcmp(got, v, sizeof v) == 0);
    free(got);
    const int32_t iv[2] = { 1, 2 };
    const int64_t one = 2;
    CHECK(kb_npy_write_raw(bad, "<i4", iv, 4, &one, 1) == KB_OK);
    CHECK(kb_npy_read_f32(bad, &got, &n) == KB_ERR_INPUT && got == NULL);
    CHECK(kb_npy_read_f32("/nonexistent/x.npy", &got, &n) == KB_ERR_IO);
    unlink(path);
    unlink(bad);
}

static void test_python_reads_it(void)
{
    if (run_python("import sys", NULL, 1) != 0) {
        printf("note: python3 not found; skipping the Python read-back\n");
        return;
    }
    if (run_python("import numpy", NULL, 1) == 0) {
        CHECK(run_python(numpy_check, dir, 0) == 0);
    } else {
        printf("note: numpy is not installed; checked with a plain-Python reader instead\n");
        CHECK(run_python(plain_check, dir, 0) == 0);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_npy.XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_f32_2d);
    RUN(test_raw_1d_0d_empty);
    RUN(test_errors);
    RUN(test_read_back);
    RUN(test_python_reads_it);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
    TEST_MAIN_END();
}
