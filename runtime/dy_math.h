/* dy_math.h - eager entry points (and layers) of the math op family.
 * Included by dy_runtime.h; see ir/ops_math.def for the ops. */
#ifndef DY_MATH_H
#define DY_MATH_H

#include "dy_runtime.h"

#endif
