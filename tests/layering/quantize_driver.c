/* Must NOT compile: post-training quantization may not use the driver (see
 * the top CMakeLists.txt). ctest builds this against dy_quantize's include
 * path and passes when the compiler cannot find dy_driver.h. */
#include "dy_driver.h"
