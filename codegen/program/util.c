/* util.c - floor 3, at its bottom: the driver's small helpers that every
 * other file of program/ uses: C argument lists wrapped at 80 columns
 * (cg_put_wrapped) and malloc'd strings for them, the size arguments a
 * kernel or NAME_run takes (batch, dim_<sym>), sizes of vars at the bounds,
 * kernel names (k<id>_<op>_<shape>), the banner every generated file opens
 * with and the parameter list of NAME_run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_program.h"

/* Has t a dynamic dim (the batch or a size expression)? */
bool cg_type_dynamic(const dy_type *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] < 0)
      return true;
  return false;
}

/* Bytes of a var at the size bounds (max batch; every other symbol's
 * bound), as the memory plan sized it; -1 if that overflows. */
int64_t cg_var_bytes(const cg_gen *g, const dy_var *v) {
  int64_t n;
  if (!dy_type_numel_eval(&v->type, g->bounds, &n))
    return -1;
  return n * (int64_t)dy_dtype_size(v->type.dtype);
}

/* "SEQ" for symbol seq: its macros are NAME_MAX_DIM_SEQ. */
const char *cg_sym_upper(int sym, char *buf, size_t n) {
  snprintf(buf, n, "%s", dy_sym_name(sym));
  for (char *c = buf; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  return buf;
}

/* Upper-case names the C and POSIX headers use or reserve as a whole or
 * as a prefix followed by '_' (<unistd.h>'s F_OK R_OK W_OK X_OK,
 * <fcntl.h>'s F_ O_ S_, <signal.h>'s SA_ SI_ SIG..., <sys/socket.h>,
 * <sys/mman.h>, <time.h>, <locale.h>, <stdlib.h>'s EXIT_, C11's ATOMIC_
 * and MEMORY_ORDER_, ...), and DY, the runtime's own prefix. */
static const char *const reserved_prefixes[] = {
    "F", "O", "S", "R", "W", "X", "DY", "SIG", "SA", "SI", "SS", "SV", "BUS", "CLD", "FPE", "ILL", "POLL", "SEGV", "TRAP",
    "INT", "UINT", "PRI", "SCN", "LC", "FE", "FP", "MATH", "TIME", "TIMER", "CLOCK", "ATOMIC",
    "MEMORY", "SEEK", "EXIT", "PTHREAD", "SEM", "AF", "PF", "SO", "SOL", "MSG", "SCM", "SHUT",
    "IN", "IP", "IPPROTO", "INADDR", "MAP", "PROT", "MS", "MCL", "POSIX", "RTLD", "REG", "GLOB",
    "FNM", "LOG", "WNOHANG", "STDIN", "STDOUT", "STDERR", "PATH", "NAME", "LINE", "BUFSIZ",
    "FILENAME", "TMP", "RAND", "MB", "CHAR", "SCHAR", "UCHAR", "SHRT", "USHRT", "LONG",
    "ULONG", "LLONG", "ULLONG", "FLT", "DBL", "LDBL", "WCHAR", "WINT", "SIZE", "PTRDIFF",
};

/* The prefix of the model's macros and enumerators (NAME_OK,
 * NAME_NUM_INPUTS, ...): the name in upper case, or DY_M_ and it when
 * that could be a name the C or POSIX headers define or reserve (a model
 * named r would declare R_OK, <unistd.h>'s): a leading '_', or one of
 * reserved_prefixes (whole, or before a '_'). <errno.h>'s E<letter>
 * names are not avoided: no E name ends in the suffixes the model's
 * macros use (_OK, _MAX_BATCH, ...), and a rule for them would rename
 * every model whose name starts with E. Into buf (n bytes). */
const char *cg_macro_prefix(const char *name, char *buf, size_t n) {
  char up[256];
  snprintf(up, sizeof up, "%s", name);
  for (char *c = up; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  bool risky = !up[0] || up[0] == '_';
  for (size_t i = 0; !risky && i < sizeof reserved_prefixes / sizeof *reserved_prefixes; i++) {
    size_t k = strlen(reserved_prefixes[i]);
    risky = strncmp(up, reserved_prefixes[i], k) == 0 && (up[k] == 0 || up[k] == '_');
  }
  snprintf(buf, n, "%s%s", risky ? "DY_M_" : "", up);
  return buf;
}

/* ", seq 128" (sep " ") or ", seq = 128" for each symbol but the batch. */
void cg_put_named_bounds(const cg_gen *g, dy_buf *out, const char *sep) {
  for (int k = 0; k < g->n_named; k++)
    dy_buf_printf(out, ", %s%s%lld", dy_sym_name(g->named[k]), sep,
                  (long long)g->bounds[g->named[k]]);
}


/* Shape for a kernel name: "4x256", "Bx10" (B the batch), "BxSx8" (S a
 * size symbol's initial, seq), "Ex8" (E an expression), "scalar". */
static void shape_tag(const dy_type *t, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  if (t->rank == 0) {
    snprintf(buf, n, "scalar");
    return;
  }
  for (int i = 0; i < t->rank && k < n; i++) {
    int sym = dy_dim_single_sym(t->shape[i]);
    if (t->shape[i] == -1)
      k += (size_t)snprintf(buf + k, n - k, "%sB", i ? "x" : "");
    else if (sym > 0) /* "S" for seq: the symbol's initial, upper case */
      k += (size_t)snprintf(buf + k, n - k, "%s%c", i ? "x" : "",
                            (char)(dy_sym_name(sym)[0] >= 'a' && dy_sym_name(sym)[0] <= 'z'
                                       ? dy_sym_name(sym)[0] - 'a' + 'A'
                                       : dy_sym_name(sym)[0]));
    else if (t->shape[i] < 0) /* an expression of symbols */
      k += (size_t)snprintf(buf + k, n - k, "%sE", i ? "x" : "");
    else
      k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "",
                            (long long)t->shape[i]);
  }
}

void cg_kernel_name(const dy_program *p, const dy_op *op, char *buf,
                        size_t n) {
  char tag[160] = "scalar";
  if (op->n_outputs > 0)
    shape_tag(&p->vars[op->outputs[0]]->type, tag, sizeof tag);
  snprintf(buf, n, "k%d_%s_%s", op->id, dy_op_name(op->kind), tag);
}

/* Append a C call or declaration "head(arg, arg, ...)tail", wrapping the
 * arguments at 80 columns under the open parenthesis. */
void cg_put_wrapped(dy_buf *out, const char *indent, const char *head,
                        char **args, int n, const char *tail) {
  size_t col = strlen(indent) + strlen(head) + 1;
  size_t open_col = col;
  dy_buf_printf(out, "%s%s(", indent, head);
  for (int i = 0; i < n; i++) {
    size_t w = strlen(args[i]) + (i + 1 < n ? 1 : strlen(tail) + 1);
    if (i > 0) {
      if (col + 1 + w > 80) {
        dy_buf_printf(out, "\n%*s", (int)open_col, "");
        col = open_col;
      } else {
        dy_buf_putc(out, ' ');
        col++;
      }
    }
    dy_buf_puts(out, args[i]);
    col += strlen(args[i]);
    if (i + 1 < n) {
      dy_buf_putc(out, ',');
      col++;
    }
  }
  dy_buf_printf(out, ")%s", tail);
}

void cg_free_args(char **args, int n) {
  for (int i = 0; i < n; i++)
    free(args[i]);
}

char *cg_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

char *cg_xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s)
    return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* Append the size arguments a kernel of these symbols takes: "batch",
 * "dim_seq", ... (decl: with "int64_t "). */
