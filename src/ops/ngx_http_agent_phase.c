
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <time.h>

#include "ngx_http_agent_ops.h"


/*
 * Where a turn's time goes (make bench, docs/performance.md): the bench
 * starts nginx with NGX_AGENT_PHASES=PREFIX (passed by its env directive)
 * and each worker keeps the last samples of each phase of its turns, in
 * ns, and writes them to PREFIX.PID as it exits.  Unset, a phase point is
 * one test of ngx_http_agent_phase_on: nothing is timed or kept.
 */


#define NGX_HTTP_AGENT_PHASE_SAMPLES  16384


typedef struct {
    ngx_uint_t                   n;
    uint32_t                     ns[NGX_HTTP_AGENT_PHASE_SAMPLES];
} ngx_http_agent_phase_ring_t;


static ngx_int_t ngx_http_agent_phase_init_process(ngx_cycle_t *cycle);
static void ngx_http_agent_phase_exit_process(ngx_cycle_t *cycle);


ngx_uint_t                       ngx_http_agent_phase_on;
static char                     *ngx_http_agent_phase_prefix;
static ngx_http_agent_phase_ring_t
    ngx_http_agent_phase_rings[NGX_HTTP_AGENT_PHASES];

static const char  *ngx_http_agent_phase_names[NGX_HTTP_AGENT_PHASES] = {
    "parse", "begin", "request", "curl", "answer", "sql", "read", "write",
    "event", "end"
};


static ngx_http_module_t  ngx_http_agent_phase_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};


ngx_module_t  ngx_http_agent_phase_module = {
    NGX_MODULE_V1,
    &ngx_http_agent_phase_module_ctx,      /* module context */
    NULL,                                  /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    ngx_http_agent_phase_init_process,     /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    ngx_http_agent_phase_exit_process,     /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_int_t
ngx_http_agent_phase_init_process(ngx_cycle_t *cycle)
{
    ngx_http_agent_phase_prefix = getenv("NGX_AGENT_PHASES");

    ngx_http_agent_phase_on = (ngx_http_agent_phase_prefix != NULL
                               && ngx_http_agent_phase_prefix[0] != '\0');

    return NGX_OK;
}


uint64_t
ngx_http_agent_phase_clock(void)
{
    struct timespec  ts;

    (void) clock_gettime(CLOCK_MONOTONIC, &ts);

    return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}


void
ngx_http_agent_phase_add(ngx_uint_t phase, uint64_t start)
{
    if (start) {
        ngx_http_agent_phase_put(phase, ngx_http_agent_phase_clock() - start);
    }
}


void
ngx_http_agent_phase_put(ngx_uint_t phase, uint64_t ns)
{
    ngx_http_agent_phase_ring_t  *ring;

    ring = &ngx_http_agent_phase_rings[phase];

    ring->ns[ring->n++ % NGX_HTTP_AGENT_PHASE_SAMPLES] =
        (uint32_t) ngx_min(ns, (uint64_t) NGX_MAX_UINT32_VALUE);
}


/* at exit only, so a plain write: nothing waits on this worker any more */

static void
ngx_http_agent_phase_exit_process(ngx_cycle_t *cycle)
{
    FILE                         *f;
    ngx_uint_t                    i, k, n, from;
    ngx_http_agent_phase_ring_t  *ring;
    u_char                        path[NGX_MAX_PATH];

    if (!ngx_http_agent_phase_on) {
        return;
    }

    ngx_snprintf(path, sizeof(path) - 1, "%s.%P%Z",
                 ngx_http_agent_phase_prefix, ngx_pid);

    f = fopen((char *) path, "w");
    if (f == NULL) {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, ngx_errno,
                      "fopen(\"%s\") failed", path);
        return;
    }

    for (i = 0; i < NGX_HTTP_AGENT_PHASES; i++) {
        ring = &ngx_http_agent_phase_rings[i];
        n = ngx_min(ring->n, NGX_HTTP_AGENT_PHASE_SAMPLES);

        /* the oldest kept first: make bench-phases' long mode reads turns */
        from = ring->n - n;

        fprintf(f, "%s count %lu\n", ngx_http_agent_phase_names[i],
                (unsigned long) ring->n);

        for (k = 0; k < n; k++) {
            fprintf(f, "%s %u\n", ngx_http_agent_phase_names[i],
                    ring->ns[(from + k) % NGX_HTTP_AGENT_PHASE_SAMPLES]);
        }
    }

    fclose(f);
}
