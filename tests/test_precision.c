/* test_precision.c - the recipe and distribution registry (core/precision.h): names,
 * which dtypes each recipe defines and why not, block shapes, and the scale tensor
 * layouts cuBLASLt reads, against the documented examples and as bijections. */
#include "check.h"
#include "core/precision.h"

#include <stdlib.h>
#include <string.h>

static void test_recipe_table(void)
{
    for (int r = 0; r < KB_RECIPE_COUNT; r++) {
        const kb_recipe_info *ri = kb_recipe_get((kb_recipe)r);
        kb_recipe back;
        CHECK(ri && ri->name && *ri->source && *ri->about && ri->dtypes);
        CHECK(kb_recipe_parse(ri->name, &back) == 0 && back == (kb_recipe)r);
    }
    kb_recipe x;
    CHECK(kb_recipe_parse("mxfp8", &x) == -1 && kb_recipe_get(KB_RECIPE_COUNT) == NULL);
    CHECK(!strcmp(kb_recipe_name(KB_RECIPE_BLOCK128X128), "block128x128") && !strcmp(kb_recipe_name(99), "?"));
    CHECK(!strcmp(kb_scale_fmt_name(kb_recipe_get(KB_RECIPE_MX)->sfmt), "ue8m0"));
    CHECK(!strcmp(kb_scale_fmt_name(kb_recipe_get(KB_RECIPE_NV)->sfmt), "ue4m3"));
    CHECK(kb_recipe_get(KB_RECIPE_NV)->tensor_scale && !kb_recipe_get(KB_RECIPE_MX)->tensor_scale);
    CHECK(strstr(kb_recipe_get(KB_RECIPE_MX)->source, "OCP Microscaling") != NULL);
    CHECK(strstr(kb_recipe_get(KB_RECIPE_BLOCK128X128)->source, "DeepSeek-V3") != NULL);
}

static int refused(kb_recipe r, kb_dtype dt, const char *needle)
{
    char why[256] = "";
    int ok = kb_recipe_accepts(r, dt, why, sizeof why);
    if (ok || !strstr(why, needle))
        fprintf(stderr, "accepts=%d why='%s' lacks '%s'\n", ok, why, needle);
    return !ok && strstr(why, needle) != NULL;
}

static void test_recipe_dtypes(void)
{
    char why[256];
    /* fp8 under every recipe but nv; fp6 and fp4 only block-scaled; the rest only per tensor */
    for (int r = 0; r < KB_RECIPE_COUNT; r++) {
        CHECK(kb_recipe_accepts((kb_recipe)r, KB_DT_FP8E4M3, why, sizeof why) == (r != KB_RECIPE_NV));
        CHECK(kb_recipe_accepts((kb_recipe)r, KB_DT_FP6E3M2, why, sizeof why) == (r == KB_RECIPE_MX));
        CHECK(kb_recipe_accepts((kb_recipe)r, KB_DT_FP4E2M1, why, sizeof why) ==
              (r == KB_RECIPE_MX || r == KB_RECIPE_NV));
        CHECK(kb_recipe_accepts((kb_recipe)r, KB_DT_BF16, why, sizeof why) == (r == KB_RECIPE_TENSOR));
        CHECK(kb_recipe_accepts((kb_recipe)r, KB_DT_INT8, why, sizeof why) == (r == KB_RECIPE_TENSOR));
    }
    CHECK(refused(KB_RECIPE_TENSOR, KB_DT_FP4E2M1, "block scales only"));
    CHECK(refused(KB_RECIPE_CHANNEL, KB_DT_FP6E2M3, "MX element format"));
    CHECK(refused(KB_RECIPE_NV, KB_DT_FP8E4M3, "NVFP4"));
    CHECK(refused(KB_RECIPE_BLOCK1X128, KB_DT_BF16, "bf16 is not scaled"));
    CHECK(refused(KB_RECIPE_MX, KB_DT_FP16, "fp6 or fp4"));
}

static void test_blocks(void)
{
    int64_t br, bk;
    kb_recipe_block(KB_RECIPE_TENSOR, 0, 48, 200, &br, &bk);
    CHECK(br == 48 && bk == 200);
    kb_recipe_block(KB_RECIPE_CHANNEL, 1, 96, 200, &br, &bk);
    CHECK(br == 1 && bk == 200);
    kb_recipe_block(KB_RECIPE_BLOCK128X128, 0, 48, 200, &br, &bk);
    CHECK(br == 1 && bk == 128);
    kb_recipe_block(KB_RECIPE_BLOCK128X128, 1, 96, 200, &br, &bk);   /* B: 128 columns x 128 K */
    CHECK(br == 128 && bk == 128);
    kb_recipe_block(KB_RECIPE_MX, 1, 96, 200, &br, &bk);
    CHECK(br == 1 && bk == 32);
    kb_recipe_block(KB_RECIPE_NV, 0, 96, 200, &br, &bk);
    CHECK(br == 1 && bk == 16);
}

