/* dy_frontends.h - model readers (compiler/frontends/, library
 * dy_frontends): the ONNX and PaddlePaddle importers and the loader that
 * picks a format.
 *
 *   dy_program *p;
 *   dy_model_load_any("net.onnx", &p, &err);   // or NAME for NAME.dymodel
 *
 * Frontends may use ir and runtime (constant subgraphs are evaluated with
 * the runtime's kernels; .dymodel files load through dy_jit_load); never a
 * pass or the driver: their headers are not on this library's include
 * path, so such an #include fails the build.
 */
#ifndef DY_FRONTENDS_H
#define DY_FRONTENDS_H

#include "dy_ir.h"
#include "dy_runtime.h"

/* ---- onnx/ (onnx.c, onnx_tensor.c, ...) and load.c: the ONNX frontend ---- */

/* The most ops one import may build, folded constants included: the bound
 * on everything the importer unrolls (recurrences over time, Loop trips,
 * convolution windows of the composites, LRN's channel window), so a
 * hostile size is a clean DY_STATUS_UNSUPPORTED, never a hang. */
#define DY_ONNX_MAX_OPS (1 << 16)

/* Options for dy_onnx_load_ex. Bound graph inputs are taken as constants
 * with the given values (specialisation: what a shape-like input such as
 * Reshape's shape needs when the model leaves it a graph input). */
typedef struct {
  int n_bind;
  const char *const *bind_names;     /* graph input names              */
  dy_tensor *const *bind_values;     /* their values (borrowed)        */
  int64_t max_ops;                   /* the unrolling budget; 0: DY_ONNX_MAX_OPS */
} dy_onnx_options;

/* What the loader learnt, filled even on failure. */
typedef struct {
  int64_t opset;                     /* the default domain's opset      */
  int needs_const_input;             /* on failure: index of a graph input
                                        that had to be a constant (or that
                                        a value which had to be depends on),
                                        or -1 */
  char needs_const_name[256];
} dy_onnx_info;

/* Read an ONNX model (ModelProto, opsets 1..18) into a new verified
 * Program: initializers and Constant nodes become persistable vars, graph
 * inputs feeds (a dim_param is the dynamic batch, -1), graph outputs
 * fetches, both under their ONNX names. Caller frees *out with
 * dy_program_free. Errors: DY_STATUS_FORMAT (not ONNX, truncated),
 * DY_STATUS_UNSUPPORTED (an op, dtype, attribute or opset; the message
 * names the node and its op type), DY_STATUS_IO. */
dy_status dy_onnx_load(const char *path, dy_program **out, dy_error *err);
dy_status dy_onnx_load_ex(const char *path, const dy_onnx_options *opts,
                          dy_onnx_info *info, dy_program **out, dy_error *err);
/* Read a serialized TensorProto (the conformance suite's input_N.pb).
 * *out is a new tensor (caller frees); name (if non-NULL) gets the
 * tensor's name. */
dy_status dy_onnx_tensor_read(const char *path, dy_tensor **out, char *name,
                              size_t name_n, dy_error *err);
/* ONNX TensorProto.DataType -> dtype; false for one dy2stc lacks. */
bool dy_onnx_dtype(int onnx_type, dy_dtype *out);
/* Load any model dy2stc reads: ONNX when path ends in ".onnx" or the file
 * parses as an ONNX ModelProto, Paddle for a .pdmodel / __model__ path
 * (dy_paddle_is_model_path; params beside it), else NAME.dymodel +
 * NAME.dyparams through dy_jit_load. Caller frees *out. */
dy_status dy_model_load_any(const char *path, dy_program **out, dy_error *err);

/* ---- onnx/onnx_export*.c: the ONNX exporter ---- */

#define DY_ONNX_EXPORT_OPSET 17
/* Initializers of more bytes than this in all go to external data. */
#define DY_ONNX_EXTERNAL_MIN (1 << 20)

typedef struct {
  /* 0: external data when the initializers hold more than
   * DY_ONNX_EXTERNAL_MIN bytes; 1: always; -1: never */
  int external_data;
} dy_onnx_save_options;

/* Write p as an ONNX model (opset DY_ONNX_EXPORT_OPSET) at path, and its
 * large initializers (each of 1 KiB or more) in path + ".data" when
 * external data is on (ONNX external_data: location, offset, length);
 * the files are written whole or not at all. dy_onnx_load reads it back
 * to the same Program but where onnx/onnx_export_ops.c says otherwise
 * (ops written as an ONNX composition, Gemm for a transposed matmul).
 * Fused and training ops, and the few ops ONNX has no spelling for, are
 * DY_STATUS_UNSUPPORTED naming the op and its line. opts may be NULL. */
