
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"


static ngx_int_t ngx_http_agent_lg_update_subgraph(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_run_t *run, void *data);


/* a subgraph's state written (lg_state.c), its refusals answered */

static ngx_int_t
ngx_http_agent_lg_update_subgraph(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_t *run, void *data)
{
    ngx_http_agent_lg_subgraph_t *sw = data;

    ngx_int_t                     rc;
    ngx_http_agent_turn_state_t  *st;

    rc = ngx_http_agent_lg_subgraph_values(run, sw);

    if (rc == NGX_OK) {
        /* in the subgraph's namespace, as LangGraph writes it */
        st = sw->st;
        st->ns = sw->ns;
        st->ns_step = sw->step;
        st->ns_next = sw->next;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(sw->request, NGX_HTTP_CONFLICT,
                                          "no subgraph waits at \"%V\" of "
                                          "the thread", &sw->node);
    }

    if (rc == NGX_ABORT) {
        return ngx_http_agent_reply_error(sw->request, 422, "\"values\" of "
                                          "a subgraph are channels of its "
                                          "graph, not messages");
    }

    return rc;
}


/*
 * POST /threads/{id}/state {"values", "as_node"}: the values written as
 * that node's update would be, with its reducers, in a new checkpoint
 * whose next is where the node routes; 409 while a run holds the thread.
 * With "checkpoint": {"checkpoint_ns": "NODE:..."} (a task's, LangGraph's
 * subgraph namespace) the values are the state's of the subgraph that
 * waits at NODE, kept for its resume, in a new checkpoint of the thread
 * that still waits there.
 */

ngx_int_t
ngx_http_agent_lg_update_state(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, ngx_str_t *body)
{
    u_char                        *p;
    yajl_val                       v, x;
    ngx_int_t                      rc;
    ngx_http_agent_json_t         *j;
    ngx_http_agent_turn_state_t    st;
    ngx_http_agent_lg_subgraph_t   sw;

    rc = ngx_http_agent_reply_parse(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    ngx_memzero(&st, sizeof(ngx_http_agent_turn_state_t));

    st.id = req->thread_id;
    st.after = "update its state";
    st.values = ngx_http_agent_json_get(v, "values");

    if (st.values && !YAJL_IS_NULL(st.values) && !YAJL_IS_OBJECT(st.values))
    {
        return ngx_http_agent_reply_error(r, 422, "\"values\" must be an "
                                          "object of channels");
    }

    x = st.values && YAJL_IS_OBJECT(st.values)
        ? ngx_http_agent_json_get(st.values, "messages") : NULL;

    if (x && !YAJL_IS_NULL(x)) {
        /* an id of ours replaces its message: the edit of human review */
        rc = ngx_http_agent_lg_messages(r, &req->thread_id, x,
                                        "values.messages", &st.msgs,
                                        &st.nmsgs);
        if (rc != NGX_OK) {
            return rc;
        }
    }

    ngx_str_set(&st.as_node, "__update__");

    x = ngx_http_agent_json_get(v, "as_node");

    if (x && YAJL_IS_STRING(x)) {
        st.as_node.data = (u_char *) YAJL_GET_STRING(x);
        st.as_node.len = ngx_strlen(st.as_node.data);
        st.node = 1;
    }

    /* a subgraph's namespace (its task's checkpoint): its state written */

    x = ngx_http_agent_json_get(v, "checkpoint");
    x = (x && YAJL_IS_OBJECT(x))
        ? ngx_http_agent_json_get(x, "checkpoint_ns") : NULL;

    if (x && YAJL_IS_STRING(x) && *YAJL_GET_STRING(x)) {
        sw.node.data = (u_char *) YAJL_GET_STRING(x);
        sw.node.len = ngx_strlen(sw.node.data);
        sw.ns = sw.node;
        sw.st = &st;

        p = ngx_strlchr(sw.node.data, sw.node.data + sw.node.len, ':');
        if (p) {
            sw.node.len = p - sw.node.data;
        }

        sw.values = (st.values && YAJL_IS_OBJECT(st.values)) ? st.values
                                                             : NULL;
        st.values = NULL;
        st.msgs = NULL;
        st.nmsgs = 0;
        sw.request = r;
        st.write = ngx_http_agent_lg_update_subgraph;
        st.data = &sw;
    }

    st.graph = ngx_http_agent_lg_thread_graph(r, &req->thread_id);
    if (st.graph == NULL) {
        return NGX_AGAIN;
    }

    rc = ngx_http_agent_turn_state_update(r, &st);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "checkpoint");
    ngx_http_agent_lg_checkpoint(j, &req->thread_id, &st.ns, &st.checkpoint);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}
