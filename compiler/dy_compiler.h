/* dy_compiler.h - everything compiler/'s libraries offer, for the dy2stc
 * CLI and the tests: the frontends, the passes, post-training
 * quantization and the driver (target dy_compiler, an INTERFACE umbrella).
 * Library code includes the one header of the module it uses instead
 * (dy_frontends.h, dy_passes.h, dy_quant.h, dy_driver.h); the C frontend
 * (cfront/cfront.h) and the CLI (cli/cli.h) are not in it. The dependency
 * map is in the top CMakeLists.txt and docs/design.md.
 */
#ifndef DY_COMPILER_H
#define DY_COMPILER_H

#include "dy_driver.h"
#include "dy_frontends.h"
#include "dy_passes.h"
#include "dy_quant.h"

#endif
