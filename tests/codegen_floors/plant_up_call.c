/* plant_up_call.c - a planted breach of the codegen floors, for ctest
 * codegen_floors_plant: the floors check is handed this object as a file
 * of floor 0 (codegen/text/), and it calls dy_codegen, which floor 3
 * (codegen/program/) defines. The check must fail on it, naming the call.
 * Compiled only to be read with nm; nothing links it. */
#include "dy_codegen.h"

int dy_cg_plant_up_call(const dy_program *p, dy_codegen_output *out);

int dy_cg_plant_up_call(const dy_program *p, dy_codegen_output *out) {
  dy_codegen_options opt = {.name = "plant"};
  dy_error err = {0};
  return dy_codegen(p, &opt, out, &err) == DY_OK;
}
