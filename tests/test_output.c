/* test_output.c - the one output rule (core/output.h) on every kind of target: new paths,
 * regular files (replaced atomically, mode kept), symlinks (their targets written, the
 * links kept), devices and FIFOs (written through, never replaced), directories, sockets,
 * read-only files, missing and non-directory parents, and an output onto an input. */
#include "check.h"
#include "core/output.h"

#include <dirent.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char dir[128];

static const char *at(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static kb_status text_fn(void *user, FILE *f, kb_sb *err)
{
    (void)err;
    return fputs(user, f) >= 0 ? KB_OK : KB_ERR_IO;
}

static kb_status write_text(const char *path, const char *text, kb_sb *err)
{
    kb_sb_clear(err);
    return kb_out_write_with(path, text_fn, (void *)text, err);
}

/* No temporary file left anywhere under dir. */
static int no_temp_left(const char *d)
{
    DIR *dp = opendir(d);
    struct dirent *e;
    int clean = 1;
    while (dp && (e = readdir(dp)))
        if (strstr(e->d_name, ".tmp."))
            clean = 0;
    if (dp)
        closedir(dp);
    return clean;
}

static void test_regular_and_new(void)
{
    kb_sb err;
    kb_sb_init(&err);
    CHECK(write_text(at("deep/er/new.txt"), "one\n", &err) == KB_ERR_SETUP && strstr(err.s, "does not exist"));
    CHECK(access(at("deep"), F_OK) != 0);                                 /* no directory made */
    CHECK(write_text(at("new.txt"), "one\n", &err) == KB_OK);
    CHECK(slurp(at("new.txt")) && !strcmp(slurp(at("new.txt")), "one\n"));
    put(at("old.txt"), "old\n");
    chmod(at("old.txt"), 0640);
    struct stat before, after;
    stat(at("old.txt"), &before);
    CHECK(write_text(at("old.txt"), "new\n", &err) == KB_OK);
    stat(at("old.txt"), &after);
    CHECK(!strcmp(slurp(at("old.txt")), "new\n"));
    CHECK((after.st_mode & 07777) == 0640);               /* its mode kept */
    CHECK(after.st_ino != before.st_ino);                 /* replaced by rename, not rewritten */
    CHECK(no_temp_left(dir));
    /* a writer that fails leaves the old file and no temporary one */
    kb_out o;
    CHECK(kb_out_open(&o, at("old.txt"), &err) == KB_OK);
    fputs("half", o.f);
    kb_out_abort(&o);
    CHECK(!strcmp(slurp(at("old.txt")), "new\n"));
    CHECK(no_temp_left(dir));
    kb_sb_free(&err);
}

static void test_symlinks(void)
{
    kb_sb err;
    kb_sb_init(&err);
    put(at("real.txt"), "real\n");
    CHECK(symlink("real.txt", at("link.txt")) == 0);
    CHECK(write_text(at("link.txt"), "through\n", &err) == KB_OK);
    struct stat sb;
    CHECK(lstat(at("link.txt"), &sb) == 0 && S_ISLNK(sb.st_mode));      /* the link kept */
    CHECK(!strcmp(slurp(at("real.txt")), "through\n"));                  /* its target written */
    CHECK(symlink("made.txt", at("dangling")) == 0);
    CHECK(write_text(at("dangling"), "made\n", &err) == KB_OK);
    CHECK(lstat(at("dangling"), &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(slurp(at("made.txt")) && !strcmp(slurp(at("made.txt")), "made\n"));
    mkdir(at("adir"), 0755);
    CHECK(symlink("adir", at("dirlink")) == 0);
    CHECK(write_text(at("dirlink"), "x", &err) == KB_ERR_INPUT && strstr(err.s, "is a directory"));
    CHECK(symlink("loop2", at("loop1")) == 0 && symlink("loop1", at("loop2")) == 0);
    CHECK(write_text(at("loop1"), "x", &err) == KB_ERR_INPUT && strstr(err.s, "symbolic links"));
    kb_sb_free(&err);
}

static void test_devices_and_fifos(void)
{
    kb_sb err;
    kb_sb_init(&err);
    struct stat sb;
    CHECK(write_text("/dev/null", "gone\n", &err) == KB_OK);
    CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    CHECK(write_text("/dev/full", "no room\n", &err) == KB_ERR_SETUP && strstr(err.s, "/dev/full"));
    CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));           /* still the device */
    CHECK(mkfifo(at("fifo"), 0644) == 0);
    CHECK(write_text(at("fifo"), "x", &err) == KB_ERR_SETUP && strstr(err.s, "nobody reads"));   /* no hang */
    int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
    CHECK(write_text(at("fifo"), "piped\n", &err) == KB_OK);
    char buf[16] = "";
    CHECK(read(rd, buf, sizeof buf - 1) == 6 && !strcmp(buf, "piped\n"));
    close(rd);
    CHECK(stat(at("fifo"), &sb) == 0 && S_ISFIFO(sb.st_mode));
    kb_status st;
    CHECK(kb_out_open_append(at("fifo"), &st, &err) < 0 && st == KB_ERR_SETUP);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", at("sock"));
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(write_text(at("sock"), "x", &err) == KB_ERR_INPUT && strstr(err.s, "socket"));
    close(fd);
    kb_sb_free(&err);
}

static void test_refusals(void)
{
    kb_sb err;
    kb_sb_init(&err);
    mkdir(at("d"), 0755);
    CHECK(write_text(at("d"), "x", &err) == KB_ERR_INPUT && strstr(err.s, "is a directory"));
    put(at("ro.txt"), "keep\n");
    chmod(at("ro.txt"), 0444);
    CHECK(write_text(at("ro.txt"), "x", &err) == KB_ERR_SETUP && strstr(err.s, "read-only"));   /* even as root */
    CHECK(!strcmp(slurp(at("ro.txt")), "keep\n"));
    kb_status st;
    CHECK(kb_out_open_append(at("ro.txt"), &st, &err) < 0 && st == KB_ERR_SETUP);
    put(at("plain"), "p");
    CHECK(write_text(at("plain/x.txt"), "x", &err) == KB_ERR_INPUT && strstr(err.s, "is not a directory"));
    CHECK(write_text("", "x", &err) == KB_ERR_INPUT);
    mkdir(at("rodir"), 0555);
    CHECK(write_text(at("rodir/x.txt"), "x", &err) == KB_ERR_SETUP && strstr(err.s, "read-only"));
    CHECK(kb_out_check(at("rodir/x.txt"), &err) == KB_ERR_SETUP);
    CHECK(kb_out_check(at("not/yet/there.txt"), &err) == KB_ERR_SETUP);
    CHECK(kb_out_dir_check(at("not/yet"), &err) == KB_OK);
    CHECK(access(at("not"), F_OK) != 0);                                /* the checks made nothing */
    /* output directories */
    kb_sb_clear(&err);
    CHECK(kb_out_dir_check(at("plain"), &err) == KB_ERR_INPUT && strstr(err.s, "not a directory"));
    CHECK(kb_out_dir_check("/dev/null", &err) == KB_ERR_INPUT);
    CHECK(kb_out_dir_check(at("plain/sub"), &err) == KB_ERR_SETUP && strstr(err.s, "cannot be made"));   /* a file in the way */
    CHECK(kb_out_dir_check(at("rodir"), &err) == KB_ERR_SETUP);
    CHECK(kb_out_dir_make(at("made/here"), &err) == KB_OK && access(at("made/here"), W_OK) == 0);
    CHECK(kb_out_exit(KB_ERR_INPUT) == 2 && kb_out_exit(KB_ERR_SETUP) == 3 && kb_out_exit(KB_OK) == 0);
    kb_sb_free(&err);
}

static void test_not_input(void)
{
    kb_sb err;
    kb_sb_init(&err);
    put(at("in.yaml"), "suite: x\n");
    CHECK(symlink("in.yaml", at("in-link")) == 0);
    CHECK(kb_out_not_input(at("in-link"), at("in.yaml"), "the suite", &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, "the suite") && strstr(err.s, "in.yaml"));
    CHECK(kb_out_not_input(at("other.yaml"), at("in.yaml"), "the suite", &err) == KB_OK);
    CHECK(kb_out_not_input("/dev/null", "/dev/null", "the suite", &err) == KB_OK);
    CHECK(kb_out_not_input(NULL, at("in.yaml"), "the suite", &err) == KB_OK);
    kb_sb_free(&err);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_output.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    RUN(test_regular_and_new);
    RUN(test_symlinks);
    RUN(test_devices_and_fifos);
    RUN(test_refusals);
    RUN(test_not_input);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    TEST_MAIN_END();
}
