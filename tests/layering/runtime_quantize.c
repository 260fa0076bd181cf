/* Must NOT compile: the runtime may not use post-training quantization,
 * which runs on it (compiler/quantize/; see the top CMakeLists.txt). ctest
 * builds this against dy_runtime's include path and passes when the
 * compiler cannot find dy_quant.h. */
#include "dy_quant.h"
