/* Must NOT compile: post-training quantization may not use the passes (see
 * the top CMakeLists.txt). ctest builds this against dy_quantize's include
 * path and passes when the compiler cannot find dy_passes.h. */
#include "dy_passes.h"
