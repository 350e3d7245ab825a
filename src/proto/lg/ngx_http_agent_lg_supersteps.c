
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_lg.h"
#include "ngx_http_agent_turn.h"


/*
 * POST /threads {"supersteps": [{"updates": [{"as_node", "values"}]}]}:
 * a thread made with a history, each superstep a state update of its
 * own, in order ("__input__" and "__start__" too), on the graph_id's
 * graph (one of the location's) or the location's own.  Checked whole
 * before the thread is made (check set: shapes, nodes, messages), then
 * written (check unset); made: the graph they were written with, or
 * NULL: none asked.  A pass woken by the store goes on at the superstep
 * it waits in, its calls in the slots after the thread's (req->step_n0),
 * given back as each one is written: the work and the memory of a pass
 * are one superstep's, not all those before it again.
 */

ngx_int_t
ngx_http_agent_lg_supersteps(ngx_http_request_t *r,
    ngx_http_agent_lg_req_t *req, yajl_val v, ngx_http_agent_session_t *s,
    ngx_uint_t check, ngx_http_agent_graph_t **made)
{
    size_t                           i;
    yajl_val                         steps, u, x;
    ngx_int_t                        rc;
    ngx_str_t                        name, none;
    ngx_uint_t                       nmsgs;
    ngx_http_agent_msg_t            *msgs;
    ngx_http_agent_store_call_t     *sc;
    ngx_http_agent_graph_t          *graph;
    ngx_http_agent_turn_state_t      st;
    ngx_http_agent_loc_conf_t       *alcf;
    ngx_http_agent_assistant_row_t   row;

    *made = NULL;
    steps = v ? ngx_http_agent_json_get(v, "supersteps") : NULL;

    if (steps == NULL || YAJL_IS_NULL(steps)) {
        return NGX_OK;
    }

    if (!YAJL_IS_ARRAY(steps)
        || steps->u.array.len > NGX_HTTP_AGENT_LG_SUPERSTEPS_MAX)
    {
        return ngx_http_agent_reply_error(r, 422, "\"supersteps\" must be a "
                                          "list of at most %d",
                                          NGX_HTTP_AGENT_LG_SUPERSTEPS_MAX);
    }

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    graph = alcf->graph;

    if (ngx_http_agent_json_get_str(v, "graph_id", &name) == NGX_OK) {
        rc = ngx_http_agent_lg_assistant_find(r, &name, &graph, &row);

        if (rc == NGX_DECLINED) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                              "No assistant found for "
                                              "\"%V\"", &name);
        }

        if (rc != NGX_OK) {
            return rc == NGX_AGAIN ? NGX_AGAIN
                                   : NGX_HTTP_INTERNAL_SERVER_ERROR;
        }
    }

    sc = ngx_http_agent_reply_sc(r);
    ngx_str_set(&none, "");
    nmsgs = 0;

    if (!check && req->step == 0) {
        req->step_n0 = sc->n;
    }

    for (i = check ? 0 : req->step; i < steps->u.array.len; i++) {
        u = ngx_http_agent_json_get(steps->u.array.values[i], "updates");

        if (u == NULL || !YAJL_IS_ARRAY(u) || u->u.array.len != 1
            || !YAJL_IS_OBJECT(u->u.array.values[0]))
        {
            return ngx_http_agent_reply_error(r, 422, "superstep %uz: "
                                              "\"updates\" must hold one "
                                              "update {\"as_node\", "
                                              "\"values\"}", i);
        }

        u = u->u.array.values[0];

        ngx_memzero(&st, sizeof(ngx_http_agent_turn_state_t));

        st.graph = graph;
        st.after = "write to it";
        st.node = 1;
        st.values = ngx_http_agent_json_get(u, "values");

        if (ngx_http_agent_json_get_str(u, "as_node", &st.as_node) != NGX_OK
            || (st.values && !YAJL_IS_NULL(st.values)
                && !YAJL_IS_OBJECT(st.values)))
        {
            return ngx_http_agent_reply_error(r, 422, "superstep %uz: "
                                              "\"as_node\" (a string) and "
                                              "\"values\" (an object) are "
                                              "required", i);
        }

        x = st.values && YAJL_IS_OBJECT(st.values)
            ? ngx_http_agent_json_get(st.values, "messages") : NULL;

        if (check) {

            /* the messages as the write takes them, at most so many */

            if (x && !YAJL_IS_NULL(x)) {
                rc = ngx_http_agent_lg_messages(r, &none, x,
                                                "values.messages", &msgs,
                                                &st.nmsgs);
                if (rc != NGX_OK) {
                    return rc;
                }

                nmsgs += st.nmsgs;

                if (nmsgs > NGX_HTTP_AGENT_LG_SUPERSTEPS_MSGS) {
                    return ngx_http_agent_reply_error(r, 422,
                                     "supersteps hold more than %d messages",
                                     NGX_HTTP_AGENT_LG_SUPERSTEPS_MSGS);
                }
            }

            if (ngx_http_agent_graph_step_node(graph, &st.as_node)
                == NGX_ERROR
                && !(st.as_node.len == 9
                     && (ngx_strncmp(st.as_node.data, "__input__", 9) == 0
                         || ngx_strncmp(st.as_node.data, "__start__", 9)
                            == 0)))
            {
                return ngx_http_agent_reply_error(r, 422, "superstep %uz: "
                                                  "the graph \"%V\" has no "
                                                  "node \"%V\"", i,
                                                  &graph->name, &st.as_node);
            }

            continue;
        }

        st.id = s->id;
        sc->n = req->step_n0;

        if (x && !YAJL_IS_NULL(x)) {
            rc = ngx_http_agent_lg_messages(r, &s->id, x, "values.messages",
                                            &st.msgs, &st.nmsgs);
            if (rc != NGX_OK) {
                return rc;
            }
        }

        rc = ngx_http_agent_turn_state_update(r, &st);
        if (rc != NGX_OK) {
            return rc;
        }

        /* written: its slots given back, a pass woken goes on after it */

        if (sc->answers && sc->answers->nelts > req->step_n0) {
            sc->answers->nelts = req->step_n0;
        }

        req->step = i + 1;
    }

    *made = graph;

    return NGX_OK;
}