dy_status dy_onnx_save(const dy_program *p, const char *path, const dy_onnx_save_options *opts,
                       dy_error *err);

/* ---- paddle/ (paddle.c, paddle_export.c, ...): the PaddlePaddle frontend ---- */

/* Options for the Paddle importer. A feed named here takes the given dims
 * (the dtype stays the ProgramDesc's; the dims must agree with it where
 * those are not -1): a -1 gets a static size, before any op is imported
 * (ops such as conv2d need static spatial dims). */
typedef struct {
  int n_feed_types;
  const char *const *feed_names;
  const dy_type *feed_types;
  /* n_fetches > 0: these vars are the fetches instead of the fetch ops',
   * and only the ops they depend on are imported (a model's dense part
   * before an unsupported op). */
  int n_fetches;
  const char *const *fetch_names;
  /* params absent (NULL): the parameters become persistable vars typed
   * from their VarDescs (or PIR types) without data, and the Program is
   * returned unverified: dy_verify refuses it ("has no data") and nothing
   * can run it. What `dy2stc show` prints for a model shipped without its
   * params (verifying it with zeros in their place). */
  bool params_optional;
} dy_paddle_options;

/* Import a PaddlePaddle inference model from memory: model = a serialized
 * ProgramDesc (`.pdmodel`, `__model__`), params = the combined params
 * stream (`.pdiparams`, `__params__`: per persistable var in sorted-name
 * order, u32 version, u64 LoD level count + levels, u32 tensor version,
 * i32 TensorDesc length + TensorDesc, raw data); params may be NULL/0 for
 * a model with no persistable vars. Feeds and fetches become the
 * Program's inputs and outputs under their Paddle names; a leading -1 dim
 * is the dynamic batch, another -1 the size symbol "<feed>_d<i>" (declared
 * without a bound). `name` names the model in errors and source
 * locations (op k is line k). Errors: DY_STATUS_FORMAT (malformed,
 * truncated, a params mismatch naming the var), DY_STATUS_UNSUPPORTED
 * (an op, dtype or attribute, naming the op). Caller frees *out. */
dy_status dy_paddle_load_mem(const uint8_t *model, size_t model_n, const uint8_t *params,
                             size_t params_n, const char *name,
                             const dy_paddle_options *opts, dy_program **out,
                             dy_error *err);
/* The same for a Paddle 3 PIR program (the bytes of `inference.json`,
 * paddle.jit.save's format since 3.0): translated op by op into the
 * equivalent ProgramDesc and imported by dy_paddle_load_mem, so both
 * formats give the same Program. Params as above (the PIR program's
 * parameters in sorted-name order). Fetches are named as Paddle's
 * (fetch_name_0, ...). Errors name the JSON byte offset or the PIR op. */
dy_status dy_paddle_load_pir_mem(const uint8_t *json, size_t json_n, const uint8_t *params,
                                 size_t params_n, const char *name,
                                 const dy_paddle_options *opts, dy_program **out,
                                 dy_error *err);
/* Import from files: path is NAME.pdmodel or NAME.json (params: params_path, else
 * NAME.pdiparams beside it), a `__model__` file or a directory holding
 * one (params: `__params__` beside it, else one file per persistable var,
 * named as the var), or `model` with `params` beside it. */
dy_status dy_paddle_load(const char *path, const char *params_path,
                         const dy_paddle_options *opts, dy_program **out, dy_error *err);
/* Write p as a Paddle inference model: PREFIX.pdmodel + PREFIX.pdiparams
 * (each written whole or not at all), which dy_paddle_load reads back to
 * the same Program (paddle/paddle_table.c lists the ops it writes; control flow,
 * fused and training ops are DY_STATUS_UNSUPPORTED naming the op). The
 * _mem form returns both files' bytes (caller frees). */
dy_status dy_paddle_save(const dy_program *p, const char *prefix, dy_error *err);
dy_status dy_paddle_save_mem(const dy_program *p, uint8_t **model, size_t *model_n,
                             uint8_t **params, size_t *params_n, dy_error *err);
/* True if path names a Paddle model by its name (.pdmodel, .json, __model__,
 * a directory holding __model__). */
bool dy_paddle_is_model_path(const char *path);

#endif
