/* Must NOT compile: dy_frontends may not use the passes (see the top
 * CMakeLists.txt). ctest builds this against dy_frontends's include path and
 * passes when the compiler cannot find dy_passes.h. */
#include "dy_passes.h"
