
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <ngx_md5.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * Fencing (docs/runs.md, "Exactly once").  A turn's lease has a
 * generation: its run's claims plus one (a run taken over is claimed
 * again, and the claim sets the session's generation in the same
 * statement).  Every write of the turn carries it and the store refuses
 * one whose generation is no longer the session's, in the write's own
 * statement: a worker paused past its lease (SIGSTOP, a VM frozen) that
 * wakes after another claimed its run writes nothing more, and its part
 * of the run ends unseen (the run goes on on the claimant).  Before each
 * node, so before each model call and each round of tool calls, the turn
 * checks that its lease is still current as far as it knows: renewed
 * within the lease, and no write refused.
 */


void
ngx_http_agent_turn_generation(ngx_http_agent_turn_t *turn)
{
    int64_t                    gen;
    ngx_http_agent_ctx_t      *ctx;
    ngx_http_agent_run_row_t  *row;

    ctx = ngx_http_get_module_ctx(turn->request, ngx_http_agent_module);
    row = ctx ? ctx->redrive : NULL;

    /* the claim counted this attempt: the generation it set */
    gen = row ? row->attempts + 1 : 1;

    turn->sc.gen = gen;
    turn->wsc.gen = gen;
    turn->bsc.gen = gen;
    turn->usc.gen = gen;
    turn->nsc.gen = gen;
}


/*
 * NGX_OK: the lease is still the turn's as far as it knows.  Else the run
 * fails (lost); the renewal is not waited for: a lease not renewed for
 * its whole time may have been claimed already, and a call made now could
 * be made twice
 */

ngx_int_t
ngx_http_agent_turn_current(ngx_http_agent_turn_t *turn)
{
    if (!turn->locked && !turn->stale) {
        return NGX_OK;
    }

    if (turn->stale
        || (turn->lease_ms
            && ngx_current_msec - turn->renewed >= turn->lease_ms))
    {
        return ngx_http_agent_turn_lost(turn->run);
    }

    return NGX_OK;
}


/* the store says another turn has the session: this one ends */

ngx_int_t
ngx_http_agent_turn_lost(ngx_http_agent_run_t *run)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(turn->request, ngx_http_agent_module);

    /*
     * a run the store keeps was claimed by another worker (fencing,
     * docs/runs.md): it goes on there, so this worker's part of it ends
     * unseen, logged once, and writes nothing more.  Our chat API's
     * client is told (lease_lost), as before: it sends its message again
     */

    if (turn->in.record && alcf->redrive
        && (!turn->in.record->quiet || ngx_http_agent_headless(turn->request)))
    {
        if (!turn->fenced) {
            ngx_log_error(NGX_LOG_WARN, turn->request->connection->log, 0,
                          "agent: run \"%V\" on session \"%V\" was taken "
                          "over by another worker (lease generation %L is "
                          "no longer its): this worker's part of it ends",
                          &turn->run_id, &turn->session_id, turn->sc.gen);
        }

        turn->fenced = 1;
        turn->locked = 0;

        return ngx_http_agent_graph_fail(run, "lease_lost", "taken over");
    }

    ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                  "agent: turn on session \"%V\" lost its lease to "
                  "another turn and ends", &turn->session_id);

    return ngx_http_agent_graph_fail(run, "lease_lost", "this turn lost its "
                                     "hold on the session (its lease ran "
                                     "out and another turn took it); the "
                                     "steps saved before are kept, send "
                                     "the message again");
}


/* a turn whose run went on elsewhere: no end, nothing more written */

void
ngx_http_agent_turn_fenced_end(ngx_http_agent_turn_t *turn)
{
    ngx_connection_t    *c;
    ngx_http_request_t  *r;

    r = turn->request;
    c = r->connection;

    if (turn->in.record) {
        turn->in.record->finished = 1;
    }

    if (ngx_http_agent_headless(r)) {
        ngx_http_agent_headless_close(r);
        return;
    }

    /* its client's stream ends without an end, as at a handover */
    ngx_http_finalize_request(r, NGX_ERROR);
    ngx_http_run_posted_requests(c);
}


/*
 * A call's Idempotency-Key (IETF httpapi): the md5 of the thread, the
 * checkpoint its step started from and the call's id (a node's name), so
 * that every attempt, on any worker, sends the same one
 */

ngx_int_t
ngx_http_agent_turn_key(ngx_http_agent_run_t *run, ngx_str_t *id,
    ngx_str_t *key)
{
    ngx_http_agent_turn_t *turn = run->ctx;

    u_char     *p;
    ngx_md5_t   md5;
    u_char      hash[16];

    ngx_md5_init(&md5);
    ngx_md5_update(&md5, turn->session_id.data, turn->session_id.len);
    ngx_md5_update(&md5, "\0", 1);
    ngx_md5_update(&md5, turn->checkpoint_id.data, turn->checkpoint_id.len);
    ngx_md5_update(&md5, "\0", 1);
    ngx_md5_update(&md5, id->data, id->len);
    ngx_md5_final(hash, &md5);

    p = ngx_pnalloc(run->pool, 32);
    if (p == NULL) {
        return NGX_ERROR;
    }

    key->data = p;
    key->len = ngx_hex_dump(p, hash, 16) - p;

    return NGX_OK;
}
