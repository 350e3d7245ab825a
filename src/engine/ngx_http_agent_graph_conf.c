
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine_int.h"
#include "ngx_http_agent_util.h"


/*
 * The graph language of nginx.conf:
 *
 *     agent_graph NAME {
 *         channel NAME REDUCER [default=JSON];
 *         node    NAME KIND [PARAM=VALUE ...];
 *         edge    FROM TO [if=EXPR];
 *     }
 *
 * A graph is read, checked and compiled when nginx reads its configuration:
 * whatever "nginx -t" accepts runs without a surprise.
 */


typedef struct {
    ngx_str_t                  from;
    ngx_str_t                  to;
    ngx_str_t                  cond;
    ngx_str_t                  file;
    ngx_uint_t                 line;
} ngx_http_agent_edge_conf_t;


typedef struct {
    ngx_http_agent_graph_t    *graph;
    ngx_array_t                edges;     /* ngx_http_agent_edge_conf_t */
} ngx_http_agent_graph_ctx_t;


static ngx_http_agent_kind_t *ngx_http_agent_kind_find(ngx_str_t *name);
static char *ngx_http_agent_graph_directive(ngx_conf_t *cf,
    ngx_command_t *dummy, void *conf);
static char *ngx_http_agent_graph_output_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);
static char *ngx_http_agent_graph_node_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);
static char *ngx_http_agent_graph_edge_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_ctx_t *ctx);
static ngx_int_t ngx_http_agent_graph_link(ngx_conf_t *cf,
    ngx_http_agent_graph_ctx_t *ctx);
static char *ngx_http_agent_graph_node_cache(ngx_conf_t *cf,
    ngx_http_agent_node_t *node);
static ngx_uint_t ngx_http_agent_graph_ends(ngx_http_agent_node_t *node);
static ngx_int_t ngx_http_agent_graph_reach(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph);
static void ngx_http_agent_graph_error(ngx_conf_t *cf, ngx_str_t *file,
    ngx_uint_t line, const char *fmt, ...);


ngx_http_agent_kind_t  **ngx_http_agent_graph_kinds;


/* any node's; then its kind's */
static ngx_http_agent_param_t  ngx_http_agent_graph_node_params[] = {
    { ngx_string("count"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_t, count_name), NULL },
    { ngx_string("interrupt_before"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_node_t, interrupt_before), NULL },
    { ngx_string("interrupt_after"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_node_t, interrupt_after), NULL },
    { ngx_string("interrupt_if"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_t, interrupt_if_text), NULL },
    { ngx_string("interrupt_value"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_t, interrupt_value), NULL },
    { ngx_string("interrupt_resume"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_t, interrupt_resume_name), NULL },
    { ngx_string("then"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_node_t, then_text), NULL },
    { ngx_string("cache"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_node_t, cache), NULL },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_graph_block(ngx_conf_t *cf, ngx_array_t *graphs)
{
    ngx_str_t                *value;
    ngx_http_agent_graph_t   *graph, **gp;

    value = cf->args->elts;

    if (ngx_http_agent_graph_find(graphs, &value[1]) != NULL) {
        return "duplicate graph name";
    }

    graph = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_graph_t));
    if (graph == NULL) {
        return NGX_CONF_ERROR;
    }

    graph->name = value[1];
    graph->file = cf->conf_file->file.name;
    graph->line = cf->conf_file->line;

    gp = ngx_array_push(graphs);
    if (gp == NULL) {
        return NGX_CONF_ERROR;
    }

    *gp = graph;

    return ngx_http_agent_graph_parse(cf, graph);
}


