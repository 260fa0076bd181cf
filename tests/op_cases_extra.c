/* op_cases_extra.c - op table cases of ops_extra.def (being written). */
#include "op_table.h"

const dy_op_case_list dy_op_cases_extra = {0};
