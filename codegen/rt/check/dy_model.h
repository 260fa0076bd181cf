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
  int dtype; /* 0 f32, 1 i64, 2 bool, 3 i8, 4 u8, 5 i32 */
  int rank;
  int64_t shape[8]; /* -1 marks the batch */
} dy_model_tensor_info;

extern const dy_model_tensor_info dy_model_inputs[];
extern const dy_model_tensor_info dy_model_outputs[];

int dy_model_run_v(void *arena, int64_t batch, const void *const *inputs,
                   void *const *outputs);

/* What rt/dy_train_main.c uses of a training step's header (the emitter
 * turns its dy_model_step_v into NAME_run_v, which then takes the state
 * first), and the values of its DY_TPL_* placeholders. */
#define DY_MODEL_STATE_BYTES 256
#define DY_MODEL_STATE_ALIGN 64
#define DY_MODEL_NUM_STATE 1
extern const dy_model_tensor_info dy_model_state[];
int dy_model_state_init(void *state);
void *dy_model_state_tensor(void *state, int i);
#define DY_MODEL_N_DROPOUT_SEEDS 1
uint64_t *dy_model_dropout_seeds(void *state);
int dy_model_step_v(void *state, void *arena, int64_t batch, const void *const *inputs,
                    void *const *outputs);
#define DY_TPL_LR 0.01
#define DY_TPL_BATCH 32
#define DY_TPL_LR_STEP 0
#define DY_TPL_LR_GAMMA 1.0
#define DY_TPL_LR_WARMUP -1

#endif /* DY_MODEL_H */
