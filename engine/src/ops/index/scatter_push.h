// Push constants of scatter.comp (indexed_add, indexed_put): the index geometry of
// index_push.h, plus indexed_add's running sums and first-touch flags.
#ifndef NXV_SCATTER_PUSH_H
#define NXV_SCATTER_PUSH_H
#include "index_push.h"

NXV_STRUCT(ScatterPush) {
  IndexPush base;
  NXV_ADDR sums_addr;
  NXV_ADDR seen_addr;
};

#endif
