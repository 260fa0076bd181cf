/* dy_compiler.h - everything compiler/ offers, for the dy2stc CLI and the
 * tests: the frontends, the passes and the driver. Library code includes
 * the one header of the module it uses instead (dy_frontends.h,
 * dy_passes.h, dy_driver.h); the dependency map is in the top
 * CMakeLists.txt and docs/design.md.
 */
#ifndef DY_COMPILER_H
#define DY_COMPILER_H

#include "dy_driver.h"
#include "dy_frontends.h"
#include "dy_passes.h"

#endif