static void test_dists(void)
{
    for (int d = 0; d < KB_DIST_COUNT; d++) {
        kb_dist back;
        CHECK(kb_dist_parse(kb_dist_name((kb_dist)d), &back) == 0 && back == (kb_dist)d && *kb_dist_about((kb_dist)d));
    }
    kb_dist x;
    CHECK(kb_dist_parse("gauss", &x) == -1 && !strcmp(kb_dist_name(KB_DIST_COUNT), "?"));
    CHECK(strstr(kb_dist_about(KB_DIST_OUTLIERS), "100x") != NULL);
}

/* Every in-range (r, kb) maps to a distinct offset below the count. */
static int bijective(kb_lt_scale_layout l, int64_t rows, int64_t kblocks, int64_t rblocks)
{
    int64_t n = kb_lt_scale_count(l, rows, kblocks, rblocks), nr = l == KB_LT_SCALE_BLK128 ? rblocks : rows;
    unsigned char *seen = calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int64_t r = 0; ok && r < nr; r++)
        for (int64_t kb = 0; ok && kb < (l == KB_LT_SCALE_OUTER ? 1 : kblocks); kb++) {
            int64_t o = kb_lt_scale_offset(l, rows, kblocks, r, kb);
            ok = o >= 0 && o < n && !seen[o];
            if (ok) seen[o] = 1;
        }
    free(seen);
    return ok;
}

static void test_lt_layouts(void)
{
    CHECK(kb_recipe_lt_layout(KB_RECIPE_TENSOR, 0) == KB_LT_SCALE_SCALAR);
    CHECK(kb_recipe_lt_layout(KB_RECIPE_CHANNEL, 1) == KB_LT_SCALE_OUTER);
    CHECK(kb_recipe_lt_layout(KB_RECIPE_BLOCK128X128, 0) == KB_LT_SCALE_VEC128);
    CHECK(kb_recipe_lt_layout(KB_RECIPE_BLOCK128X128, 1) == KB_LT_SCALE_BLK128);
    CHECK(kb_recipe_lt_layout(KB_RECIPE_NV, 1) == KB_LT_SCALE_TILED);
    /* the one name table: cuBLASLt's spelling of each mode, "?" out of range */
    CHECK(strcmp(kb_lt_scale_layout_name(KB_LT_SCALE_BLK128), "BLK128x128_32F") == 0 &&
          strcmp(kb_lt_scale_layout_name(KB_LT_SCALE_OUTER), "OUTER_VEC_32F") == 0 &&
          strcmp(kb_lt_scale_layout_name(KB_LT_SCALE_COUNT), "?") == 0);
    /* nvmath-python's documented example: NVFP4, 128 x 128, scale of row 5 K-group 2 at 82,
     * of row 5 K-group 5 at 593 */
    CHECK(kb_lt_scale_offset(KB_LT_SCALE_TILED, 128, 8, 5, 2) == 82);
    CHECK(kb_lt_scale_offset(KB_LT_SCALE_TILED, 128, 8, 5, 5) == 593);
    CHECK(kb_lt_scale_count(KB_LT_SCALE_TILED, 128, 8, 1) == 1024);
    /* padding: 300 rows -> 384, 5 K blocks -> 8; row 200, block 6 is in tile (1, 1) */
    CHECK(kb_lt_scale_count(KB_LT_SCALE_TILED, 300, 5, 1) == 384 * 8);
    CHECK(kb_lt_scale_offset(KB_LT_SCALE_TILED, 300, 5, 200, 6) == 3 * 512 + 8 * 16 + 2 * 4 + 2);
    CHECK(kb_lt_scale_offset(KB_LT_SCALE_VEC128, 6, 3, 5, 2) == 2 * 8 + 5);
    CHECK(kb_lt_scale_count(KB_LT_SCALE_VEC128, 6, 3, 1) == 24);
    CHECK(kb_lt_scale_offset(KB_LT_SCALE_BLK128, 300, 5, 2, 3) == 2 * 8 + 3);
    CHECK(kb_lt_scale_count(KB_LT_SCALE_BLK128, 300, 5, 3) == 24 && kb_lt_scale_count(KB_LT_SCALE_OUTER, 7, 1, 1) == 7);
    CHECK(bijective(KB_LT_SCALE_TILED, 300, 5, 1) && bijective(KB_LT_SCALE_TILED, 1, 1, 1));
    CHECK(bijective(KB_LT_SCALE_VEC128, 37, 9, 1) && bijective(KB_LT_SCALE_BLK128, 300, 5, 3));
    CHECK(bijective(KB_LT_SCALE_OUTER, 37, 1, 1));
}

int main(void)
{
    RUN(test_recipe_table);
    RUN(test_recipe_dtypes);
    RUN(test_blocks);
    RUN(test_dists);
    RUN(test_lt_layouts);
    TEST_MAIN_END();
}
