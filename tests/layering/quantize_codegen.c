/* Must NOT compile: post-training quantization may not use codegen (see
 * the top CMakeLists.txt). ctest builds this against dy_quantize's include
 * path and passes when the compiler cannot find dy_codegen.h. */
#include "dy_codegen.h"
