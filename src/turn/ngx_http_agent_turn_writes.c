
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A step's pending writes, as LangGraph keeps them: each tool call's
 * result is kept as it comes, before its step is saved, so that a run
 * whose worker dies in the middle of a tool round runs again only the
 * calls that had not answered.  A result is an event of the run's with a
 * negative seq (no join reads below 0), "write", of our generator's JSON:
 * the checkpoint its step started from, the call's id, the result.  The
 * re-driver reads them with its claim (turn_redrive.c) into the run's row;
 * the tools node asks for each call of its round by id (services.kept),
 * from the checkpoint the step starts from, and a call kept is answered
 * without running.  They go with the run's end (the store's run_status).
 * A call is claimed first, its result replacing the claim: a claim alone
 * is a call cut while it ran (docs/runs.md, "Exactly once").
 *
 * Only a run a worker can take over keeps them (its location has a
 * re-drive, its run is a row), and not in agent_durability exit, where
 * no step is saved and a lost run starts again (as LangGraph's exit).
 */


/* the writes of a run read back: its last ones first, at most */
#define NGX_HTTP_AGENT_WRITES_MAX   1024

/* below every write's seq: -((step + 2) * 65536 + index + 1) */
#define NGX_HTTP_AGENT_WRITES_FROM  (-((int64_t) 1 << 62))


static ngx_int_t ngx_http_agent_turn_writes_put(ngx_http_agent_turn_t *turn,
    ngx_uint_t index, ngx_str_t *id, ngx_str_t *result);
static ngx_int_t ngx_http_agent_turn_writes_event(void *data, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);


void
ngx_http_agent_turn_writes_keep(ngx_http_agent_run_t *run, ngx_uint_t index,
    ngx_str_t *id, ngx_str_t *result)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_int_t  rc;

    rc = ngx_http_agent_turn_writes_put(turn, index, id, result);

    if (rc == NGX_DECLINED) {
        /* fenced: the run was claimed since, the next node ends it here */
        turn->stale = 1;

    } else if (rc == NGX_ERROR) {
        /* the call is run again if the run is taken over: at least once */
        ngx_log_error(NGX_LOG_WARN, turn->request->connection->log, 0,
                      "agent: the result of tool call \"%V\" of run \"%V\" "
                      "could not be kept before its step", id,
                      &turn->run_id);
    }
}


/*
 * A call claimed before it runs: a take-over that finds it claimed and
 * not answered runs it again only if its tool is idempotent.  Its result
 * replaces the claim (the same seq).  NGX_DECLINED: fenced, the call must
 * not run
 */

ngx_int_t
ngx_http_agent_turn_writes_claim(ngx_http_agent_run_t *run, ngx_uint_t index,
    ngx_str_t *id)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_int_t  rc;

    rc = ngx_http_agent_turn_writes_put(turn, index, id, NULL);

    if (rc == NGX_DECLINED) {
        turn->stale = 1;
        return NGX_DECLINED;
    }

    return NGX_OK;
}


/* a claim (result NULL) or a result kept: NGX_OK when none is to be */

static ngx_int_t
ngx_http_agent_turn_writes_put(ngx_http_agent_turn_t *turn, ngx_uint_t index,
    ngx_str_t *id, ngx_str_t *result)
{
    int64_t                     seq;
    ngx_str_t                   json, name;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(turn->request, ngx_http_agent_module);

    if (turn->in.record == NULL || alcf->redrive == NULL
        || turn->durability == NGX_HTTP_AGENT_DURABILITY_EXIT
        || index >= 65536 || turn->step < -1)
    {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create(turn->request->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "checkpoint");
    ngx_http_agent_json_str(j, &turn->checkpoint_id);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);

    if (result) {
        ngx_http_agent_json_key(j, "result");
        ngx_http_agent_json_str(j, result);
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    /* one seq a call of a step: the same again when a take-over runs it */
    seq = -((turn->step + 2) * 65536 + (int64_t) index + 1);
    ngx_str_set(&name, "write");

    return ngx_http_agent_store_run_event(&turn->wsc, &turn->run_id, seq,
                                          &name, &json);
}


/* a call of the step that answered before the run's worker died */

ngx_int_t
ngx_http_agent_turn_writes_kept(ngx_http_agent_run_t *run, ngx_str_t *id,
    ngx_str_t *result)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_uint_t                   i;
    ngx_array_t                 *writes;
    ngx_http_agent_run_write_t  *w;

    writes = turn->in.record ? turn->in.record->row.writes : NULL;

    if (writes == NULL) {
        return NGX_DECLINED;
    }

    w = writes->elts;

    for (i = 0; i < writes->nelts; i++) {
        if (w[i].id.len == id->len
            && ngx_strncmp(w[i].id.data, id->data, id->len) == 0
            && w[i].checkpoint.len == turn->checkpoint_id.len
            && ngx_strncmp(w[i].checkpoint.data, turn->checkpoint_id.data,
                           turn->checkpoint_id.len)
               == 0)
        {
            if (w[i].result.len == 0) {
                /* claimed, never answered: cut while it ran */
                return NGX_DONE;
            }

            *result = w[i].result;

            ngx_log_error(NGX_LOG_INFO, turn->request->connection->log, 0,
                          "agent: tool call \"%V\" of run \"%V\" answered "
                          "before its worker was lost: not run again", id,
                          &turn->run_id);
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
}


/*
 * With a run's claim: its pending writes, into row->writes, made anew in
 * sc's pool at each pass (a pass again reads them all again)
 */

ngx_int_t
ngx_http_agent_turn_writes_read(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_row_t *row)
{
    row->writes = ngx_array_create(sc->pool, 4,
                                   sizeof(ngx_http_agent_run_write_t));
    if (row->writes == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store_run_events(sc, &row->run_id,
                                           NGX_HTTP_AGENT_WRITES_FROM,
                                           NGX_HTTP_AGENT_WRITES_MAX,
                                           ngx_http_agent_turn_writes_event,
                                           row);
}


static ngx_int_t
ngx_http_agent_turn_writes_event(void *data, int64_t seq, ngx_str_t *event,
    ngx_str_t *json)
{
    ngx_http_agent_run_row_t *row = data;

    yajl_val                     v;
    ngx_str_t                    cp, id, result;
    ngx_http_agent_run_write_t  *w;

    if (seq >= 0 || event->len != 5
        || ngx_strncmp(event->data, "write", 5) != 0)
    {
        return NGX_OK;
    }

    v = ngx_http_agent_json_parse(row->writes->pool, json->data, json->len,
                                  NULL);

    if (v == NULL
        || ngx_http_agent_json_get_str(v, "checkpoint", &cp) != NGX_OK
        || ngx_http_agent_json_get_str(v, "id", &id) != NGX_OK)
    {
        /* not ours: that call runs again */
        return NGX_OK;
    }

    if (ngx_http_agent_json_get_str(v, "result", &result) != NGX_OK) {
        /* a claim alone: the call was cut while it ran */
        ngx_str_null(&result);
    }

    w = ngx_array_push(row->writes);
    if (w == NULL) {
        return NGX_ERROR;
    }

    w->checkpoint = cp;
    w->id = id;
    w->result = result;

    return NGX_OK;
}
