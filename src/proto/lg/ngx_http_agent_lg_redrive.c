
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"


/*
 * A run of the LangGraph API taken over from a worker that died
 * (turn_redrive.c): its request made again from the run's kwargs (the
 * body it was created with), on its thread's stream route, without its
 * input: an input-less run continues the thread where its last
 * checkpoint goes next, as LangGraph's does.  Its client is gone: it
 * goes on (on_disconnect "continue"), its events kept after the last the
 * lost worker kept, under the same run id.
 */


/* what of a run's request a take-over does not ask again */
static char  *ngx_http_agent_lg_redrive_drop[] = {
    "input", "command", "checkpoint", "checkpoint_id", "after_seconds",
    "if_not_exists", "multitask_strategy", "on_disconnect", NULL
};


ngx_int_t
ngx_http_agent_lg_redrive_request(ngx_http_request_t *r,
    ngx_http_agent_run_row_t *row, ngx_str_t *uri, ngx_str_t *body)
{
    u_char                     *p;
    size_t                      i;
    ngx_uint_t                  k;
    yajl_val                    v;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    if (row->run_id.len != 36 || row->kwargs.len == 0) {
        return NGX_DECLINED;
    }

    v = ngx_http_agent_json_parse(r->pool, row->kwargs.data,
                                  row->kwargs.len, NULL);
    if (v == NULL || !YAJL_IS_OBJECT(v)) {
        return NGX_DECLINED;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }


    for (i = 0; i < v->u.object.len; i++) {
        for (k = 0; ngx_http_agent_lg_redrive_drop[k]; k++) {
            if (ngx_strcmp(v->u.object.keys[i],
                           ngx_http_agent_lg_redrive_drop[k])
                == 0)
            {
                break;
            }
        }

        if (ngx_http_agent_lg_redrive_drop[k] == NULL) {
            ngx_http_agent_json_cstr(j, v->u.object.keys[i]);
            ngx_http_agent_json_val(j, v->u.object.values[i]);
        }
    }

    ngx_http_agent_json_key(j, "on_disconnect");
    ngx_http_agent_json_cstr(j, "continue");
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, body) != NGX_OK) {
        return NGX_ERROR;
    }

    /* the thread's stream route, under the location */

    uri->data = ngx_pnalloc(r->pool, alcf->location.len
                                     + sizeof("/threads//runs/stream") - 1
                                     + row->thread_id.len);
    if (uri->data == NULL) {
        return NGX_ERROR;
    }

    /* its thread named as its owner's client names it (row->owner) */
    p = ngx_sprintf(uri->data, "%V/threads/%*s/runs/stream", &alcf->location,
                    ngx_http_agent_store_id_shown(&row->thread_id),
                    row->thread_id.data);
    uri->len = p - uri->data;

    return NGX_OK;
}


/* the turn of the run taken over: its id, its events, no client */

void
ngx_http_agent_lg_redrive_turn(ngx_http_agent_lg_run_t *lr,
    ngx_http_agent_run_row_t *row, ngx_http_agent_turn_in_t *in)
{
    ngx_http_agent_turn_id(lr->turn, row->run_id.data);

    lr->seq = row->last_event;
    lr->keep = 1;
    lr->gone = 1;

    lr->record.claimed = 1;
    lr->record.row.kwargs = row->kwargs;
    lr->record.row.metadata = row->metadata;
    lr->record.row.multitask_strategy = row->multitask_strategy;
    lr->record.row.writes = row->writes;

    /* the input step was saved by the lost worker */
    in->before = 0;
    in->json = 0;

    /*
     * and its start kept, and the values of the step it goes on from: a
     * join shows them once (a lost worker that kept none: sent here)
     */
    in->again = (row->last_event > 0);
}
