/* op_cases_lod.c - op table cases for the LoD family (ir/ops_lod.def):
 * sequence_pool, lstm, gru, sequence_pad, sequence_len, crf_decoding.
 *
 * The offsets are given (random ones would not be offsets): three
 * sequences of 2, 0 and 3 rows, so every case has an empty sequence. The
 * values by hand are test_lod.c's (which also runs the bad offsets); the
 * random cases run the sigmoid / tanh activations and wider rows through
 * every path. No gradients (NODIFF).
 */
#include "op_table.h"

#define EXPECT(arr) .expect = (arr), .n_expect = (int)(sizeof(arr) / sizeof((arr)[0]))
#define POOL(t) .n_attrs = 2, .attrs = {DY_ATTR_S("pooltype", t), DY_ATTR_F("pad_value", -1)}
#define LSTM(rev, g, c, n)                                                              \
  .n_attrs = 5, .attrs = {DY_ATTR_I("use_peepholes", 1), DY_ATTR_I("is_reverse", rev), \
                          DY_ATTR_S("gate_activation", g), DY_ATTR_S("cell_activation", c), \
                          DY_ATTR_S("candidate_activation", n)}
#define GRU(rev, om, g, c)                                                                   \
  .n_attrs = 4, .attrs = {DY_ATTR_I("is_reverse", rev), DY_ATTR_I("origin_mode", om),      \
                          DY_ATTR_S("gate_activation", g), DY_ATTR_S("activation", c)}

static const float x52[] = {1, 8, 3, 4, 5, 6, 9, 2, 7, 10};        /* [5,2] */
static const int64_t off3[] = {0, 2, 2, 5};
static const float sum_y[] = {4, 12, -1, -1, 21, 18};
static const float avg_y[] = {2, 6, -1, -1, 7, 6};

static const float lstm_x[] = {1, 1, 0, 1, 2, 1, 1, 1};            /* [2,4] */
static const int64_t lstm_off[] = {0, 0, 2};
static const float lstm_w[] = {0.5f, 0, 0, 0};
static const float lstm_b[] = {0, 0, 0, 0, 0, 0.5f, 0};
static const float lstm_y[] = {1, 4};

static const float gru_x[] = {0.25f, 1, 2, 0.25f, 0.5f, 4};        /* [2,3] */
static const int64_t gru_off[] = {0, 2};
static const float gru_w[] = {0, 0, 1};
static const float gru_b[] = {0, 0, 0};
static const float gru_y[] = {0.5f, 1.4375f};

static const float pad1[] = {0.5f};
static const float pad_y[] = {1, 8, 3, 4, .5f, .5f, .5f, .5f, .5f, .5f, .5f, .5f,
                              5, 6, 9, 2, 7, 10};

static const float crf_e[] = {1, 0, 0, 0.5f, 0, 3, 2, 1};         /* [4,2] */
static const int64_t crf_off[] = {0, 3, 3, 4};
static const float crf_tr[] = {0, 0, 0, 0, 0, -5, -5, 0};

