/* Must NOT compile: the passes may not use post-training quantization (see
 * the top CMakeLists.txt). ctest builds this against dy_passes's include
 * path and passes when the compiler cannot find dy_quant.h. */
#include "dy_quant.h"
