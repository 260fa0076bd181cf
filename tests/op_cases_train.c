/* op_cases_train.c - op table cases for the training family
 * (ir/ops_train.def): sgd, momentum, adam, adamw, batch_norm_stats.
 *
 * These ops update their first inputs in place; test_ops.c compares the
 * updated state eager vs the static executor (see its header). Hand-
 * computed values check output 0 (the parameter, or the running mean);
 * tests/test_optim.c checks every state over several steps against a
 * double reference. Random cases draw inputs in [0.1, 0.9) where a
 * state must stay meaningful (second moments >= 0, beta pows < 1).
 */
#include "op_table.h"

#define BY_HAND(x) .expect = (x), .n_expect = (int)(sizeof(x) / sizeof((x)[0]))
/* every attribute spelled out, as a Program's op carries them */
#define SGD(wd) .n_attrs = 1, .attrs = {DY_ATTR_F("weight_decay", wd)}
#define MOM(mu, nesterov, wd)                                                   \
  .n_attrs = 3, .attrs = {DY_ATTR_F("mu", mu), DY_ATTR_I("use_nesterov", nesterov), \
                          DY_ATTR_F("weight_decay", wd)}
#define ADAM(b1, b2, eps, wd)                                                \
  .n_attrs = 4, .attrs = {DY_ATTR_F("beta1", b1), DY_ATTR_F("beta2", b2),   \
                          DY_ATTR_F("epsilon", eps), DY_ATTR_F("weight_decay", wd)}
#define ADAMW(b1, b2, eps, coeff)                                            \
  .n_attrs = 4, .attrs = {DY_ATTR_F("beta1", b1), DY_ATTR_F("beta2", b2),   \
                          DY_ATTR_F("epsilon", eps), DY_ATTR_F("coeff", coeff)}
#define BNS(m) .n_attrs = 1, .attrs = {DY_ATTR_F("momentum", m)}

static const float lr01[] = {0.1f};

/* sgd: p - 0.1 g; with weight_decay 0.5, g + 0.5 p = [1, 0, 0.5] */
static const float sgd_p[] = {1, 2, -3}, sgd_g[] = {0.5f, -1, 2};
static const float sgd_expect[] = {0.95f, 2.1f, -3.2f};
static const float sgd_wd_expect[] = {0.9f, 2.0f, -3.05f};

/* momentum 0.9: v = [1.45, 0.1]; p - 0.1 v; nesterov: p - 0.1 (g + 0.9 v) */
static const float mom_p[] = {1, 2}, mom_v[] = {0.5f, -1}, mom_g[] = {1, 1};
static const float mom_expect[] = {0.855f, 1.99f};
static const float mom_nesterov_expect[] = {0.7695f, 1.891f};

/* adam's first step from zero moments: m_hat = g, v_hat = g^2, so
 * p - 0.1 * g / |g| (epsilon aside); adamw first decays p by 1 - 0.1*0.01 */
static const float adam_p[] = {1, -1}, adam_zero[] = {0, 0}, adam_g[] = {2, -0.5f};
static const float one[] = {1};
static const float adam_expect[] = {0.9f, -0.9f};
static const float adamw_expect[] = {0.899f, -0.899f};

/* batch_norm_stats over x [2, 2, 1, 1] = channel 0 {1, 3}, channel 1
 * {10, 20}: means 2, 15, biased variances 1, 25; momentum 0.9 */
static const float bn_rm[] = {0, 1}, bn_rv[] = {1, 1}, bn_x[] = {1, 10, 3, 20};
static const float bn_expect[] = {0.2f, 2.4f};

#define ADAM_IN(pt) .n_in = 7, .in = {pt, pt, pt, F32(1, 1), F32(1, 1), pt, SCALAR_F32}

