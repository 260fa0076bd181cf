/* paddle_pir.c - Paddle 3's PIR program (`inference.json`, what
 * paddle.jit.save writes since 3.0) translated into the equivalent legacy
 * ProgramDesc (paddle_internal.h), which paddle.c then imports like any
 * .pdmodel: one importer, so both formats give the same Program.
 *
 * The JSON (read by common/fe_json.c) is
 *   {"base_code": {"magic": "pir", "version": 1, ...},
 *    "program": {"regions": [{"blocks": [{"args": [], "ops": [OP...]}]}]}}
 * and an OP is {"#": NAME, "A": attrs, "I": [{"%": id}...], "O": [...]}:
 * NAME "p" is builtin.parameter ("A": [_, _, _, "param_name"]), "1.x" is
 * pd_op.x, "0.x" builtin.x. A value is {"%": id} (id 0: absent input),
 * an output also carries its type "TT": {"#": "0.t_dtensor", "D":
 * [{"#": "0.t_f32"}, dims, layout, lod, offset]} or "0.t_vec" of those.
 * An attribute is {"N": name, "AT": {"#": kind, "D": value}}.
 *
 * The translation, op by op in order, through the table below (pd_op name
 * -> legacy op type, input and output slots by position, attribute
 * renames): parameters become persistable VarDescs named as in the params
 * file (whose records are in sorted-name order, as the legacy stream's);
 * pd_op.data a feed op (in program order), pd_op.fetch a fetch op whose
 * var takes the fetch's name (fetch_name_0, ...); pd_op.full and
 * full_int_array are constants that become the attribute of the op
 * reading them (pool2d's ksize, reshape's shape, concat's axis, scale's
 * scale; a full read as a tensor becomes a fill_constant);
 * builtin.combine a list input, builtin.split the outputs of the
 * list-valued op before it. Other values are named "<op>_<id>".
 * Errors are one line naming the op: "NAME: PIR op 12 (pd_op.foo): ...".
 * Each legacy op carries the number of its PIR op (attribute PIR_OP_ATTR,
 * which no legacy importer reads but paddle.c, for the source line).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "paddle_internal.h"

/* ------------------------------------------------------------------ */
/* the op table                                                        */
/* ------------------------------------------------------------------ */

/* An input slot: "Slot" a tensor, "*Slot" a list (builtin.combine),
 * "=attr" a constant (full, full_int_array) becoming attribute attr,
 * NULL: the input must be absent. An output slot "*Slot": a list that
 * builtin.split takes apart. */
typedef struct {
  const char *pir;              /* pd_op.<pir> */
  const char *legacy;
  const char *in[5];
  const char *out[6];
  const char *ren[3][2];        /* attribute renames {pir, legacy} */
  int axis;                     /* elementwise: add axis=-1 */
} pir_map;

#define EWISE(p, l) {p, l, {"X", "Y"}, {"Out"}, {{NULL, NULL}}, 1}
#define UNARY(p, l) {p, l, {"X"}, {"Out"}, {{NULL, NULL}}, 0}

