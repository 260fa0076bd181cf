/* cunit_main.c - shared main() for every test executable.
 *
 * Each test file defines dy_test_register(), which adds its suites. The
 * runner uses CUnit's basic interface (verbose) and exits non-zero when any
 * assertion failed, so ctest sees failures.
 */
#include <CUnit/Basic.h>
#include <stdio.h>

void dy_test_register(void);

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS)
    return 2;
  dy_test_register();
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  if (run == 0) {
    fprintf(stderr, "no test ran\n");
    return 1;
  }
  return failed ? 1 : 0;
}
