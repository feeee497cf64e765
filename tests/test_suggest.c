/* test_suggest.c - "did you mean" (core/suggest.h): the distance (edits, transpositions,
 * case), the closest name within the limit, prefixes, nothing for a far word. */
#include "check.h"
#include "core/suggest.h"

#include <string.h>

static void test_distance(void)
{
    CHECK(kb_suggest_distance("run", "run") == 0);
    CHECK(kb_suggest_distance("rnu", "run") == 1);          /* a transposition is one edit */
    CHECK(kb_suggest_distance("Filter", "filter") == 0);    /* case aside */
    CHECK(kb_suggest_distance("fitler", "filter") == 1);
    CHECK(kb_suggest_distance("kitten", "sitting") == 3);
    CHECK(kb_suggest_distance("", "abc") == 3);
}

static void test_suggest(void)
{
    static const char *const commands[] = { "run", "list", "devices", "report", "query", "compare", NULL };
    CHECK(!strcmp(kb_suggest("rnu", commands, -1), "run"));
    CHECK(!strcmp(kb_suggest("repotr", commands, -1), "report"));
    CHECK(!strcmp(kb_suggest("device", commands, -1), "devices"));
    CHECK(kb_suggest("xyzzy", commands, -1) == NULL);
    CHECK(kb_suggest("zz", commands, -1) == NULL);           /* short words: one edit at most */
    static const char *const opts[] = { "--filter", "--out", "--resume", "-j" };
    CHECK(!strcmp(kb_suggest("--fitler", opts, 4), "--filter"));
    CHECK(!strcmp(kb_suggest("--reusme", opts, 4), "--resume"));
    static const char *const gpus[] = { "h100-sxm", "h100-pcie", "a100-sxm", NULL };
    CHECK(!strcmp(kb_suggest("h100", gpus, -1), "h100-sxm"));   /* a prefix, the first of equals */
    CHECK(!strcmp(kb_suggest("A100_SXM", gpus, -1), "a100-sxm"));
    static const char *const models[] = { "gpt-style", "llama-70b-like", "llama-7b-like", NULL };
    CHECK(!strcmp(kb_suggest("llama7b", models, -1), "llama-7b-like"));
    CHECK(!strcmp(kb_suggest("llama70b", models, -1), "llama-70b-like"));
    CHECK(kb_suggest(NULL, models, -1) == NULL && kb_suggest("x", NULL, 0) == NULL);
}

int main(void)
{
    RUN(test_distance);
    RUN(test_suggest);
    TEST_MAIN_END();
}