static const dy_op_case cases[] = {
    {.label = "sequence_pool SUM by hand, an empty sequence", .kind = DY_OP_SEQUENCE_POOL,
     .n_in = 2, .in = {F32(2, 5, 2), I64(1, 4)}, POOL("SUM"), .data = {x52, off3},
     EXPECT(sum_y)},
    {.label = "sequence_pool AVERAGE by hand", .kind = DY_OP_SEQUENCE_POOL, .n_in = 2,
     .in = {F32(2, 5, 2), I64(1, 4)}, POOL("AVERAGE"), .data = {x52, off3}, EXPECT(avg_y)},
    {.label = "sequence_pool MAX [5,3,2]", .kind = DY_OP_SEQUENCE_POOL, .n_in = 2,
     .in = {F32(3, 5, 3, 2), I64(1, 4)}, POOL("MAX"), .data = {NULL, off3}},
    {.label = "sequence_pool SQRT [5,7]", .kind = DY_OP_SEQUENCE_POOL, .n_in = 2,
     .in = {F32(2, 5, 7), I64(1, 4)}, POOL("SQRT"), .data = {NULL, off3}},
    {.label = "sequence_pool LAST", .kind = DY_OP_SEQUENCE_POOL, .n_in = 2,
     .in = {F32(2, 5, 3), I64(1, 4)}, POOL("LAST"), .data = {NULL, off3}},
    {.label = "sequence_pool FIRST", .kind = DY_OP_SEQUENCE_POOL, .n_in = 2,
     .in = {F32(2, 5, 3), I64(1, 4)}, POOL("FIRST"), .data = {NULL, off3}},
    {.label = "sequence_pool pooltype MIN refused", .kind = DY_OP_SEQUENCE_POOL, .n_in = 2,
     .in = {F32(2, 5, 2), I64(1, 4)}, POOL("MIN"), .data = {x52, off3},
     .expect_error = DY_STATUS_INVALID_ARGUMENT},
    {.label = "lstm identity by hand (peephole on the forget gate)", .kind = DY_OP_LSTM,
     .n_in = 4, .in = {F32(2, 2, 4), I64(1, 3), F32(2, 1, 4), F32(2, 1, 7)}, .consts = 12,
     LSTM(0, "identity", "identity", "identity"),
     .data = {lstm_x, lstm_off, lstm_w, lstm_b}, EXPECT(lstm_y)},
    {.label = "lstm D=3 sigmoid/tanh reverse", .kind = DY_OP_LSTM, .n_in = 4,
     .in = {F32(2, 5, 12), I64(1, 4), F32(2, 3, 12), F32(2, 1, 21)}, .consts = 12,
     LSTM(1, "sigmoid", "tanh", "tanh"), .data = {NULL, off3, NULL, NULL}},
    {.label = "lstm D=2 with h0 and c0, relu cell", .kind = DY_OP_LSTM, .n_in = 6,
     .in = {F32(2, 5, 8), I64(1, 4), F32(2, 2, 8), F32(2, 1, 14), F32(2, 3, 2), F32(2, 3, 2)},
     .consts = 12, LSTM(0, "sigmoid", "relu", "tanh"),
     .data = {NULL, off3, NULL, NULL, NULL, NULL}},
    {.label = "lstm bias of 4D with peepholes refused", .kind = DY_OP_LSTM, .n_in = 4,
     .in = {F32(2, 5, 12), I64(1, 4), F32(2, 3, 12), F32(2, 1, 12)}, .consts = 12,
     LSTM(0, "sigmoid", "tanh", "tanh"), .data = {NULL, off3, NULL, NULL},
     .expect_error = DY_STATUS_SHAPE_MISMATCH},
    {.label = "gru identity by hand", .kind = DY_OP_GRU, .n_in = 4,
     .in = {F32(2, 2, 3), I64(1, 2), F32(2, 1, 3), F32(2, 1, 3)}, .consts = 12,
     GRU(0, 0, "identity", "identity"), .data = {gru_x, gru_off, gru_w, gru_b},
     EXPECT(gru_y)},
    {.label = "gru D=3 reverse origin_mode with h0", .kind = DY_OP_GRU, .n_in = 5,
     .in = {F32(2, 5, 9), I64(1, 4), F32(2, 3, 9), F32(2, 1, 9), F32(2, 3, 3)}, .consts = 12,
     GRU(1, 1, "sigmoid", "tanh"), .data = {NULL, off3, NULL, NULL, NULL}},
    {.label = "sequence_pad by hand", .kind = DY_OP_SEQUENCE_PAD, .n_in = 3,
     .in = {F32(2, 5, 2), I64(1, 4), F32(1, 1)}, .consts = 4, .n_attrs = 1,
     .attrs = {DY_ATTR_I("padded_length", 3)}, .data = {x52, off3, pad1}, EXPECT(pad_y)},
    {.label = "sequence_len", .kind = DY_OP_SEQUENCE_LEN, .n_in = 1, .in = {I64(1, 4)},
     .data = {off3}},
    {.label = "crf_decoding K=2", .kind = DY_OP_CRF_DECODING, .n_in = 3,
     .in = {F32(2, 4, 2), I64(1, 4), F32(2, 4, 2)}, .consts = 4,
     .data = {crf_e, crf_off, crf_tr}},
    {.label = "crf_decoding K=5 random", .kind = DY_OP_CRF_DECODING, .n_in = 3,
     .in = {F32(2, 5, 5), I64(1, 4), F32(2, 7, 5)}, .consts = 4, .data = {NULL, off3, NULL}},
};

const dy_op_case_list dy_op_cases_lod = DY_CASE_LIST(cases);
