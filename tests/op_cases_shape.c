/* op_cases_shape.c - the shape family's op table cases (being written). */
#include "op_table.h"

const dy_op_case_list dy_op_cases_shape = {0};
