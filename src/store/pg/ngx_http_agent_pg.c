
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The PostgreSQL store: its table of operations, on top of its files
 * (docs/architecture.md): the statements and the configuration at the
 * bottom, a statement and its answer, the connections that run it, its
 * sending, the transactions, then the operations.
 */


static void ngx_http_agent_pg_cancel(ngx_http_agent_store_call_t *sc);


/* the caller is gone: what it waits for is answered to no one */

static void
ngx_http_agent_pg_cancel(ngx_http_agent_store_call_t *sc)
{
    ngx_queue_t                *qq;
    ngx_http_agent_pg_conn_t   *pc;
    ngx_http_agent_pg_query_t  *q;

    pc = sc->conn;

    if (pc == NULL) {
        return;
    }

    /* its transaction's statements still run, and are undone */
    ngx_http_agent_pg_rollback(sc);

    if (pc->current && pc->current->sc == sc) {
        pc->current->sc = NULL;
    }

    if (pc->current && pc->current->report == sc) {
        pc->current->report = NULL;
    }

    if (pc->current && pc->current->also) {
        if (pc->current->also->sc == sc) {
            pc->current->also->sc = NULL;
        }

        if (pc->current->also->report == sc) {
            pc->current->also->report = NULL;
        }
    }

    for (qq = ngx_queue_head(&pc->queries);
         qq != ngx_queue_sentinel(&pc->queries);
         qq = ngx_queue_next(qq))
    {
        q = ngx_queue_data(qq, ngx_http_agent_pg_query_t, queue);

        if (q->sc == sc) {
            q->sc = NULL;
        }

        if (q->report == sc) {
            q->report = NULL;
        }
    }

    ngx_http_agent_pg_held_cancel(sc);

    sc->waiting = 0;
}


ngx_http_agent_store_backend_t  ngx_http_agent_store_pg = {
    ngx_string("postgresql"),
    NGX_HTTP_AGENT_STORE_TX|NGX_HTTP_AGENT_STORE_BEHIND,
    ngx_http_agent_pg_conf_read,
    ngx_http_agent_pg_init,
    ngx_http_agent_pg_open,
    ngx_http_agent_pg_close,
    ngx_http_agent_pg_begin,
    ngx_http_agent_pg_commit,
    ngx_http_agent_pg_rollback,
    ngx_http_agent_pg_cancel,
    ngx_http_agent_pg_session_create,
    ngx_http_agent_pg_session_get,
    ngx_http_agent_pg_session_list,
    ngx_http_agent_pg_session_count,
    ngx_http_agent_pg_session_delete,
    ngx_http_agent_pg_session_set,
    ngx_http_agent_pg_lock,
    ngx_http_agent_pg_lock_renew,
    ngx_http_agent_pg_leases_renew,
    ngx_http_agent_pg_unlock,
    ngx_http_agent_pg_session_open,
    ngx_http_agent_pg_messages,
    ngx_http_agent_pg_messages_page,
    ngx_http_agent_pg_checkpoint_get,
    ngx_http_agent_pg_checkpoint_list,
    ngx_http_agent_pg_checkpoint_write,
    ngx_http_agent_pg_fork_later,
    ngx_http_agent_pg_fork_keep,
    ngx_http_agent_pg_fork_cut,
    ngx_http_agent_pg_resource_add,
    ngx_http_agent_pg_resource_prepare,
    ngx_http_agent_pg_resource_list,
    ngx_http_agent_pg_resource_fetch,
    ngx_http_agent_pg_run_insert,
    ngx_http_agent_pg_run_status,
    ngx_http_agent_pg_run_get,
    ngx_http_agent_pg_run_list,
    ngx_http_agent_pg_run_cancel,
    ngx_http_agent_pg_run_cancelled,
    ngx_http_agent_pg_run_event,
    ngx_http_agent_pg_run_events,
    ngx_http_agent_pg_run_rollback,
    ngx_http_agent_pg_run_delete,
    ngx_http_agent_pg_thread_busy,
    ngx_http_agent_pg_run_lost,
    ngx_http_agent_pg_run_orphans,
    ngx_http_agent_pg_run_claim,
    ngx_http_agent_pg_cron_put,
    ngx_http_agent_pg_cron_get,
    ngx_http_agent_pg_cron_list,
    ngx_http_agent_pg_cron_delete,
    ngx_http_agent_pg_cron_due,
    ngx_http_agent_pg_cron_claim,
    ngx_http_agent_pg_assistant_put,
    ngx_http_agent_pg_assistant_get,
    ngx_http_agent_pg_assistant_list,
    ngx_http_agent_pg_assistant_latest,
    ngx_http_agent_pg_assistant_delete,
    ngx_http_agent_pg_item_put,
    ngx_http_agent_pg_item_get,
    ngx_http_agent_pg_item_delete,
    ngx_http_agent_pg_item_search,
    ngx_http_agent_pg_item_namespaces,
    ngx_http_agent_pg_session_copy,
    ngx_http_agent_pg_checkpoint_prune,
    ngx_http_agent_pg_thread_storage,
    ngx_http_agent_pg_cache_get,
    ngx_http_agent_pg_cache_put
};
