/* Must NOT compile: the C frontend may not use the command line (see the
 * top CMakeLists.txt). ctest builds this against dy_cfront's include path
 * and passes when the compiler cannot find cli.h. */
#include "cli.h"
