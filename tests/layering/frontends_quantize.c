/* Must NOT compile: the frontends may not use post-training quantization
 * (see the top CMakeLists.txt). ctest builds this against dy_frontends's
 * include path and passes when the compiler cannot find dy_quant.h. */
#include "dy_quant.h"
