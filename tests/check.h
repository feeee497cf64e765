/* check.h - the test harness every tests/test_<module>.c uses.
 * CHECK(expr) prints file:line:expr on failure and counts it; RUN(test) runs one
 * static void test_*(void); TEST_MAIN_END prints "N passed, N failed" and returns
 * non-zero if any check failed. */
#ifndef KB_CHECK_H
#define KB_CHECK_H
#include <stdio.h>

static int check_failed_ = 0, check_tests_ = 0, check_tests_failed_ = 0;

#define CHECK(expr) do { if (!(expr)) { \
    fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #expr); \
    check_failed_++; } } while (0)
#define CHECK_MSG(expr, ...) do { if (!(expr)) { \
    fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #expr); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); check_failed_++; } } while (0)
#define RUN(test) do { int before_ = check_failed_; check_tests_++; test(); \
    if (check_failed_ != before_) { check_tests_failed_++; fprintf(stderr, "FAIL %s\n", #test); } \
    else printf("ok   %s\n", #test); } while (0)
#define TEST_MAIN_END() do { \
    printf("%d passed, %d failed\n", check_tests_ - check_tests_failed_, check_tests_failed_); \
    return check_tests_failed_ ? 1 : 0; } while (0)
#endif
