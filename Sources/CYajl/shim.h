#ifndef FEEDINGEST_CYAJL_SHIM_H
#define FEEDINGEST_CYAJL_SHIM_H
// yajl 2 (Debian's libyajl-dev): the streaming parser only; StreamingJSON builds its own events on top.
#include <yajl/yajl_parse.h>

// yajl_config is variadic, which Swift cannot call: one wrapper per argument type. Every option yajl 2.1 has
// takes one int that switches it on (non-zero) or off. Returns yajl_config's result: zero on error.
static inline int cyajl_config_flag(yajl_handle handle, yajl_option option, int on) {
    return yajl_config(handle, option, on);
}
#endif
