/* dy_model.h - a stand-in for a generated model header, so that the
 * template rt/dy_main.c compiles (and links, with a stub dy_model_run_v)
 * on its own. It declares what main.c uses of the real NAME.h, with the
 * placeholder name dy_model; see rt/dy_main.c. */
#ifndef DY_MODEL_H
#define DY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define DY_MODEL_ARENA_BYTES 1024
#define DY_MODEL_ARENA_ALIGN 64
#define DY_MODEL_MAX_BATCH 64
#define DY_MODEL_NUM_INPUTS 1
#define DY_MODEL_NUM_OUTPUTS 1

typedef enum {
  DY_MODEL_OK = 0,
  DY_MODEL_ERR_BATCH = 1,
  DY_MODEL_ERR_ARG = 2,
  DY_MODEL_ERR_INDEX = 3
} dy_model_status;

typedef struct {
  const char *name;
  int dtype; /* 0 f32, 1 i64, 2 bool */
  int rank;
  int64_t shape[8]; /* -1 marks the batch */
} dy_model_tensor_info;

extern const dy_model_tensor_info dy_model_inputs[];
extern const dy_model_tensor_info dy_model_outputs[];

int dy_model_run_v(void *arena, int64_t batch, const void *const *inputs,
                   void *const *outputs);

#endif /* DY_MODEL_H */