char *
ngx_http_agent_graph_parse(ngx_conf_t *cf, ngx_http_agent_graph_t *graph)
{
    char                        *rv;
    ngx_conf_t                   save;
    ngx_http_agent_channel_t    *ch;
    ngx_http_agent_graph_ctx_t   ctx;

    if (ngx_array_init(&graph->channels, cf->pool, 8,
                       sizeof(ngx_http_agent_channel_t))
        != NGX_OK
        || ngx_array_init(&graph->nodes, cf->pool, 8,
                          sizeof(ngx_http_agent_node_t))
           != NGX_OK
        || ngx_array_init(&ctx.edges, cf->temp_pool, 8,
                          sizeof(ngx_http_agent_edge_conf_t))
           != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* every graph has these, at these indices */

    ch = ngx_array_push_n(&graph->channels, 3);
    if (ch == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(ch, 3 * sizeof(ngx_http_agent_channel_t));
    ngx_str_set(&ch[NGX_HTTP_AGENT_CH_MESSAGES].name, "messages");
    ch[NGX_HTTP_AGENT_CH_MESSAGES].reducer = NGX_HTTP_AGENT_REDUCE_MESSAGES;
    ngx_str_set(&ch[NGX_HTTP_AGENT_CH_INPUT].name, "input");
    ch[NGX_HTTP_AGENT_CH_INPUT].reducer = NGX_HTTP_AGENT_REDUCE_VALUE;
    ngx_str_set(&ch[NGX_HTTP_AGENT_CH_SESSION_ID].name, "session_id");
    ch[NGX_HTTP_AGENT_CH_SESSION_ID].reducer = NGX_HTTP_AGENT_REDUCE_VALUE;

    graph->entry = NGX_ERROR;
    ctx.graph = graph;

    save = *cf;
    cf->handler = ngx_http_agent_graph_directive;
    cf->handler_conf = (char *) &ctx;

    rv = ngx_conf_parse(cf, NULL);

    *cf = save;

    if (rv != NGX_CONF_OK) {
        return rv;
    }

    if (ngx_http_agent_graph_link(cf, &ctx) != NGX_OK
        || ngx_http_agent_graph_reach(cf, graph) != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_graph_directive(ngx_conf_t *cf, ngx_command_t *dummy,
    void *conf)
{
    ngx_http_agent_graph_ctx_t *ctx = conf;

    ngx_str_t  *value;

    value = cf->args->elts;

    if (value[0].len == 7 && ngx_strncmp(value[0].data, "channel", 7) == 0) {
        return ngx_http_agent_graph_channel_conf(cf, ctx->graph);
    }

    if (value[0].len == 4 && ngx_strncmp(value[0].data, "node", 4) == 0) {
        return ngx_http_agent_graph_node_conf(cf, ctx->graph);
    }

    if (value[0].len == 4 && ngx_strncmp(value[0].data, "edge", 4) == 0) {
        return ngx_http_agent_graph_edge_conf(cf, ctx);
    }

    if (value[0].len == 6 && ngx_strncmp(value[0].data, "output", 6) == 0) {
        return ngx_http_agent_graph_output_conf(cf, ctx->graph);
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "unknown directive \"%V\" in "
                       "agent_graph: use channel, node, edge or output",
                       &value[0]);

    return NGX_CONF_ERROR;
}


/*
 * output CHANNEL ...: what a run answers (LangGraph's output schema), the
 * channels declared before it; the state keeps them all
 */

static char *
ngx_http_agent_graph_output_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph)
{
    ngx_int_t                  n;
    ngx_str_t                 *value;
    ngx_uint_t                 i;
    ngx_http_agent_channel_t  *ch;

    value = cf->args->elts;
    ch = graph->channels.elts;

    if (cf->args->nelts < 2 || graph->outputs) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "output: use one "
                           "\"output CHANNEL ...;\" in a graph");
        return NGX_CONF_ERROR;
    }

    for (i = 1; i < cf->args->nelts; i++) {
        n = ngx_http_agent_graph_channel(graph, &value[i]);

        if (n == NGX_ERROR || n == NGX_HTTP_AGENT_CH_INPUT
            || n == NGX_HTTP_AGENT_CH_SESSION_ID)
        {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "output: \"%V\" is no "
                               "channel of the graph declared before it",
                               &value[i]);
            return NGX_CONF_ERROR;
        }

        ch[n].output = 1;
    }

    graph->outputs = 1;

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_graph_node_conf(ngx_conf_t *cf, ngx_http_agent_graph_t *graph)
{
    ngx_int_t               rc;
    ngx_str_t              *value;
    ngx_uint_t              i;
    ngx_http_agent_node_t  *node;

    value = cf->args->elts;

    if (cf->args->nelts < 3) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "node: use "
                           "\"node NAME KIND [PARAM=VALUE ...];\"");
        return NGX_CONF_ERROR;
    }

    if ((value[1].len == 5 && ngx_strncmp(value[1].data, "START", 5) == 0)
        || (value[1].len == 3 && ngx_strncmp(value[1].data, "END", 3) == 0)
        || (value[1].len >= 2 && value[1].data[0] == '_'
            && value[1].data[1] == '_'))
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "\"%V\" is a reserved node "
                           "name", &value[1]);
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_graph_node(graph, &value[1]) != NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "node \"%V\" is declared "
                           "twice", &value[1]);
        return NGX_CONF_ERROR;
    }

    node = ngx_array_push(&graph->nodes);
    if (node == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(node, sizeof(ngx_http_agent_node_t));
    node->name = value[1];
    node->index = graph->nodes.nelts - 1;
    node->count = -1;
    node->file = cf->conf_file->file.name;
    node->line = cf->conf_file->line;

    if (ngx_array_init(&node->edges, cf->pool, 2,
                       sizeof(ngx_http_agent_edge_t))
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    node->kind = ngx_http_agent_kind_find(&value[2]);

    if (node->kind == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "unknown node kind \"%V\" "
                           "of node \"%V\"", &value[2], &value[1]);
        return NGX_CONF_ERROR;
    }

    node->conf = node->kind->create
                 ? node->kind->create(cf)
                 : ngx_pcalloc(cf->pool, node->kind->conf_size);
    if (node->conf == NULL) {
        return NGX_CONF_ERROR;
    }

    /* count=, interrupt_before=, interrupt_after=: any node's */

    for (i = 3; i < cf->args->nelts; i++) {
        rc = ngx_http_agent_params_word(cf, ngx_http_agent_graph_node_params,
                                        &value[i], node, "node", &value[1]);

        if (rc == NGX_DECLINED) {
            rc = ngx_http_agent_params_word(cf, node->kind->params,
                                            &value[i], node->conf, "node",
                                            &value[1]);
        }

        if (rc == NGX_DECLINED) {
            ngx_http_agent_params_unknown(cf, &value[i], "node", &value[1]);
            return NGX_CONF_ERROR;
        }

        if (rc != NGX_OK) {
            return NGX_CONF_ERROR;
        }
    }

    return ngx_http_agent_graph_node_cache(cf, node);
}


