/* conv_geom.c - floor 1, at its bottom: the geometry of a conv2d-shaped op
 * (dy_cg_conv_geom: channels, sizes, kernel, strides, dilations, padding,
 * groups) from its types and attributes, which every convolution kernel
 * builder (emit_conv.c, emit_depthwise.c, dwpw_band.c, ...) reads. */
#include "cg_kernels.h"

dy_cg_conv_geom dy_cg_conv_geom_of(const dy_program *p, const dy_op *op) {
  const dy_type *x = &p->vars[op->inputs[0]]->type, *w = &p->vars[op->inputs[1]]->type;
  const dy_type *y = &p->vars[op->outputs[0]]->type;
  dy_conv2d_attrs a = dy_conv2d_attrs_get(op); /* conv2d's view of the three */
  dy_conv_geom g = dy_conv2d_geom(x, w, &a);
  return (dy_cg_conv_geom){
      .c = x->shape[1], .h = x->shape[2], .w = x->shape[3],
      .o = y->shape[1], .oh = y->shape[2], .ow = y->shape[3],
      .kh = w->shape[2], .kw = w->shape[3],
      .sh = g.sh, .sw = g.sw, .dh = g.dh, .dw = g.dw,
      .pt = g.pt, .pl = g.pl,
      .groups = g.groups};
}
