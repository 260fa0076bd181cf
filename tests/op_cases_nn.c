/* op_cases_nn.c - the nn family's op table cases (being written). */
#include "op_table.h"

const dy_op_case_list dy_op_cases_nn = {0};
