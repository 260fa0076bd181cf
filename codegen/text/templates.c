/* templates.c - pasting a template of codegen/rt/ (see templates.h). */
#include <string.h>

#include "cg_text.h"
#include "templates.h"

/* The placeholder of subs that starts at s, or NULL. */
static const dy_tpl_sub *sub_at(const char *s, const dy_tpl_sub *subs, int n_subs) {
  for (int i = 0; i < n_subs; i++)
    if (subs[i].name[0] == s[0] && strncmp(s, subs[i].name, strlen(subs[i].name)) == 0)
      return &subs[i];
  return NULL;
}

void dy_tpl_put(dy_buf *out, const char *const *lines, int from, int to,
                const dy_tpl_sub *subs, int n_subs) {
  for (int i = from; lines[i] && (to < 0 || i < to); i++) {
    const char *s = lines[i], *run = s;
    while (n_subs > 0 && *s) {
      const dy_tpl_sub *sub = sub_at(s, subs, n_subs);
      if (!sub) {
        s++;
        continue;
      }
      dy_buf_putn(out, run, (size_t)(s - run));
      dy_buf_puts(out, sub->value);
      s += strlen(sub->name);
      run = s;
    }
    dy_buf_puts(out, run);
  }
}

int dy_tpl_section_line(const dy_tpl_section *sections, const char *name) {
  int i = 0;
  for (; sections[i].name; i++)
    if (name && strcmp(sections[i].name, name) == 0)
      return sections[i].line;
  return name ? -1 : sections[i].line;
}