/*
 * cache=: the kinds whose update is a function of the state (a model's,
 * a request's, a query's answer, a subgraph's); its version the CRC of
 * the node's statement, so that one changed by a reload finds none kept
 */

static char *
ngx_http_agent_graph_node_cache(ngx_conf_t *cf, ngx_http_agent_node_t *node)
{
    uint32_t     crc;
    ngx_str_t   *value, *kind;
    ngx_uint_t   i;

    static const char  *kinds[] = { "llm", "http", "sql", "subgraph", NULL };

    if (node->cache == 0) {
        return NGX_CONF_OK;
    }

    kind = &node->kind->name;

    for (i = 0; kinds[i]; i++) {
        if (kind->len == ngx_strlen(kinds[i])
            && ngx_strncmp(kind->data, kinds[i], kind->len) == 0)
        {
            break;
        }
    }

    if (kinds[i] == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "cache= of the node \"%V\": "
                           "only an llm, http, sql or subgraph node's update "
                           "is kept", &node->name);
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    ngx_crc32_init(crc);

    for (i = 0; i < cf->args->nelts; i++) {
        ngx_crc32_update(&crc, value[i].data, value[i].len);
        ngx_crc32_update(&crc, (u_char *) "", 1);
    }

    ngx_crc32_final(crc);
    node->version = crc;

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_graph_edge_conf(ngx_conf_t *cf,
    ngx_http_agent_graph_ctx_t *ctx)
{
    ngx_str_t                   *value;
    ngx_http_agent_edge_conf_t  *e;

    value = cf->args->elts;

    if (cf->args->nelts < 3 || cf->args->nelts > 4) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "edge: use "
                           "\"edge FROM TO [if=EXPR];\"");
        return NGX_CONF_ERROR;
    }

    e = ngx_array_push(&ctx->edges);
    if (e == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(e, sizeof(ngx_http_agent_edge_conf_t));
    e->from = value[1];
    e->to = value[2];
    e->file = cf->conf_file->file.name;
    e->line = cf->conf_file->line;

    if (cf->args->nelts == 4) {
        if (value[3].len < 4 || ngx_strncmp(value[3].data, "if=", 3) != 0) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "unknown parameter "
                               "\"%V\" of an edge: only if=EXPR", &value[3]);
            return NGX_CONF_ERROR;
        }

        e->cond.data = value[3].data + 3;
        e->cond.len = value[3].len - 3;
    }

    return NGX_CONF_OK;
}


/* edges to nodes, conditions compiled, START and the last edges checked */

