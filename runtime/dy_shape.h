/* dy_shape.h - eager entry points (and layers) of the shape op family.
 * Included by dy_runtime.h; see ir/ops_shape.def for the ops. */
#ifndef DY_SHAPE_H
#define DY_SHAPE_H

#include "dy_runtime.h"

#endif
