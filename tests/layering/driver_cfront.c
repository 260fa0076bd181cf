/* Must NOT compile: the driver library may not use the C frontend (nor
 * libclang) (see the top CMakeLists.txt). ctest builds this against
 * dy_driver's include path and passes when the compiler cannot find
 * cfront.h. */
#include "cfront.h"
