/* op_cases_math.c - the math family's op table cases (being written). */
#include "op_table.h"

const dy_op_case_list dy_op_cases_math = {0};