static ngx_int_t
ngx_http_agent_graph_link(ngx_conf_t *cf, ngx_http_agent_graph_ctx_t *ctx)
{
    u_char                       err[256];
    ngx_int_t                    from, to, ch;
    ngx_uint_t                   i, starts;
    ngx_http_agent_edge_t       *edge, *last;
    ngx_http_agent_node_t       *nodes;
    ngx_http_agent_graph_t      *graph;
    ngx_http_agent_channel_t    *channels;
    ngx_http_agent_edge_conf_t  *e;

    graph = ctx->graph;
    e = ctx->edges.elts;
    nodes = graph->nodes.elts;
    starts = 0;

    for (i = 0; i < ctx->edges.nelts; i++) {

        if (e[i].to.len == 5 && ngx_strncmp(e[i].to.data, "START", 5) == 0) {
            ngx_http_agent_graph_error(cf, &e[i].file, e[i].line, "an edge "
                                       "cannot lead to START");
            return NGX_ERROR;
        }

        if (e[i].to.len == 3 && ngx_strncmp(e[i].to.data, "END", 3) == 0) {
            to = NGX_HTTP_AGENT_END;

        } else {
            to = ngx_http_agent_graph_node(graph, &e[i].to);

            if (to == NGX_ERROR) {
                ngx_http_agent_graph_error(cf, &e[i].file, e[i].line,
                                           "edge to the undeclared node "
                                           "\"%V\"", &e[i].to);
                return NGX_ERROR;
            }
        }

        if (e[i].from.len == 5
            && ngx_strncmp(e[i].from.data, "START", 5) == 0)
        {
            if (e[i].cond.len || to == NGX_HTTP_AGENT_END) {
                ngx_http_agent_graph_error(cf, &e[i].file, e[i].line,
                                           "the START edge leads to a node "
                                           "and has no if=");
                return NGX_ERROR;
            }

            starts++;
            graph->entry = to;
            continue;
        }

        from = ngx_http_agent_graph_node(graph, &e[i].from);

        if (from == NGX_ERROR) {
            ngx_http_agent_graph_error(cf, &e[i].file, e[i].line,
                                       "edge from the undeclared node "
                                       "\"%V\"", &e[i].from);
            return NGX_ERROR;
        }

        edge = ngx_array_push(&nodes[from].edges);
        if (edge == NULL) {
            return NGX_ERROR;
        }

        ngx_memzero(edge, sizeof(ngx_http_agent_edge_t));
        edge->to = to;
        edge->to_name = e[i].to;
        edge->text = e[i].cond;

        if (e[i].cond.len == 0) {
            continue;
        }

        err[0] = '\0';
        edge->cond = ngx_http_agent_expr_parse(cf->pool, graph, &e[i].cond,
                                               err, sizeof(err));
        if (edge->cond == NULL) {
            ngx_http_agent_graph_error(cf, &e[i].file, e[i].line,
                                       "the condition \"if=%V\" does not "
                                       "parse: %s", &e[i].cond, err);
            return NGX_ERROR;
        }
    }

    /* interrupt_if=: a condition, as an edge's */

    channels = graph->channels.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        nodes[i].interrupt_resume = -1;

        if (nodes[i].interrupt_if_text.len == 0) {
            if (nodes[i].interrupt_value.len
                || nodes[i].interrupt_resume_name.len)
            {
                ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                           "interrupt_value= and "
                                           "interrupt_resume= of node \"%V\" "
                                           "want interrupt_if=",
                                           &nodes[i].name);
                return NGX_ERROR;
            }

            continue;
        }

        if (nodes[i].interrupt_resume_name.len) {
            ch = ngx_http_agent_graph_channel(graph,
                                              &nodes[i].interrupt_resume_name);

            if (ch == NGX_ERROR
                || channels[ch].reducer != NGX_HTTP_AGENT_REDUCE_VALUE)
            {
                ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                           "interrupt_resume=%V of node "
                                           "\"%V\" names no value channel",
                                           &nodes[i].interrupt_resume_name,
                                           &nodes[i].name);
                return NGX_ERROR;
            }

            nodes[i].interrupt_resume = ch;
        }

        err[0] = '\0';
        nodes[i].interrupt_if = ngx_http_agent_expr_parse(cf->pool, graph,
                                               &nodes[i].interrupt_if_text,
                                               err, sizeof(err));
        if (nodes[i].interrupt_if == NULL) {
            ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                       "interrupt_if=\"%V\" of node \"%V\" "
                                       "does not parse: %s",
                                       &nodes[i].interrupt_if_text,
                                       &nodes[i].name, err);
            return NGX_ERROR;
        }
    }

    if (starts != 1) {
        ngx_http_agent_graph_error(cf, &graph->file, graph->line,
                                   "agent_graph \"%V\" needs exactly one "
                                   "\"edge START NODE;\", it has %ui",
                                   &graph->name, starts);
        return NGX_ERROR;
    }

    if (ngx_http_agent_graph_parts_conf(cf, graph) != NGX_OK) {
        return NGX_ERROR;
    }

    channels = graph->channels.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {

        if (nodes[i].count_name.len) {
            ch = ngx_http_agent_graph_channel(graph, &nodes[i].count_name);

            if (ch == NGX_ERROR
                || channels[ch].reducer != NGX_HTTP_AGENT_REDUCE_SUM)
            {
                ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                           "count=%V of the node \"%V\" "
                                           "names no sum channel",
                                           &nodes[i].count_name,
                                           &nodes[i].name);
                return NGX_ERROR;
            }

            nodes[i].count = ch;
        }

        if (nodes[i].part) {
            continue;       /* only a part of other nodes' steps */
        }

        if (ngx_http_agent_graph_parts_led(cf, graph, &nodes[i]) != NGX_OK) {
            return NGX_ERROR;
        }

        if (nodes[i].edges.nelts == 0 && ngx_http_agent_graph_ends(&nodes[i]))
        {
            continue;       /* the run stops there */
        }

        if (nodes[i].edges.nelts == 0) {
            ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                       "no edge leaves the node \"%V\"",
                                       &nodes[i].name);
            return NGX_ERROR;
        }

        last = (ngx_http_agent_edge_t *) nodes[i].edges.elts
               + nodes[i].edges.nelts - 1;

        if (last->cond) {
            ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                       "the last edge leaving the node "
                                       "\"%V\" has an if=: add one without, "
                                       "as the way taken otherwise",
                                       &nodes[i].name);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * a fail node raises, as a LangGraph node that throws: nothing runs after
 * it, so it needs no edge out (one written is never taken)
 */