int cg_sym_args(const cg_gen *g, uint64_t mask, bool decl, char **args, int n) {
  if (mask & 1)
    args[n++] = cg_xstrdup(decl ? "int64_t batch" : "batch");
  for (int k = 0; k < g->n_named; k++)
    if (mask >> g->named[k] & 1)
      args[n++] = cg_xprintf("%sdim_%s", decl ? "int64_t " : "", dy_sym_name(g->named[k]));
  return n;
}

const char *cg_basename_of(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}


void cg_put_banner(cg_gen *g, dy_buf *out, const char *what) {
  const dy_codegen_options *opt = g->opt;
  dy_buf_printf(out, "/* %s.%s - generated by dy2stc " DY_VERSION_STRING
                ". Do not edit.\n", g->lower, what);
  dy_buf_puts(out, " *\n * command: ");
  dy_buf_put_comment(out, opt->command_line ? opt->command_line : "(not given)");
  dy_buf_puts(out, "\n * model:   ");
  dy_buf_put_comment(out, opt->source ? opt->source : "(not given)");
  dy_buf_putc(out, '\n');
}

/* {2, -1, 8}: -1 for every dynamic dim (the batch or a size expression). */
void cg_put_shape_list(dy_buf *out, const dy_type *t) {
  dy_buf_putc(out, '{');
  for (int d = 0; d < t->rank; d++)
    dy_buf_printf(out, "%s%lld", d ? ", " : "", (long long)(t->shape[d] < 0 ? -1 : t->shape[d]));
  if (t->rank == 0)
    dy_buf_putc(out, '0');
  dy_buf_putc(out, '}');
}

bool cg_sym_rt(const cg_gen *g, int sym) {
  return sym > 0 && sym < DY_MAX_SYMS && (g->rt_mask >> sym & 1);
}

/* "float", "const int64_t" ... and the parameter list of NAME_run: a
 * symbol a kernel sets is a pointer NAME_run writes its value to. */
int cg_run_params(cg_gen *g, char **args) {
  const dy_program *p = g->p;
  int n = 0;
  if (g->state_bytes > 0)
    args[n++] = cg_xstrdup("void *state");
  args[n++] = cg_xstrdup("void *arena");
  args[n++] = cg_xstrdup("int64_t batch");
  for (int k = 0; k < g->n_named; k++)
    if (g->sym_mask >> g->named[k] & 1)
      args[n++] = cg_xprintf("int64_t %sdim_%s%s", cg_sym_rt(g, g->named[k]) ? "*" : "",
                             dy_sym_name(g->named[k]), cg_sym_rt(g, g->named[k]) ? "_out" : "");
  for (int i = 0; i < p->n_feeds; i++)
    args[n++] = cg_xprintf("const %s *%s", dy_ctype(p->vars[p->feeds[i]]->type.dtype),
                           g->param_in[i]);
  for (int i = 0; i < p->n_fetches; i++)
    args[n++] = cg_xprintf("%s *%s", dy_ctype(p->vars[p->fetches[i]]->type.dtype),
                           g->param_out[i]);
  return n;
}

bool cg_args_ok(char **args, int n) {
  for (int i = 0; i < n; i++)
    if (!args[i])
      return false;
  return true;
}
