/* Must NOT compile: the driver library may not use the frontends: it does
 * not read models (see the top CMakeLists.txt). ctest builds this against
 * dy_driver's include path and passes when the compiler cannot find
 * dy_frontends.h. */
#include "dy_frontends.h"
