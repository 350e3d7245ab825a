
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_FUZZ_COMMON_H_INCLUDED_
#define _NGX_FUZZ_COMMON_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/* a log that never prints: the fuzzers look for crashes, not messages */
static ngx_log_t  ngx_fuzz_log = { 0 };


#define ngx_fuzz_check(cond)                                                  \
    if (!(cond)) {                                                            \
        fprintf(stderr, "check failed: %s at %s:%d\n", #cond, __FILE__,      \
                __LINE__);                                                    \
        abort();                                                              \
    }


#endif /* _NGX_FUZZ_COMMON_H_INCLUDED_ */