static const pir_map maps[] = {
    {"conv2d", "conv2d", {"Input", "Filter"}, {"Output"}, {{NULL, NULL}}, 0},
    {"depthwise_conv2d", "depthwise_conv2d", {"Input", "Filter"}, {"Output"}, {{NULL, NULL}}, 0},
    {"conv2d_transpose", "conv2d_transpose", {"Input", "Filter", "=output_size"}, {"Output"},
     {{NULL, NULL}}, 0},
    /* PIR's order is (x, mean, variance, scale, bias) */
    {"batch_norm_", "batch_norm", {"X", "Mean", "Variance", "Scale", "Bias"},
     {"Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance", "ReserveSpace"},
     {{"data_format", "data_layout"}}, 0},
    {"batch_norm", "batch_norm", {"X", "Mean", "Variance", "Scale", "Bias"},
     {"Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance", "ReserveSpace"},
     {{"data_format", "data_layout"}}, 0},
    {"layer_norm", "layer_norm", {"X", "Scale", "Bias"}, {"Y", "Mean", "Variance"},
     {{NULL, NULL}}, 0},
    {"pool2d", "pool2d", {"X", "=ksize"}, {"Out"}, {{NULL, NULL}}, 0},
    {"reshape", "reshape2", {"X", "=shape"}, {"Out", "XShape"}, {{NULL, NULL}}, 0},
    {"transpose", "transpose2", {"X"}, {"Out", "XShape"}, {{"perm", "axis"}}, 0},
    {"flatten", "flatten_contiguous_range", {"X"}, {"Out", "XShape"}, {{NULL, NULL}}, 0},
    {"squeeze", "squeeze2", {"X", "=axes"}, {"Out", "XShape"}, {{NULL, NULL}}, 0},
    {"unsqueeze", "unsqueeze2", {"X", "=axes"}, {"Out", "XShape"}, {{NULL, NULL}}, 0},
    {"concat", "concat", {"*X", "=axis"}, {"Out"}, {{NULL, NULL}}, 0},
    {"split_with_num", "split", {"X", "=axis"}, {"*Out"}, {{NULL, NULL}}, 0},
    {"split", "split", {"X", "=sections", "=axis"}, {"*Out"}, {{NULL, NULL}}, 0},
    {"matmul", "matmul_v2", {"X", "Y"}, {"Out"},
     {{"transpose_x", "trans_x"}, {"transpose_y", "trans_y"}}, 0},
    {"scale", "scale", {"X", "=scale"}, {"Out"}, {{NULL, NULL}}, 0},
    {"softmax", "softmax", {"X"}, {"Out"}, {{NULL, NULL}}, 0},
    {"hardswish", "hard_swish", {"X"}, {"Out"}, {{NULL, NULL}}, 0},
    {"hardsigmoid", "hard_sigmoid", {"X"}, {"Out"}, {{NULL, NULL}}, 0},
    {"gelu", "gelu", {"X"}, {"Out"}, {{NULL, NULL}}, 0},
    {"leaky_relu", "leaky_relu", {"X"}, {"Out"}, {{"negative_slope", "alpha"}}, 0},
    {"cast", "cast", {"X"}, {"Out"}, {{"dtype", "out_dtype"}}, 0},
    {"nearest_interp", "nearest_interp_v2", {"X", NULL, NULL, NULL}, {"Out"},
     {{"data_format", "data_layout"}}, 0},
    {"bilinear_interp", "bilinear_interp_v2", {"X", NULL, NULL, NULL}, {"Out"},
     {{"data_format", "data_layout"}}, 0},
    {"multiclass_nms3", "multiclass_nms3", {"BBoxes", "Scores", "RoisNum"},
     {"Out", "Index", "NmsRoisNum"}, {{NULL, NULL}}, 0},
    EWISE("add", "elementwise_add"),
    EWISE("subtract", "elementwise_sub"),
    EWISE("multiply", "elementwise_mul"),
    EWISE("divide", "elementwise_div"),
    EWISE("maximum", "elementwise_max"),
    EWISE("minimum", "elementwise_min"),
    UNARY("relu", "relu"),
    UNARY("relu6", "relu6"),
    UNARY("sigmoid", "sigmoid"),
    UNARY("tanh", "tanh"),
    UNARY("exp", "exp"),
    UNARY("sqrt", "sqrt"),
    UNARY("rsqrt", "rsqrt"),
    UNARY("abs", "abs"),
    UNARY("silu", "silu"),
    UNARY("swish", "swish"),
    UNARY("assign", "assign"),
    {"dropout", "dropout", {"X", NULL}, {"Out", "Mask"}, {{"p", "dropout_prob"}}, 0},
};

static const pir_map *map_of(const char *pir) {
  for (size_t i = 0; i < sizeof maps / sizeof *maps; i++)
    if (strcmp(maps[i].pir, pir) == 0)
      return &maps[i];
  return NULL;
}

/* ------------------------------------------------------------------ */
/* values and errors                                                   */
/* ------------------------------------------------------------------ */

#define PIR_MAX_VALUES (1 << 22)
#define PIR_MAX_LIST 64      /* values in a list, outputs of an op */

enum { V_NONE, V_TENSOR, V_CONST, V_LIST, V_PENDING };

typedef struct {
  int kind;
  const char *name;         /* V_TENSOR: the legacy var */
  const fe_jnode *op;       /* the defining op */
  const fe_jnode *type;     /* its "TT" */
  int *items;               /* V_LIST: the values (pdx_alloc'd) */
  int n_items;
  int op_index;             /* V_PENDING: the list-valued op */
} pir_val;

typedef struct {
  pdx_ctx x;
  const fe_json *j;
  const char *name;
  dy_error *err;
  PdBlock *blk;
  pir_val *vals;
  int n_vals;
  int op_index;
  const char *op_name;      /* "pd_op.conv2d" */
  int n_feeds;
  const fe_jnode *const *ops;
} pir_ctx;