static const dy_op_case cases[] = {
    /* ---- sgd ---- */
    {.label = "sgd by hand", .kind = DY_OP_SGD, .n_in = 3,
     .in = {F32(1, 3), F32(1, 3), SCALAR_F32}, .data = {sgd_p, sgd_g, lr01},
     SGD(0.0), BY_HAND(sgd_expect)},
    {.label = "sgd weight_decay by hand", .kind = DY_OP_SGD, .n_in = 3,
     .in = {F32(1, 3), F32(1, 3), SCALAR_F32}, .data = {sgd_p, sgd_g, lr01},
     SGD(0.5), BY_HAND(sgd_wd_expect)},
    {.label = "sgd [7,13]", .kind = DY_OP_SGD, .n_in = 3,
     .in = {F32(2, 7, 13), F32(2, 7, 13), SCALAR_F32}, SGD(0.0)},
    {.label = "sgd scalar param", .kind = DY_OP_SGD, .n_in = 3,
     .in = {SCALAR_F32, SCALAR_F32, SCALAR_F32}, SGD(0.01)},
    {.label = "sgd grad of another shape is rejected", .kind = DY_OP_SGD, .n_in = 3,
     .in = {F32(1, 3), F32(1, 4), SCALAR_F32}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "sgd lr [1] is rejected (rank 0)", .kind = DY_OP_SGD, .n_in = 3,
     .in = {F32(1, 3), F32(1, 3), F32(1, 1)}, .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "sgd i64 param is rejected", .kind = DY_OP_SGD, .n_in = 3,
     .in = {I64(1, 3), I64(1, 3), SCALAR_F32}, .expect_error = DY_STATUS_DTYPE_MISMATCH},

    /* ---- momentum ---- */
    {.label = "momentum by hand", .kind = DY_OP_MOMENTUM, .n_in = 4,
     .in = {F32(1, 2), F32(1, 2), F32(1, 2), SCALAR_F32}, .data = {mom_p, mom_v, mom_g, lr01},
     MOM(0.9, 0, 0.0),
     BY_HAND(mom_expect)},
    {.label = "momentum nesterov by hand", .kind = DY_OP_MOMENTUM, .n_in = 4,
     .in = {F32(1, 2), F32(1, 2), F32(1, 2), SCALAR_F32}, .data = {mom_p, mom_v, mom_g, lr01},
     MOM(0.9, 1, 0.0),
     BY_HAND(mom_nesterov_expect)},
    {.label = "momentum nesterov weight_decay [5,3,2]", .kind = DY_OP_MOMENTUM, .n_in = 4,
     .in = {F32(3, 5, 3, 2), F32(3, 5, 3, 2), F32(3, 5, 3, 2), SCALAR_F32},
     MOM(0.5, 1, 0.1)},
    {.label = "momentum velocity of another shape is rejected", .kind = DY_OP_MOMENTUM,
     .n_in = 4, .in = {F32(1, 3), F32(2, 3, 1), F32(1, 3), SCALAR_F32},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- adam, adamw ---- */
    {.label = "adam first step by hand", .kind = DY_OP_ADAM, ADAM_IN(F32(1, 2)),
     .data = {adam_p, adam_zero, adam_zero, one, one, adam_g, lr01},
     ADAM(0.9, 0.999, 1e-8, 0.0), BY_HAND(adam_expect)},
    {.label = "adam weight_decay [4,9]", .kind = DY_OP_ADAM, ADAM_IN(F32(2, 4, 9)),
     .lo = 0.1f, .hi = 0.9f, ADAM(0.9, 0.999, 1e-8, 0.05)},
    {.label = "adam rank-0 beta pows", .kind = DY_OP_ADAM, .n_in = 7,
     .in = {F32(1, 6), F32(1, 6), F32(1, 6), SCALAR_F32, SCALAR_F32, F32(1, 6), SCALAR_F32},
     .lo = 0.1f, .hi = 0.9f,
     ADAM(0.8, 0.99, 1e-6, 0.0)},
    {.label = "adam beta1_pow [2] is rejected", .kind = DY_OP_ADAM, .n_in = 7,
     .in = {F32(1, 2), F32(1, 2), F32(1, 2), F32(1, 2), F32(1, 1), F32(1, 2), SCALAR_F32},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "adam moment2 of another shape is rejected", .kind = DY_OP_ADAM, .n_in = 7,
     .in = {F32(1, 2), F32(1, 2), F32(1, 3), F32(1, 1), F32(1, 1), F32(1, 2), SCALAR_F32},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "adamw first step by hand", .kind = DY_OP_ADAMW, ADAM_IN(F32(1, 2)),
     .data = {adam_p, adam_zero, adam_zero, one, one, adam_g, lr01},
     ADAMW(0.9, 0.999, 1e-8, 0.01), BY_HAND(adamw_expect)},
    {.label = "adamw coeff 0.1 [3,3,3]", .kind = DY_OP_ADAMW, ADAM_IN(F32(3, 3, 3, 3)),
     .lo = 0.1f, .hi = 0.9f, ADAMW(0.9, 0.999, 1e-8, 0.1)},
    {.label = "adamw f32 lr of rank 1 is rejected", .kind = DY_OP_ADAMW, .n_in = 7,
     .in = {F32(1, 2), F32(1, 2), F32(1, 2), F32(1, 1), F32(1, 1), F32(1, 2), F32(1, 1)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},

    /* ---- batch_norm_stats ---- */
    {.label = "batch_norm_stats by hand", .kind = DY_OP_BATCH_NORM_STATS, .n_in = 3,
     .in = {F32(1, 2), F32(1, 2), F32(4, 2, 2, 1, 1)}, .data = {bn_rm, bn_rv, bn_x},
     BNS(0.9), BY_HAND(bn_expect)},
    {.label = "batch_norm_stats [B,3,5,7] momentum 0.99", .kind = DY_OP_BATCH_NORM_STATS,
     .n_in = 3, .in = {F32(1, 3), F32(1, 3), F32(4, -1, 3, 5, 7)}, .batch = 3,
     .lo = 0.1f, .hi = 0.9f, BNS(0.99)},
    {.label = "batch_norm_stats [2,4] (no spatial dims)", .kind = DY_OP_BATCH_NORM_STATS,
     .n_in = 3, .in = {F32(1, 4), F32(1, 4), F32(2, 2, 4)}, .lo = 0.1f, .hi = 0.9f, BNS(0.9)},
    {.label = "batch_norm_stats running mean of C+1 is rejected",
     .kind = DY_OP_BATCH_NORM_STATS, .n_in = 3,
     .in = {F32(1, 4), F32(1, 3), F32(4, 2, 3, 2, 2)},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
};

const dy_op_case_list dy_op_cases_train = DY_CASE_LIST(cases);
