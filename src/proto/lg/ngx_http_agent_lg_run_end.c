
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"
#include "ngx_http_agent_ops.h"


/*
 * The end of a run of the LangGraph API (lg_run.c), its turn done:
 * what is stored of it, then its answer.
 */


static ngx_int_t ngx_http_agent_lg_run_keep_error(ngx_http_agent_lg_run_t *lr,
    ngx_http_agent_event_t *ev);
static void ngx_http_agent_lg_run_webhook(ngx_http_agent_lg_run_t *lr,
    ngx_http_agent_event_t *ev);


/*
 * the run's end, before the record's (turn_record.c): its error kept
 * with the rest, for any run (a join after the end still says how), and
 * its kept events saved
 */

void
ngx_http_agent_lg_run_done(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_lg_run_t *lr = ngx_http_agent_turn_in(turn)->data;

    ngx_http_agent_turn_info(turn, &lr->info);

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR
        && ngx_http_agent_lg_run_keep_error(lr, ev) != NGX_OK)
    {
        ngx_log_error(NGX_LOG_ERR, lr->request->connection->log, 0,
                      "agent: the error of run \"%V\" could not be kept",
                      lr->info.run_id);
    }

    lr->finished = 1;

    if (ngx_http_agent_turn_kept_save(&lr->kept, lr->info.wsc,
                                      lr->info.run_id)
        != NGX_OK)
    {
        ngx_log_error(NGX_LOG_ERR, lr->request->connection->log, 0,
                      "agent: the events of run \"%V\" could not be saved",
                      lr->info.run_id);
    }

    if (lr->webhook.len) {
        ngx_http_agent_lg_run_webhook(lr, ev);
    }
}


/*
 * its webhook: the run as GET /threads/{id}/runs/{run_id} answers it,
 * ended, and its thread's values
 */

static void
ngx_http_agent_lg_run_webhook(ngx_http_agent_lg_run_t *lr,
    ngx_http_agent_event_t *ev)
{
    u_char                      now[32];
    ngx_str_t                   body;
    ngx_http_request_t         *r;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_run_row_t    row;
    ngx_http_agent_loc_conf_t  *alcf;

    r = lr->request;
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    row = lr->record.row;
    row.run_id = *lr->info.run_id;
    row.thread_id = *lr->info.session_id;
    row.updated_at.data = now;
    row.updated_at.len = ngx_http_agent_store_now(now) - now;

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        ngx_str_set(&row.status, "error");

    } else if (lr->record.cancelled || lr->info.interrupted) {
        ngx_str_set(&row.status, "interrupted");

    } else {
        ngx_str_set(&row.status, "success");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return;
    }

    ngx_http_agent_lg_run_fields(j, &row);
    ngx_http_agent_json_key(j, "values");
    ngx_http_agent_lg_values(j, lr->info.run, lr->info.session_id, 1);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &body) != NGX_OK
        || ngx_http_agent_webhook_send(alcf->webhooks, &lr->webhook, &body,
                                       NULL, lr->info.run_id,
                                       r->connection->log)
           != NGX_OK)
    {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "agent: the webhook of run \"%V\" is not called",
                      lr->info.run_id);
    }
}


/* runs/wait: the thread's values at the end (an error: its JSON) */

ngx_int_t
ngx_http_agent_lg_run_answer(ngx_http_agent_turn_t *turn,
    ngx_http_agent_event_t *ev)
{
    ngx_http_agent_lg_run_t *lr = ngx_http_agent_turn_in(turn)->data;

    ngx_http_request_t     *r;
    ngx_http_agent_json_t  *j;

    r = lr->request;
    ngx_http_agent_turn_info(turn, &lr->info);

    if (lr->background) {
        if (lr->answered) {
            /* answered when it began */
            return NGX_OK;
        }

        /* it ended inside its start, before its record could go */
        r->keepalive = 0;
        lr->answered = 1;

        return ngx_http_agent_lg_run_created(r, lr);
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ev->type == NGX_HTTP_AGENT_EV_ERROR) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "__error__");
        ngx_http_agent_lg_error(j, ev->code, ev->text);
        ngx_http_agent_json_end(j);

    } else if (lr->info.interrupted) {
        /* the last values event of the stream: the interrupt alone */
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "__interrupt__");
        ngx_http_agent_lg_interrupts(j, &lr->info.run->interrupt);
        ngx_http_agent_json_end(j);

    } else {
        ngx_http_agent_lg_values(j, lr->info.run, lr->info.session_id,
                                 1);
    }

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


static ngx_int_t
ngx_http_agent_lg_run_keep_error(ngx_http_agent_lg_run_t *lr,
    ngx_http_agent_event_t *ev)
{
    ngx_str_t               name, json;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_json_create(lr->request->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_lg_error(j, ev->code, ev->text);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_str_set(&name, "error");

    /* the number the stream gives it next */
    return ngx_http_agent_turn_kept_add(&lr->kept, lr->request,
                                        lr->info.run_id, lr->seq + 1, &name,
                                        &json);
}