static dy_status pir_fail(pir_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static dy_status pir_fail(pir_ctx *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* what the reader does not take is UNSUPPORTED, a broken file FORMAT */
  dy_status st = strstr(msg, "not supported") ? DY_STATUS_UNSUPPORTED : DY_STATUS_FORMAT;
  if (c->op_name)
    return dy_error_set(c->err, st, "%s: PIR op %d (%s): %s", c->name, c->op_index,
                        c->op_name, msg);
  return dy_error_set(c->err, st, "%s: PIR program: %s", c->name, msg);
}

static const fe_jnode *jget(pir_ctx *c, const fe_jnode *o, const char *k) {
  return fe_json_get(c->j, o, k);
}

static bool is_kind(const fe_jnode *v, fe_jkind k) { return v && v->kind == k; }

/* The value id of {"%": id}; -1 when malformed. */
static int value_id(pir_ctx *c, const fe_jnode *v) {
  const fe_jnode *id = jget(c, v, "%");
  if (!is_kind(id, FE_JNUMBER) || !id->is_int || id->i < 0 || id->i >= c->n_vals)
    return -1;
  return (int)id->i;
}

/* PIR's dtypes: the type's name, the attribute's name, Paddle's VarType. */
static const struct {
  const char *type, *attr;
  int pd;
} dtypes[] = {{"0.t_f32", "float32", PD_FP32}, {"0.t_f64", "float64", PD_FP64},
              {"0.t_f16", "float16", PD_FP16}, {"0.t_bf16", "bfloat16", PD_BF16},
              {"0.t_i64", "int64", PD_INT64},  {"0.t_i32", "int32", PD_INT32},
              {"0.t_i16", "int16", PD_INT16},  {"0.t_i8", "int8", PD_INT8},
              {"0.t_ui8", "uint8", PD_UINT8},  {"0.t_bool", "bool", PD_BOOL}};

/* The VarType of a type name ("0.t_f32") or, attr, of an attribute's
 * dtype ("float32"); -1 for others. */
static int pd_dtype_of(const char *t, bool attr) {
  for (size_t i = 0; t && i < sizeof dtypes / sizeof *dtypes; i++)
    if (strcmp(attr ? dtypes[i].attr : dtypes[i].type, t) == 0)
      return dtypes[i].pd;
  return -1;
}

/* A dense tensor type "TT" into its TensorDesc. */
static dy_status tensor_desc(pir_ctx *c, const fe_jnode *tt, PdTensorDesc **out) {
  const fe_jnode *k = jget(c, tt, "#"), *d = jget(c, tt, "D");
  if (!is_kind(k, FE_JSTRING) || strcmp(k->str, "0.t_dtensor") || !is_kind(d, FE_JARRAY) ||
      d->n < 2)
    return pir_fail(c, "a value whose type is not a dense tensor (%s)",
                    is_kind(k, FE_JSTRING) ? k->str : "no type");
  const fe_jnode *dt = jget(c, fe_json_at(c->j, d, 0), "#"), *dims = fe_json_at(c->j, d, 1);
  int pdt = pd_dtype_of(is_kind(dt, FE_JSTRING) ? dt->str : NULL, false);
  if (pdt < 0)
    return pir_fail(c, "the dtype %s is not supported",
                    is_kind(dt, FE_JSTRING) ? dt->str : "(none)");
  if (!is_kind(dims, FE_JARRAY) || dims->n > DY_MAX_DIMS)
    return pir_fail(c, "a tensor type without its dims (or more than %d)", DY_MAX_DIMS);
  int64_t v[DY_MAX_DIMS];
  int r = 0;
  for (const fe_jnode *e = fe_json_first(c->j, dims); e; e = fe_json_next(c->j, e)) {
    if (!is_kind(e, FE_JNUMBER) || !e->is_int || e->i < -1)
      return pir_fail(c, "a dim that is not a size or -1");
    v[r++] = e->i;
  }
  *out = pdx_tdesc_pd(&c->x, pdt, r, v);
  return *out ? DY_OK : pir_fail(c, "out of memory");
}

/* A new LoD-tensor VarDesc for value id of type tt. */
static dy_status add_var(pir_ctx *c, const char *name, const fe_jnode *tt, bool persistable) {
  PdTensorDesc *td;
  PD_TRY(tensor_desc(c, tt, &td));
  PdVar *v = pdx_var_td(&c->x, c->blk, name, PD_LOD_TENSOR, td);
  if (!v)
    return pir_fail(c, "out of memory");
  v->has_persistable = true;
  v->persistable = persistable;
  return DY_OK;
}

/* The op's attribute of a name ({"N": name, "AT": {...}}), its AT. */
static const fe_jnode *attr_of(pir_ctx *c, const fe_jnode *op, const char *name) {
  const fe_jnode *a = jget(c, op, "A");
  for (const fe_jnode *e = fe_json_first(c->j, a); e; e = fe_json_next(c->j, e)) {
    const fe_jnode *n = jget(c, e, "N");
    if (is_kind(n, FE_JSTRING) && strcmp(n->str, name) == 0)
      return jget(c, e, "AT");
  }
  return NULL;
}

static const char *at_kind(pir_ctx *c, const fe_jnode *at) {
  const fe_jnode *k = jget(c, at, "#");
  return is_kind(k, FE_JSTRING) ? k->str : "";
}

/* A list attribute's ints (a_array of a_i32/a_i64, or 1.a_intarray):
 * the count, -1 when it is not one. */
static int at_ints(pir_ctx *c, const fe_jnode *at, int64_t *out, int cap) {
  const char *k = at_kind(c, at);
  const fe_jnode *d = jget(c, at, "D");
  bool wrapped = strcmp(k, "0.a_array") == 0;
  if (!is_kind(d, FE_JARRAY) || (!wrapped && strcmp(k, "1.a_intarray")) || d->n > cap)
    return -1;
  int n = 0;
  for (const fe_jnode *e = fe_json_first(c->j, d); e; e = fe_json_next(c->j, e)) {
    const fe_jnode *v = wrapped ? jget(c, e, "D") : e;
    if (wrapped && strcmp(at_kind(c, e), "0.a_i32") && strcmp(at_kind(c, e), "0.a_i64"))
      return -1;
    if (!is_kind(v, FE_JNUMBER) || !v->is_int)
      return -1;
    out[n++] = v->i;
  }
  return n;
}

/* ------------------------------------------------------------------ */
/* attributes                                                          */
/* ------------------------------------------------------------------ */

static bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* One PIR attribute written as the legacy op's attribute `name`. */
static dy_status put_attr(pir_ctx *c, PdOp *op, const char *name, const fe_jnode *at) {
  const char *k = at_kind(c, at);
  const fe_jnode *d = jget(c, at, "D");
  if (strcmp(k, "0.a_bool") == 0 && is_kind(d, FE_JBOOL)) {
    pdx_at_b(&c->x, op, name, d->b);
  } else if ((strcmp(k, "0.a_i32") == 0 || strcmp(k, "0.a_i64") == 0) &&
             is_kind(d, FE_JNUMBER) && d->is_int) {
    if (fits_i32(d->i))
      pdx_at_i(&c->x, op, name, d->i);
    else
      pdx_at_l(&c->x, op, name, d->i);
  } else if ((strcmp(k, "0.a_f32") == 0 || strcmp(k, "0.a_f64") == 0) &&
             is_kind(d, FE_JNUMBER)) {
    pdx_at_f(&c->x, op, name, d->num);
  } else if (strcmp(k, "0.a_str") == 0 && is_kind(d, FE_JSTRING)) {
    pdx_at_s(&c->x, op, name, d->str);
  } else if (strcmp(k, "1.a_dtype") == 0 && is_kind(d, FE_JSTRING)) {
    int t = pd_dtype_of(d->str, true);
    if (t < 0)
      return pir_fail(c, "attribute '%s': the dtype '%s' is not supported", name, d->str);
    pdx_at_i(&c->x, op, name, t);
  } else if (strcmp(k, "0.a_array") == 0 && is_kind(d, FE_JARRAY) &&
             (d->n == 0 || !strcmp(at_kind(c, fe_json_first(c->j, d)), "0.a_f32") ||
              !strcmp(at_kind(c, fe_json_first(c->j, d)), "0.a_f64"))) {
    float f[64];
    int n = 0;
    for (const fe_jnode *e = fe_json_first(c->j, d); e && n < 64; e = fe_json_next(c->j, e)) {
      const fe_jnode *v = jget(c, e, "D");
      if (!is_kind(v, FE_JNUMBER) || (strcmp(at_kind(c, e), "0.a_f32") &&
                                      strcmp(at_kind(c, e), "0.a_f64")))
        return pir_fail(c, "attribute '%s': a list of mixed kinds", name);
      f[n++] = (float)v->num;
    }
    if (n < d->n)
      return pir_fail(c, "attribute '%s': more than 64 values", name);
    if (n == 0)
      pdx_at_ints(&c->x, op, name, NULL, 0);
    else
      pdx_at_floats(&c->x, op, name, f, n);
  } else if (strcmp(k, "0.a_array") == 0 || strcmp(k, "1.a_intarray") == 0) {
    int64_t v[64];
    int n = at_ints(c, at, v, 64);
    if (n < 0)
      return pir_fail(c, "attribute '%s' (%s) is not supported: a list of other than ints or "
                      "floats", name, k);
    for (int i = 0; i < n; i++)
      if (!fits_i32(v[i]))
        return pir_fail(c, "attribute '%s': %lld does not fit in int32", name,
                        (long long)v[i]);
    pdx_at_ints(&c->x, op, name, v, n);
  } else {
    return pir_fail(c, "attribute '%s' of kind '%s' is not supported", name, k);
  }
  return DY_OK;
}

/* Every attribute of the PIR op, renamed by the row (struct_name and
 * place, which carry no meaning for inference, are left out). */
static dy_status put_attrs(pir_ctx *c, PdOp *op, const fe_jnode *pop, const pir_map *m) {
  const fe_jnode *a = jget(c, pop, "A");
  if (!is_kind(a, FE_JARRAY))
    return pir_fail(c, "no attribute list \"A\"");
  for (const fe_jnode *e = fe_json_first(c->j, a); e; e = fe_json_next(c->j, e)) {
    const fe_jnode *n = jget(c, e, "N"), *at = jget(c, e, "AT");
    if (!is_kind(n, FE_JSTRING) || !is_kind(at, FE_JOBJECT))
      return pir_fail(c, "an attribute without \"N\" and \"AT\"");
    if (strcmp(n->str, "struct_name") == 0 || strcmp(at_kind(c, at), "1.a_place") == 0)
      continue;
    const char *name = n->str;
    for (int r = 0; m && r < 3 && m->ren[r][0]; r++)
      if (strcmp(m->ren[r][0], name) == 0)
        name = m->ren[r][1];
    PD_TRY(put_attr(c, op, name, at));
  }
  if (m && m->axis)
    pdx_at_i(&c->x, op, "axis", -1);
  return DY_OK;
}

/* ------------------------------------------------------------------ */
/* ops                                                                 */
/* ------------------------------------------------------------------ */

/* The name of the op's output value i ("O" is a list, or one value). */
static const fe_jnode *out_value(pir_ctx *c, const fe_jnode *op, int i) {
  const fe_jnode *o = jget(c, op, "O");
  if (is_kind(o, FE_JOBJECT))
    return i == 0 ? o : NULL;
  return fe_json_at(c->j, o, i);
}

static int n_outputs(pir_ctx *c, const fe_jnode *op) {
  const fe_jnode *o = jget(c, op, "O");
  return is_kind(o, FE_JOBJECT) ? 1 : is_kind(o, FE_JARRAY) ? o->n : 0;
}

/* Define output value i of the op; a dense tensor gets a VarDesc named
 * "<stem>_<id>" (or the fetch's name, see pre_name). */
static dy_status define_out(pir_ctx *c, const fe_jnode *op, int i, const char *stem, int *id) {
  const fe_jnode *v = out_value(c, op, i);
  *id = value_id(c, v);
  if (*id <= 0)
    return pir_fail(c, "output %d is not a value {\"%%\": id} (ids 1..%d)", i, c->n_vals - 1);
  pir_val *pv = &c->vals[*id];
  if (pv->op)
    return pir_fail(c, "value %%%d is defined twice", *id);
  pv->op = op;
  pv->type = jget(c, v, "TT");
  pv->kind = V_TENSOR;
  const fe_jnode *k = jget(c, pv->type, "#");
  if (is_kind(k, FE_JSTRING) && strcmp(k->str, "0.t_dtensor"))
    return DY_OK; /* a list (t_vec) or no value (t_null): no VarDesc */
  if (!pv->name) {
    char nm[96];
    snprintf(nm, sizeof nm, "%.60s_%d", stem, *id);
    pv->name = pdx_str(&c->x, nm);
  }
  return add_var(c, pv->name, pv->type, false);
}

/* Input i of the op: its value id, 0 when absent; -1 when malformed or
 * not yet defined. */
static int in_value(pir_ctx *c, const fe_jnode *op, int i) {
  const fe_jnode *in = fe_json_at(c->j, jget(c, op, "I"), i);
  if (!in)
    return 0;
  int id = value_id(c, in);
  if (id > 0 && !c->vals[id].op)
    return -1;
  return id;
}

/* The tensor var of value id (a constant read as a tensor becomes a
 * fill_constant here, once). */
static dy_status tensor_of(pir_ctx *c, int id, const char **name) {
  pir_val *v = &c->vals[id];
  if (v->kind == V_CONST && !v->name) {
    const fe_jnode *cop = v->op;
    const fe_jnode *val = jget(c, attr_of(c, cop, "value"), "D");
    if (!is_kind(val, FE_JNUMBER))
      return pir_fail(c, "value %%%d (a constant list) is read as a tensor: not supported", id);
    char nm[64];
    snprintf(nm, sizeof nm, "full_%d", id);
    v->name = pdx_str(&c->x, nm);
    PD_TRY(add_var(c, v->name, v->type, false));
    PdOp *op = pdx_op(&c->x, c->blk, "fill_constant");
    pdx_arg(&c->x, op, true, "Out", v->name);
    char sv[40];
    snprintf(sv, sizeof sv, "%.17g", val->num);
    pdx_at_s(&c->x, op, "str_value", sv);
    pdx_at_f(&c->x, op, "value", val->num);
    const fe_jnode *sh = attr_of(c, cop, "shape"), *dt = attr_of(c, cop, "dtype");
    if (sh)
      PD_TRY(put_attr(c, op, "shape", sh));
    if (dt)
      PD_TRY(put_attr(c, op, "dtype", dt));
  }
  if (v->kind != V_TENSOR && v->kind != V_CONST)
    return pir_fail(c, "value %%%d is a list where a tensor is read", id);
  if (!v->name)
    return pir_fail(c, "value %%%d is not a tensor", id);
  *name = v->name;
  return DY_OK;
}

/* A constant input as the attribute `name`. */
static dy_status const_attr(pir_ctx *c, PdOp *op, int id, const char *name) {
  pir_val *v = &c->vals[id];
  if (v->kind != V_CONST)
    return pir_fail(c, "input '%s' is computed (not a pd_op.full / full_int_array): not "
                    "supported", name);
  const fe_jnode *at = attr_of(c, v->op, "value");
  if (!at)
    return pir_fail(c, "the constant %%%d has no value", id);
  const fe_jnode *d = jget(c, at, "D"), *dt = jget(c, attr_of(c, v->op, "dtype"), "D");
  if (is_kind(d, FE_JNUMBER) && is_kind(dt, FE_JSTRING)) { /* pd_op.full: one number */
    int t = pd_dtype_of(dt->str, true);
    bool integral = t == PD_INT64 || t == PD_INT32 || t == PD_INT16 || t == PD_INT8 ||
                    t == PD_UINT8 || t == PD_BOOL;
    if (!integral) {
      pdx_at_f(&c->x, op, name, d->num);
    } else if (d->num == (double)(int32_t)d->num) {
      pdx_at_i(&c->x, op, name, (int32_t)d->num);
    } else {
      return pir_fail(c, "input '%s': the constant %g is not an int32", name, d->num);
    }
    return DY_OK;
  }
  return put_attr(c, op, name, at);
}

/* Emit a legacy op for the PIR op (number `index`) by its row; a list
 * output gets split_outs (the values builtin.split gives for it). */
static dy_status emit_mapped(pir_ctx *c, const fe_jnode *pop, int index, const pir_map *m,
                             const int *split_outs, int n_split) {
  PdOp *op = pdx_op(&c->x, c->blk, m->legacy);
  pdx_at_i(&c->x, op, PIR_OP_ATTR, index);
  const fe_jnode *ins = jget(c, pop, "I");
  if (!is_kind(ins, FE_JARRAY))
    return pir_fail(c, "no input list \"I\"");
  if (ins->n > 5)
    return pir_fail(c, "%d inputs, more than the row names", ins->n);
  for (int i = 0; i < ins->n; i++) {
    int id = in_value(c, pop, i);
    const char *slot = m->in[i];
    if (id < 0)
      return pir_fail(c, "input %d is not a value defined before", i);
    if (id == 0)
      continue;
    if (!slot)
      return pir_fail(c, "input %d (a tensor form of an attribute) is not supported", i);
    if (slot[0] == '=') {
      PD_TRY(const_attr(c, op, id, slot + 1));
    } else if (slot[0] == '*') {
      pir_val *v = &c->vals[id];
      if (v->kind != V_LIST)
        return pir_fail(c, "input %d is not a builtin.combine list", i);
      pdx_arg(&c->x, op, false, slot + 1, NULL);
      for (int k = 0; k < v->n_items; k++) {
        const char *nm;
        PD_TRY(tensor_of(c, v->items[k], &nm));
        pdx_arg(&c->x, op, false, slot + 1, nm);
      }
    } else {
      const char *nm;
      PD_TRY(tensor_of(c, id, &nm));
      pdx_arg(&c->x, op, false, slot, nm);
    }
  }
  int n_out = n_outputs(c, pop);
  if (n_out > 6)
    return pir_fail(c, "%d outputs, more than the row names", n_out);
  for (int i = 0; i < n_out; i++) {
    const char *slot = m->out[i];
    if (!slot)
      return pir_fail(c, "output %d has no slot in the legacy op", i);
    if (slot[0] == '*') {
      for (int k = 0; k < n_split; k++)
        pdx_arg(&c->x, op, true, slot + 1, c->vals[split_outs[k]].name);
      continue;
    }
    int id = value_id(c, out_value(c, pop, i));
    if (id > 0 && c->vals[id].name)
      pdx_arg(&c->x, op, true, slot, c->vals[id].name);
  }
  return put_attrs(c, op, pop, m);
}

/* The op name with its dialect: "1.conv2d" -> "pd_op.conv2d". */
static void full_name(const char *n, char *buf, size_t cap) {
  if (strcmp(n, "p") == 0)
    snprintf(buf, cap, "builtin.parameter");
  else if (strncmp(n, "1.", 2) == 0)
    snprintf(buf, cap, "pd_op.%s", n + 2);
  else if (strncmp(n, "0.", 2) == 0)
    snprintf(buf, cap, "builtin.%s", n + 2);
  else
    snprintf(buf, cap, "%s", n);
}

/* The op's output value 0 named nm (a parameter's, a feed's name). */
static dy_status named_value(pir_ctx *c, const fe_jnode *op, const fe_jnode *nm,
                             const char *what, bool persistable) {
  if (!is_kind(nm, FE_JSTRING) || !nm->len)
    return pir_fail(c, "a %s without its name", what);
  int id = value_id(c, out_value(c, op, 0));
  if (id <= 0 || c->vals[id].op)
    return pir_fail(c, "a %s's output is not a new value", what);
  c->vals[id] = (pir_val){.kind = V_TENSOR, .name = nm->str, .op = op,
                          .type = jget(c, out_value(c, op, 0), "TT")};
  return add_var(c, nm->str, c->vals[id].type, persistable);
}

/* builtin.parameter: "A" is [_, _, _, name] */
static dy_status op_parameter(pir_ctx *c, const fe_jnode *op) {
  const fe_jnode *a = jget(c, op, "A");
  const fe_jnode *nm = is_kind(a, FE_JARRAY) ? fe_json_at(c->j, a, a->n - 1) : NULL;
  return named_value(c, op, nm, "parameter", true);
}

static dy_status op_data(pir_ctx *c, const fe_jnode *op) {
  const fe_jnode *n = jget(c, attr_of(c, op, "name"), "D");
  PD_TRY(named_value(c, op, n, "feed", false));
  PdOp *f = pdx_op(&c->x, c->blk, "feed");
  pdx_arg(&c->x, f, false, "X", "feed");
  pdx_arg(&c->x, f, true, "Out", n->str);
  pdx_at_i(&c->x, f, "col", c->n_feeds++);
  return DY_OK;
}

static dy_status op_fetch(pir_ctx *c, const fe_jnode *op) {
  const fe_jnode *n = jget(c, attr_of(c, op, "name"), "D");
  const fe_jnode *col = jget(c, attr_of(c, op, "col"), "D");
  if (!is_kind(n, FE_JSTRING) || !is_kind(col, FE_JNUMBER) || !col->is_int)
    return pir_fail(c, "a fetch without its name and col");
  int id = in_value(c, op, 0);
  if (id <= 0)
    return pir_fail(c, "a fetch without its input value");
  const char *src;
  PD_TRY(tensor_of(c, id, &src));
  if (strcmp(src, n->str)) { /* a feed, parameter or value fetched twice */
    PD_TRY(add_var(c, n->str, c->vals[id].type, false));
    pdx_xo(&c->x, c->blk, "assign", src, n->str);
  }
  PdOp *f = pdx_op(&c->x, c->blk, "fetch");
  pdx_arg(&c->x, f, false, "X", n->str);
  pdx_arg(&c->x, f, true, "Out", "fetch");
  pdx_at_i(&c->x, f, "col", col->i);
  return DY_OK;
}

/* Before the walk: a value only a fetch reads takes the fetch's name. */
static void pre_name(pir_ctx *c, int n_ops) {
  int *readers = calloc((size_t)c->n_vals, sizeof *readers);
  if (!readers)
    return; /* then every value keeps "<op>_<id>" and fetches copy */
  for (int k = 0; k < n_ops; k++)
    for (const fe_jnode *e = fe_json_first(c->j, jget(c, c->ops[k], "I")); e;
         e = fe_json_next(c->j, e)) {
      int id = value_id(c, e);
      if (id > 0)
        readers[id]++;
    }
  for (int k = 0; k < n_ops; k++) {
    const fe_jnode *nm = jget(c, c->ops[k], "#");
    const fe_jnode *fn = jget(c, attr_of(c, c->ops[k], "name"), "D");
    int id = value_id(c, fe_json_at(c->j, jget(c, c->ops[k], "I"), 0));
    if (is_kind(nm, FE_JSTRING) && strcmp(nm->str, "1.fetch") == 0 && is_kind(fn, FE_JSTRING) &&
        id > 0 && readers[id] == 1 && !c->vals[id].name)
      c->vals[id].name = fn->str;
  }
  free(readers);
}

static dy_status translate_op(pir_ctx *c, int k) {
  const fe_jnode *op = c->ops[k];
  const fe_jnode *nm = jget(c, op, "#");
  if (!is_kind(nm, FE_JSTRING))
    return pir_fail(c, "an op without its name \"#\"");
  const char *n = nm->str;
  if (strcmp(n, "p") == 0)
    return op_parameter(c, op);
  if (strcmp(n, "1.data") == 0)
    return op_data(c, op);
  if (strcmp(n, "1.fetch") == 0)
    return op_fetch(c, op);
  int id;
  if (strcmp(n, "1.full") == 0 || strcmp(n, "1.full_int_array") == 0) {
    PD_TRY(define_out(c, op, 0, "full", &id));
    c->vals[id].kind = V_CONST;
    return DY_OK;
  }
  if (strcmp(n, "0.combine") == 0) {
    const fe_jnode *ins = jget(c, op, "I");
    if (!is_kind(ins, FE_JARRAY) || ins->n > PIR_MAX_LIST)
      return pir_fail(c, "a list of more than %d values (or none)", PIR_MAX_LIST);
    int items[PIR_MAX_LIST];
    for (int i = 0; i < ins->n; i++)
      if ((items[i] = in_value(c, op, i)) <= 0)
        return pir_fail(c, "input %d is not a value defined before", i);
    PD_TRY(define_out(c, op, 0, "combine", &id));
    c->vals[id].kind = V_LIST;
    c->vals[id].items = pdx_alloc(&c->x, sizeof(int) * (size_t)ins->n);
    if (!c->vals[id].items)
      return pir_fail(c, "out of memory");
    memcpy(c->vals[id].items, items, sizeof(int) * (size_t)ins->n);
    c->vals[id].n_items = ins->n;
    return DY_OK;
  }
  if (strcmp(n, "0.split") == 0) {
    int src = in_value(c, op, 0);
    if (src <= 0 || c->vals[src].kind != V_PENDING)
      return pir_fail(c, "builtin.split of a value that is not a list-valued op's output");
    int outs[PIR_MAX_LIST], n_out = n_outputs(c, op);
    if (n_out > PIR_MAX_LIST)
      return pir_fail(c, "more than %d outputs", PIR_MAX_LIST);
    const fe_jnode *sop = c->vals[src].op;
    const fe_jnode *snm = jget(c, sop, "#");
    for (int i = 0; i < n_out; i++)
      PD_TRY(define_out(c, op, i, snm->str + 2, &outs[i]));
    c->vals[src].kind = V_LIST; /* taken apart once */
    return emit_mapped(c, sop, c->vals[src].op_index, map_of(snm->str + 2), outs, n_out);
  }
  if (strncmp(n, "1.", 2) != 0)
    return pir_fail(c, "the op is not supported (a %s op)",
                    strncmp(n, "0.", 2) == 0 ? "builtin" : "non-pd_op dialect's");
  const pir_map *m = map_of(n + 2);
  if (!m)
    return pir_fail(c, "the op type is not supported (no legacy Paddle op for it)");
  int n_out = n_outputs(c, op);
  if (n_out > 6)
    return pir_fail(c, "%d outputs, more than the row names", n_out);
  bool list_out = m->out[0] && m->out[0][0] == '*';
  if (list_out) { /* emitted when builtin.split takes it apart */
    if (n_out != 1)
      return pir_fail(c, "a list-valued op with %d outputs", n_out);
    PD_TRY(define_out(c, op, 0, n + 2, &id));
    c->vals[id].kind = V_PENDING;
    c->vals[id].op_index = k;
    return DY_OK;
  }
  for (int i = 0; i < n_out; i++)
    PD_TRY(define_out(c, op, i, n + 2, &id));
  return emit_mapped(c, op, k, m, NULL, 0);
}

/* The block's ops, checking the envelope. */
static dy_status find_ops(pir_ctx *c, const fe_jnode **ops) {
  const fe_jnode *root = fe_json_root(c->j);
  const fe_jnode *magic = jget(c, jget(c, root, "base_code"), "magic");
  if (!is_kind(magic, FE_JSTRING) || strcmp(magic->str, "pir"))
    return pir_fail(c, "not a PIR program (no \"base_code\": {\"magic\": \"pir\"})");
  const fe_jnode *regions = jget(c, jget(c, root, "program"), "regions");
  if (!is_kind(regions, FE_JARRAY) || regions->n != 1)
    return pir_fail(c, "%d regions (one is supported)", is_kind(regions, FE_JARRAY) ? regions->n : 0);
  const fe_jnode *blocks = jget(c, fe_json_first(c->j, regions), "blocks");
  if (!is_kind(blocks, FE_JARRAY) || blocks->n != 1)
    return pir_fail(c, "%d blocks in the region (one is supported)",
                    is_kind(blocks, FE_JARRAY) ? blocks->n : 0);
  const fe_jnode *b = fe_json_first(c->j, blocks), *args = jget(c, b, "args");
  if (args && (!is_kind(args, FE_JARRAY) || args->n))
    return pir_fail(c, "block arguments are not supported");
  *ops = jget(c, b, "ops");
  if (!is_kind(*ops, FE_JARRAY) || (*ops)->n == 0)
    return pir_fail(c, "the block has no ops");
  return DY_OK;
}

/* The largest value id any op writes, bounded (by PIR_MAX_VALUES and by
 * 64 per op: Paddle numbers its values from 1 in order). */
static dy_status count_values(pir_ctx *c, int n_ops) {
  int64_t max = 0;
  for (int k = 0; k < n_ops; k++) {
    const fe_jnode *o = jget(c, c->ops[k], "O");
    const fe_jnode *v = is_kind(o, FE_JOBJECT) ? o : fe_json_first(c->j, o);
    for (; v; v = is_kind(o, FE_JOBJECT) ? NULL : fe_json_next(c->j, v)) {
      const fe_jnode *id = jget(c, v, "%");
      if (is_kind(id, FE_JNUMBER) && id->is_int && id->i > max)
        max = id->i;
    }
  }
  if (max >= PIR_MAX_VALUES || max > 64 * (int64_t)n_ops + 1024)
    return pir_fail(c, "value id %lld, more than the reader takes for %d ops", (long long)max,
                    n_ops);
  c->n_vals = (int)max + 1;
  c->vals = calloc((size_t)c->n_vals, sizeof *c->vals);
  return c->vals ? DY_OK : pir_fail(c, "out of memory");
}

static dy_status translate(pir_ctx *c, PdProgram *prog) {
  const fe_jnode *ops = NULL;
  PD_TRY(find_ops(c, &ops));
  int n_ops = ops->n;
  const fe_jnode **list = malloc((size_t)n_ops * sizeof *list);
  if (!list)
    return pir_fail(c, "out of memory");
  int k = 0;
  for (const fe_jnode *e = fe_json_first(c->j, ops); e; e = fe_json_next(c->j, e))
    list[k++] = e;
  c->ops = list;
  dy_status s = count_values(c, n_ops);
  if (!s) {
    PdBlock *b = pdx_alloc(&c->x, sizeof *b);
    if (!b) {
      free(list);
      return pir_fail(c, "out of memory");
    }
    paddle__framework__proto__block_desc__init(b);
    b->idx = 0;
    b->parent_idx = -1;
    pdx_push(&c->x, &prog->n_blocks, (void ***)&prog->blocks, b);
    c->blk = b;
    PdVar *fv = pdx_var(&c->x, b, "feed", PD_FEED_MINIBATCH, NULL);
    PdVar *tv = pdx_var(&c->x, b, "fetch", PD_FETCH_LIST, NULL);
    if (fv && tv)
      fv->has_persistable = tv->has_persistable = fv->persistable = tv->persistable = true;
    pre_name(c, n_ops);
  }
  for (k = 0; !s && k < n_ops; k++) {
    char fn[128];
    const fe_jnode *nm = jget(c, list[k], "#");
    full_name(is_kind(nm, FE_JSTRING) ? nm->str : "?", fn, sizeof fn);
    c->op_index = k;
    c->op_name = fn;
    if (!is_kind(list[k], FE_JOBJECT))
      s = pir_fail(c, "an op that is not an object");
    else
      s = translate_op(c, k);
    c->op_name = NULL;
  }
  for (int i = 1; !s && i < c->n_vals; i++)
    if (c->vals[i].kind == V_PENDING)
      s = pir_fail(c, "value %%%d (a list) is never taken apart by builtin.split", i);
  if (!s && c->x.oom)
    s = pir_fail(c, "out of memory");
  free(list);
  return s;
}

dy_status pd_pir_to_desc(const uint8_t *json, size_t n, const char *name, uint8_t **desc,
                         size_t *desc_n, dy_error *err) {
  *desc = NULL;
  *desc_n = 0;
  fe_json j;
  name = name ? name : "<PIR program>";
  PD_TRY(fe_json_parse(json, n, name, &j, err));
  pir_ctx c = {.x = {.err = err}, .j = &j, .name = name, .err = err};
  PdProgram prog;
  paddle__framework__proto__program_desc__init(&prog);
  dy_status s = translate(&c, &prog);
  if (!s) {
    *desc_n = paddle__framework__proto__program_desc__get_packed_size(&prog);
    *desc = malloc(*desc_n ? *desc_n : 1);
    if (*desc)
      paddle__framework__proto__program_desc__pack(&prog, *desc);
    else
      s = dy_error_set(err, DY_STATUS_OUT_OF_MEMORY, "%s: out of memory", name);
  }
  free(c.vals);
  pdx_free(&c.x);
  fe_json_free(&j);
  return s;
}
