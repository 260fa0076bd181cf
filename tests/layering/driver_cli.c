/* Must NOT compile: the driver library may not use the command line (see
 * the top CMakeLists.txt). ctest builds this against dy_driver's include
 * path and passes when the compiler cannot find cli.h. */
#include "cli.h"
