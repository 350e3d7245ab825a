
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
#include "ngx_http_agent_util.h"


/*
 * The LangGraph API's threads (our sessions) and their state: created,
 * read, searched, deleted; the state at any checkpoint, the history, and
 * an update of the state as if a node had written it.
 */


static ngx_int_t ngx_http_agent_lg_thread_metadata(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, yajl_val add, ngx_str_t *later);
static ngx_int_t ngx_http_agent_lg_load(ngx_http_request_t *r,
    ngx_str_t *thread_id, ngx_http_agent_checkpoint_t *cp,
    ngx_http_agent_run_t **runp);


/* POST /threads, GET and DELETE /threads/{id} */

static ngx_int_t ngx_http_agent_lg_thread_copy(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_http_agent_session_t *s);


ngx_int_t
ngx_http_agent_lg_thread(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    u_char                     buf[36];
    yajl_val                   v;
    ngx_int_t                  rc;
    ngx_str_t                  id, given, exists, run_id, aid;
    ngx_http_agent_json_t     *j;
    ngx_http_agent_graph_t    *g;
    ngx_http_agent_session_t   s;

    if (req->route == NGX_HTTP_AGENT_LG_THREADS) {
        rc = ngx_http_agent_reply_parse(r, body, &v, 1);
        if (rc != NGX_OK) {
            return rc;
        }

        ngx_str_null(&id);
        ngx_str_null(&exists);

        if (v && (ngx_http_agent_json_get_str(v, "thread_id", &id)
                  == NGX_ERROR
                  || ngx_http_agent_json_get_str(v, "if_exists", &exists)
                     == NGX_ERROR))
        {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"thread_id\" and \"if_exists\" "
                                              "must be strings");
        }

        /* an id as the URLs take them: one that cannot be named in a
         * URL is a thread that cannot be read or deleted */

        if (id.len && !ngx_http_agent_id_valid(&id)) {
            return ngx_http_agent_reply_error(r, 422, "\"thread_id\" takes 1 "
                                              "to %d letters, digits, \"-\" or "
                                              "\"_\"",
                                              NGX_HTTP_AGENT_ID_MAX);
        }

        /* the owner's own, or where its new one goes */

        given = id;

        rc = ngx_http_agent_reply_session_scope(r, &id);

        if (rc == NGX_OK) {
            rc = id.len ? ngx_http_agent_store_session_get(
                                    ngx_http_agent_reply_sc(r), &id, &s)
                        : NGX_DECLINED;
        }

        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (rc == NGX_OK) {
            /* if_exists: "raise" (the default) or "do_nothing" */

            if (exists.len != 10
                || ngx_strncmp(exists.data, "do_nothing", 10) != 0)
            {
                return ngx_http_agent_reply_error(r, NGX_HTTP_CONFLICT,
                                                  "thread \"%V\" already "
                                                  "exists", &given);
            }

            rc = ngx_http_agent_reply_session_get(r, &id, &s);
            if (rc != NGX_OK) {
                return rc;
            }

        } else {
            rc = ngx_http_agent_lg_supersteps(r, req, v, NULL, 1, &g);
            if (rc != NGX_OK) {
                return rc;
            }

            rc = ngx_http_agent_lg_thread_create(r, &id,
                           v ? ngx_http_agent_json_get(v, "metadata") : NULL,
                           &s);
            if (rc != NGX_OK) {
                return rc;
            }

            rc = ngx_http_agent_lg_supersteps(r, req, v, &s, 0, &g);
            if (rc != NGX_OK) {
                return rc;
            }

            /* a thread with a history names its graph, as a run's would */

            if (g) {
                ngx_http_agent_lg_assistant_id(&g->name, buf);
                aid.data = buf;
                aid.len = 36;

                rc = ngx_http_agent_lg_thread_names(r, &s, &g->name, &aid,
                                                    NULL);
                if (rc != NGX_OK) {
                    return rc;
                }
            }
        }

    } else {
        rc = ngx_http_agent_reply_session_get(r, &req->thread_id, &s);
        if (rc != NGX_OK) {
            return rc;
        }

        if (req->route == NGX_HTTP_AGENT_LG_THREAD_COPY) {
            rc = ngx_http_agent_lg_thread_copy(r, req, &s);
            if (rc != NGX_OK) {
                return rc;
            }

        } else if (r->method == NGX_HTTP_DELETE) {
            rc = ngx_http_agent_reply_session_lock(r, &req->thread_id, &run_id,
                                                   "delete it");
            if (rc != NGX_OK) {
                return rc;
            }

            rc = ngx_http_agent_store_session_delete(ngx_http_agent_reply_sc(r),
                                                     &req->thread_id);
            if (rc == NGX_AGAIN) {
                return NGX_AGAIN;
            }

            if (rc != NGX_OK
                && ngx_http_agent_store_unlock(ngx_http_agent_reply_sc(r),
                                               &req->thread_id, &run_id)
                   == NGX_AGAIN)
            {
                return NGX_AGAIN;
            }

            if (rc != NGX_OK) {
                rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
                return ngx_http_agent_reply_error(r, rc, "the thread could "
                                                  "not be deleted");
            }

            return ngx_http_agent_reply_send(r, NGX_HTTP_NO_CONTENT, NULL);

        } else if (r->method == NGX_HTTP_PATCH) {
            /* PATCH /threads/{id} {"metadata"}: merged into its own */

            rc = ngx_http_agent_reply_parse(r, body, &v, 0);
            if (rc != NGX_OK) {
                return rc;
            }

            v = ngx_http_agent_json_get(v, "metadata");

            if (v && !YAJL_IS_NULL(v) && !YAJL_IS_OBJECT(v)) {
                return ngx_http_agent_reply_error(r, 422, "\"metadata\" "
                                                  "must be an object");
            }

            rc = ngx_http_agent_lg_thread_metadata(r, &s, v, NULL);
            if (rc != NGX_OK) {
                return rc;
            }
        }
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_lg_thread_json(r, j, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


ngx_int_t
ngx_http_agent_lg_thread_create(ngx_http_request_t *r, ngx_str_t *id,
    yajl_val metadata, ngx_http_agent_session_t *s)
{
    ngx_str_t  title;

    ngx_str_set(&title, "");

    return ngx_http_agent_reply_session_create(r, id, &title, metadata, s);
}


/*
 * The thread's metadata names the graph and the assistant of its runs, as
 * LangGraph's does (Agent Chat UI lists a graph's threads by them); later:
 * see ngx_http_agent_lg_thread_metadata()
 */

ngx_int_t
ngx_http_agent_lg_thread_names(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, ngx_str_t *graph_id, ngx_str_t *assistant_id,
    ngx_str_t *later)
{
    yajl_val                old, add;
    ngx_str_t               g, a, out;
    ngx_http_agent_json_t  *j;

    old = s->metadata.len ? ngx_http_agent_json_parse(r->pool,
                                                      s->metadata.data,
                                                      s->metadata.len, NULL)
                          : NULL;

    if (old
        && ngx_http_agent_json_get_str(old, "graph_id", &g) == NGX_OK
        && ngx_http_agent_json_get_str(old, "assistant_id", &a) == NGX_OK
        && g.len == graph_id->len
        && ngx_strncmp(g.data, graph_id->data, g.len) == 0
        && a.len == assistant_id->len
        && ngx_strncmp(a.data, assistant_id->data, a.len) == 0)
    {
        return NGX_OK;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "graph_id");
    ngx_http_agent_json_str(j, graph_id);
    ngx_http_agent_json_key(j, "assistant_id");
    ngx_http_agent_json_str(j, assistant_id);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    add = ngx_http_agent_json_parse(r->pool, out.data, out.len, NULL);
    if (add == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_lg_thread_metadata(r, s, add, later);
}


/*
 * A thread's metadata with the keys of add set (a PATCH, a run's graph_id
 * and assistant_id), written by our generator; s has it after.  later:
 * not written now but kept there, for a run to write in its turn's first
 * unit of writes (a write transaction fewer)
 */

static ngx_int_t
ngx_http_agent_lg_thread_metadata(ngx_http_request_t *r,
    ngx_http_agent_session_t *s, yajl_val add, ngx_str_t *later)
{
    yajl_val                old;
    ngx_int_t               rc;
    ngx_str_t               out;
    ngx_http_agent_json_t  *j;

    if (add == NULL || !YAJL_IS_OBJECT(add) || add->u.object.len == 0) {
        return NGX_OK;
    }

    old = s->metadata.len ? ngx_http_agent_json_parse(r->pool,
                                                      s->metadata.data,
                                                      s->metadata.len, NULL)
                          : NULL;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_merge(j, old, add);

    if (ngx_http_agent_json_done(j, &out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (later) {
        *later = out;
        s->metadata = out;
        return NGX_OK;
    }

    rc = ngx_http_agent_store_session_set(ngx_http_agent_reply_sc(r), &s->id,
                                          NGX_HTTP_AGENT_STORE_METADATA,
                                          &out);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return ngx_http_agent_reply_error(r, rc, "the thread's metadata "
                                          "could not be saved");
    }

    s->metadata = out;

    return NGX_OK;
}


/*
 * a Thread: its status is busy (a run holds it), interrupted, error (its
 * last run failed) or idle
 */

ngx_int_t
ngx_http_agent_lg_thread_json(ngx_http_request_t *r, ngx_http_agent_json_t *j,
    ngx_http_agent_session_t *s)
{
    ngx_int_t                     rc, busy;
    ngx_str_t                     run_id, interrupt;
    ngx_uint_t                    failed;
    ngx_array_t                   last;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_run_row_t     *row;
    ngx_http_agent_checkpoint_t   cp;

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));

    rc = ngx_http_agent_lg_load(r, &s->id, &cp, &run);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_store_thread_busy(ngx_http_agent_reply_sc(r), &s->id,
                                          &run_id);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    /* a thread whose last run failed is in "error", as LangGraph's */

    if (ngx_array_init(&last, r->pool, 1, sizeof(ngx_http_agent_run_row_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (rc != NGX_OK) {
        busy = ngx_http_agent_store_run_list(ngx_http_agent_reply_sc(r),
                                             &s->id, NULL, 1, 0, &last);
        if (busy == NGX_AGAIN) {
            return NGX_AGAIN;
        }
    }

    row = last.elts;
    failed = (last.nelts == 1 && row->status.len == 5
              && ngx_strncmp(row->status.data, "error", 5) == 0);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_bytes(j, s->id.data,
                              ngx_http_agent_store_id_shown(&s->id));
    ngx_http_agent_json_key(j, "created_at");
    ngx_http_agent_json_str(j, &s->created_at);
    ngx_http_agent_json_key(j, "updated_at");
    ngx_http_agent_json_str(j, &s->updated_at);
    ngx_http_agent_json_key(j, "metadata");

    ngx_http_agent_json_raw_obj(j, &s->metadata);

    ngx_http_agent_json_key(j, "status");

    if (rc == NGX_OK) {
        ngx_http_agent_json_cstr(j, "busy");

    } else if (ngx_http_agent_lg_interrupt_of(run, &interrupt) == NGX_OK) {
        ngx_http_agent_json_cstr(j, "interrupted");

    } else if (failed) {
        ngx_http_agent_json_cstr(j, "error");

    } else {
        ngx_http_agent_json_cstr(j, "idle");
    }

    ngx_http_agent_json_key(j, "config");
    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_end(j);

    /* a thread that never ran has no values yet */

    if (cp.id.len) {
        ngx_http_agent_json_key(j, "values");
        ngx_http_agent_lg_values(j, run, &s->id, 0);

        ngx_http_agent_json_key(j, "interrupts");
        ngx_http_agent_json_obj(j);

        if (ngx_http_agent_lg_interrupt_of(run, &interrupt) == NGX_OK) {
            ngx_http_agent_json_str(j, &cp.id);
            ngx_http_agent_lg_interrupts(j, &interrupt);
        }

        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_end(j);

    return NGX_OK;
}


/*
 * The thread's state, at its last checkpoint or at cp->id if set, with
 * the location's graph: a thread's channels are the graph's that last ran.
 */

static ngx_int_t
ngx_http_agent_lg_load(ngx_http_request_t *r, ngx_str_t *thread_id,
    ngx_http_agent_checkpoint_t *cp, ngx_http_agent_run_t **runp)
{
    ngx_int_t                      rc;
    ngx_str_t                      at, shown;
    ngx_http_agent_graph_t        *graph;
    ngx_http_agent_store_call_t   *sc;

    sc = ngx_http_agent_reply_sc(r);

    graph = ngx_http_agent_lg_thread_graph(r, thread_id);
    if (graph == NULL) {
        return NGX_AGAIN;
    }

    at = cp->id;

    rc = ngx_http_agent_checkpoint_open(sc, sc->pool, graph, thread_id, cp,
                                        runp);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED && at.len) {
        shown.data = thread_id->data;
        shown.len = ngx_http_agent_store_id_shown(thread_id);

        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "thread \"%V\" has no checkpoint "
                                          "\"%V\"%V", &shown, &at,
                                          ngx_http_agent_store_keep_said(r));
    }

    if (rc != NGX_OK) {
        rc = NGX_HTTP_INTERNAL_SERVER_ERROR;
        return ngx_http_agent_reply_error(r, rc, "the thread's state could "
                                          "not be read");
    }

    return NGX_OK;
}


/*
 * GET /threads/{id}/state[/{checkpoint_id}][?subgraphs=true], and POST
 * .../state/checkpoint {"checkpoint": {"checkpoint_id", "checkpoint_ns"},
 * "subgraphs"} (the JS SDK's getState with a checkpoint object): a
 * namespace "NODE:..." is the state of the subgraph that waits at NODE,
 * or, when none waits there, its namespace's latest checkpoint (a
 * subgraph that ended, as LangGraph's)
 */

ngx_int_t
ngx_http_agent_lg_state(ngx_http_request_t *r, ngx_http_agent_lg_req_t *req,
    ngx_str_t *body)
{
    u_char                       *p;
    yajl_val                      v, c;
    ngx_int_t                     rc;
    ngx_str_t                     arg, ns, full;
    ngx_uint_t                    subgraphs;
    ngx_array_t                   list;
    ngx_http_agent_run_t         *run, *inner;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_session_t      s;
    ngx_http_agent_checkpoint_t   cp;

    ngx_memzero(&cp, sizeof(ngx_http_agent_checkpoint_t));
    ngx_str_null(&ns);
    ngx_str_null(&full);

    if (req->route == NGX_HTTP_AGENT_LG_STATE_AT) {
        cp.id = req->id;
    }

    /* ?subgraphs=true: a task that waits inside a subgraph shows its state */
    subgraphs = (ngx_http_arg(r, (u_char *) "subgraphs", 9, &arg) == NGX_OK
                 && arg.len == 4 && ngx_strncmp(arg.data, "true", 4) == 0);

    if (body) {
        /* POST .../state/checkpoint {"checkpoint": {...}, "subgraphs"} */

        rc = ngx_http_agent_reply_parse(r, body, &v, 0);
        if (rc != NGX_OK) {
            return rc;
        }

        subgraphs = YAJL_IS_TRUE(ngx_http_agent_json_get(v, "subgraphs"));
        c = ngx_http_agent_json_get(v, "checkpoint");

        if (c && YAJL_IS_OBJECT(c)) {
            (void) ngx_http_agent_json_get_str(c, "checkpoint_id", &cp.id);
            (void) ngx_http_agent_json_get_str(c, "checkpoint_ns", &ns);
        }

        full = ns;

        p = ngx_strlchr(ns.data, ns.data + ns.len, ':');
        if (p) {
            ns.len = p - ns.data;
        }
    }

    rc = ngx_http_agent_reply_session_get(r, &req->thread_id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    rc = ngx_http_agent_lg_load(r, &req->thread_id, &cp, &run);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ns.len == 0) {
        ngx_http_agent_lg_state_json(j, run, &cp, &req->thread_id, subgraphs);
        return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
    }

    /* a subgraph's namespace: its state where it waits at that node */

    inner = ngx_http_agent_lg_subgraph_run(run, &ns);

    if (inner) {
        ngx_http_agent_lg_subgraph_state(j, inner, &cp, &req->thread_id,
                                         subgraphs);

        return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
    }

    /* none waits there: the namespace's latest, newest first */

    rc = ngx_http_agent_lg_history_list(r, &req->thread_id, &full, &list, 8);
    if (rc != NGX_OK) {
        return rc;
    }

    if (list.nelts == 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND, "the thread "
                                          "has no subgraph checkpoint in "
                                          "\"%V\"", &full);
    }

    rc = ngx_http_agent_lg_ns_state(r, r->pool, run->graph, &req->thread_id,
                                    j, list.elts);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* the graph of the thread's last run; before any, the location's */

ngx_http_agent_graph_t *
ngx_http_agent_lg_thread_graph(ngx_http_request_t *r, ngx_str_t *thread_id)
{
    ngx_int_t                     rc;
    ngx_array_t                   rows;
    yajl_val                      v;
    ngx_str_t                     graph_id;
    ngx_http_agent_graph_t       *g;
    ngx_http_agent_session_t      s;
    ngx_http_agent_run_row_t     *row;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_store_call_t  *sc;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    /* the pool of the store's answers: an entry's own in a walk */
    sc = ngx_http_agent_reply_sc(r);

    if (ngx_array_init(&rows, sc->pool, 1, sizeof(ngx_http_agent_run_row_t))
        != NGX_OK)
    {
        return alcf->graph;
    }

    rc = ngx_http_agent_store_run_list(sc, thread_id, NULL, 1, 0, &rows);
    if (rc == NGX_AGAIN) {
        /* NULL: the caller waits for the store's answer */
        return NULL;
    }

    if (rc != NGX_OK || rows.nelts == 0) {
        return alcf->graph;
    }

    row = rows.elts;
    g = ngx_http_agent_lg_assistant(r, &row->assistant_id);

    if (g) {
        return g;
    }

    /* an assistant a client made: its graph, in the thread's metadata */

    rc = ngx_http_agent_store_session_get(sc, thread_id, &s);
    if (rc == NGX_AGAIN) {
        return NULL;
    }

    v = (rc == NGX_OK && s.metadata.len)
        ? ngx_http_agent_json_parse(sc->pool, s.metadata.data,
                                    s.metadata.len, NULL)
        : NULL;

    if (v && ngx_http_agent_json_get_str(v, "graph_id", &graph_id) == NGX_OK)
    {
        g = ngx_http_agent_lg_assistant(r, &graph_id);
    }

    return g ? g : alcf->graph;
}


/*
 * POST /threads/{id}/copy: a new thread with all the thread has, its
 * checkpoints and runs under ids of their own; s: then the copy
 */

static ngx_int_t
ngx_http_agent_lg_thread_copy(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_http_agent_session_t *s)
{
    u_char     *p;
    ngx_int_t   rc;
    ngx_str_t   now;

    /* the same id and time in each pass of the request */

    if (req->made.len == 0) {
        p = ngx_pnalloc(r->pool, 36 + 32);
        if (p == NULL) {
            return NGX_HTTP_INTERNAL_SERVER_ERROR;
        }

        ngx_http_agent_id_uuid(p);
        req->made.data = p;
        req->made.len = 36;
        req->before.data = p + 36;
        req->before.len = ngx_http_agent_store_now(p + 36) - (p + 36);
    }

    now = req->before;

    rc = ngx_http_agent_store_session_copy(ngx_http_agent_reply_sc(r),
                                           &req->thread_id, &req->made, &now);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "thread \"%V\" could not be "
                                          "copied", &req->asked);
    }

    return ngx_http_agent_reply_session_get(r, &req->made, s);
}


/*
 * A thread's checkpoints in the namespace ns, newest first (n: how many
 * to make room for): NGX_OK, NGX_AGAIN, or the error answered
 */

ngx_int_t
ngx_http_agent_lg_history_list(ngx_http_request_t *r, ngx_str_t *thread_id,
    ngx_str_t *ns, ngx_array_t *list, ngx_uint_t n)
{
    ngx_int_t  rc;

    if (ngx_array_init(list, r->pool, n, sizeof(ngx_http_agent_checkpoint_t))
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_store_checkpoint_list(ngx_http_agent_reply_sc(r),
                                              thread_id, ns, list);

    return (rc == NGX_OK) ? NGX_OK : ngx_http_agent_lg_history_read(r, rc);
}


/* a store's answer to a read of the history that is not NGX_OK */

ngx_int_t
ngx_http_agent_lg_history_read(ngx_http_request_t *r, ngx_int_t rc)
{
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                      "the thread's history could not be "
                                      "read");
}