static ngx_uint_t
ngx_http_agent_graph_ends(ngx_http_agent_node_t *node)
{
    return node->kind->name.len == 4
           && ngx_strncmp(node->kind->name.data, "fail", 4) == 0;
}


/* END must be reachable from every node: walked back from END */

static ngx_int_t
ngx_http_agent_graph_reach(ngx_conf_t *cf, ngx_http_agent_graph_t *graph)
{
    u_char                 *ok;
    ngx_uint_t              i, k, changed;
    ngx_http_agent_edge_t  *e;
    ngx_http_agent_node_t  *nodes;

    nodes = graph->nodes.elts;

    ok = ngx_pcalloc(cf->temp_pool, graph->nodes.nelts + 1);
    if (ok == NULL) {
        return NGX_ERROR;
    }

    for (i = 0; i < graph->nodes.nelts; i++) {
        ok[i] = nodes[i].part
                || (nodes[i].edges.nelts == 0
                    && ngx_http_agent_graph_ends(&nodes[i]));
    }

    do {
        changed = 0;

        for (i = 0; i < graph->nodes.nelts; i++) {
            if (ok[i]) {
                continue;
            }

            e = nodes[i].edges.elts;

            for (k = 0; k < nodes[i].edges.nelts; k++) {
                if (e[k].to == NGX_HTTP_AGENT_END || ok[e[k].to]) {
                    ok[i] = 1;
                    changed = 1;
                    break;
                }
            }
        }

    } while (changed);

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (!ok[i]) {
            ngx_http_agent_graph_error(cf, &nodes[i].file, nodes[i].line,
                                       "END cannot be reached from the node "
                                       "\"%V\"", &nodes[i].name);
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


ngx_http_agent_graph_t *
ngx_http_agent_graph_find(ngx_array_t *graphs, ngx_str_t *name)
{
    ngx_uint_t                i;
    ngx_http_agent_graph_t  **g;

    g = graphs->elts;

    for (i = 0; i < graphs->nelts; i++) {
        if (g[i]->name.len == name->len
            && ngx_strncmp(g[i]->name.data, name->data, name->len) == 0)
        {
            return g[i];
        }
    }

    return NULL;
}


static void
ngx_http_agent_graph_error(ngx_conf_t *cf, ngx_str_t *file, ngx_uint_t line,
    const char *fmt, ...)
{
    u_char   *p, buf[NGX_MAX_CONF_ERRSTR];
    va_list   args;

    va_start(args, fmt);
    p = ngx_vslprintf(buf, buf + sizeof(buf), fmt, args);
    va_end(args);

    ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%*s in %V:%ui",
                  (size_t) (p - buf), buf, file, line);
}


static ngx_http_agent_kind_t *
ngx_http_agent_kind_find(ngx_str_t *name)
{
    ngx_uint_t              i;
    ngx_http_agent_kind_t  *k;

    for (i = 0; ngx_http_agent_graph_kinds && ngx_http_agent_graph_kinds[i];
         i++)
    {
        k = ngx_http_agent_graph_kinds[i];

        if (k->name.len == name->len
            && ngx_strncmp(k->name.data, name->data, name->len) == 0)
        {
            return k;
        }
    }

    return NULL;
}
