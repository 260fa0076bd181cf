/* dy_nn.h - eager entry points (and layers) of the nn op family.
 * Included by dy_runtime.h; see ir/ops_nn.def for the ops. */
#ifndef DY_NN_H
#define DY_NN_H

#include "dy_runtime.h"

#endif
