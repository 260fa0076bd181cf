/* dy_frontends.h - model readers (compiler/frontends/, library
 * dy_frontends): the ONNX importer and the loader that picks a format.
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

/* ---- onnx.c, load.c: the ONNX frontend ---- */

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
 * parses as an ONNX ModelProto, else NAME.dymodel + NAME.dyparams through
 * dy_jit_load. Caller frees *out. */
dy_status dy_model_load_any(const char *path, dy_program **out, dy_error *err);

#endif
