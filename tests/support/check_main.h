/* check_main.h - the one runner every Check suite's main() calls. */
#ifndef NVFP4_TESTS_CHECK_MAIN_H
#define NVFP4_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

/* Runs the suite (CK_NORMAL output, which ends with the "N%: Checks: ..."
 * line CI reads) and turns failures into the exit status. */
static inline int nvfp4_check_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* The same without forking a process per test: for suites that keep state
 * across their checks or walk large folders (reference/). */
static inline int nvfp4_check_run_nofork(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* NVFP4_TESTS_CHECK_MAIN_H */
