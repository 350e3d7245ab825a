
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/*
 * What a node's parameters refer to, once the whole configuration is read:
 * the checks the node kinds share, so that each kind's check() holds only
 * its own
 */


static ngx_int_t ngx_http_agent_graph_conf_refs(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    ngx_str_t *dir);
static ngx_int_t ngx_http_agent_graph_conf_file(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_str_t *dir, ngx_str_t *file);


/*
 * The channels and files a node's parameters name, those with a post
 * (params.c): checked and resolved before its kind's check(), which finds
 * them ready
 */

static ngx_int_t
ngx_http_agent_graph_conf_refs(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node, ngx_str_t *dir)
{
    u_char                          *conf;
    ngx_int_t                       *ch;
    ngx_str_t                       *name;
    ngx_uint_t                       i;
    ngx_array_t                    **names, **chs;
    ngx_http_agent_param_t          *p;
    ngx_http_agent_param_ref_t      *pc;

    conf = node->conf;

    for (p = node->kind->params; p && p->name.len; p++) {
        pc = p->post;

        if (pc == NULL) {
            continue;
        }

        if (p->set == ngx_http_agent_params_set_channels) {
            names = (ngx_array_t **) (conf + p->offset);
            chs = (ngx_array_t **) (conf + p->offset + sizeof(ngx_array_t *));

            if (*names == NULL) {
                continue;
            }

            *chs = ngx_array_create(cf->pool, (*names)->nelts,
                                    sizeof(ngx_int_t));
            if (*chs == NULL) {
                return NGX_ERROR;
            }

            name = (*names)->elts;

            for (i = 0; i < (*names)->nelts; i++) {
                ch = ngx_array_push(*chs);

                if (ch == NULL
                    || ngx_http_agent_graph_conf_channel(cf, graph, node,
                                                 (char *) p->name.data,
                                                 &name[i], ch, pc->messages)
                       != NGX_OK)
                {
                    return NGX_ERROR;
                }
            }

            continue;
        }

        name = (ngx_str_t *) (conf + p->offset);
        ch = (ngx_int_t *) (conf + p->offset + sizeof(ngx_str_t));

        if (p->set == ngx_http_agent_params_set_file) {
            if (name->len == 0 && pc->required) {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the %V node "
                                   "\"%V\" needs %V=FILE", &node->kind->name,
                                   &node->name, &p->name);
                return NGX_ERROR;
            }

            if (name->len
                && ngx_http_agent_graph_conf_file(cf, graph, dir, name)
                   != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        if (p->set != ngx_http_agent_params_set_channel) {
            continue;
        }

        if (name->len) {
            if (ngx_http_agent_graph_conf_channel(cf, graph, node,
                                                  (char *) p->name.data, name,
                                                  ch, pc->messages)
                != NGX_OK)
            {
                return NGX_ERROR;
            }

            continue;
        }

        if (pc->required) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the %V node \"%V\" "
                               "needs %V=CHANNEL", &node->kind->name,
                               &node->name, &p->name);
            return NGX_ERROR;
        }

        *ch = pc->messages ? NGX_HTTP_AGENT_CH_MESSAGES : -1;
    }

    return NGX_OK;
}


/*
 * A file of the prompts folder into the ngx_str_t after its name; one the
 * built-in graph names may be missing: an error only for a location that
 * runs the graph
 */

static ngx_int_t
ngx_http_agent_graph_conf_file(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_str_t *dir, ngx_str_t *file)
{
    ngx_int_t  rc;

    if (!graph->builtin) {
        return ngx_http_agent_prompt_load(cf, dir, file, file + 1);
    }

    rc = ngx_http_agent_prompt_builtin(cf, dir, file, file + 1);

    if (rc == NGX_DECLINED) {
        graph->prompt_missing = 1;
        return NGX_OK;
    }

    return rc;
}


/*
 * The tools= of the nodes that offer tools (llm nodes) before this one,
 * found back along the edges through nodes that offer none (a router, a
 * guard): each an ngx_str_t * pushed to lists
 */

ngx_int_t
ngx_http_agent_graph_conf_offers(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node, ngx_array_t *lists)
{
    u_char                 *seen;
    ngx_int_t              *queue;
    ngx_str_t             **list;
    ngx_uint_t              i, k, head, tail, n;
    ngx_http_agent_edge_t  *edge;
    ngx_http_agent_node_t  *nodes;

    n = graph->nodes.nelts;
    nodes = graph->nodes.elts;

    seen = ngx_pcalloc(cf->temp_pool, n);
    queue = ngx_palloc(cf->temp_pool, n * sizeof(ngx_int_t));
    if (seen == NULL || queue == NULL) {
        return NGX_ERROR;
    }

    head = 0;
    tail = 0;
    queue[tail++] = node->index;
    seen[node->index] = 1;

    for ( /* void */ ; head < tail; head++) {
        for (i = 0; i < n; i++) {
            edge = nodes[i].edges.elts;

            for (k = 0; k < nodes[i].edges.nelts; k++) {
                if (edge[k].to != queue[head]) {
                    continue;
                }

                if (nodes[i].kind->offers) {
                    list = ngx_array_push(lists);
                    if (list == NULL) {
                        return NGX_ERROR;
                    }

                    *list = nodes[i].kind->offers(nodes[i].conf);

                } else if (!seen[i]) {
                    seen[i] = 1;
                    queue[tail++] = i;
                }

                break;
            }
        }
    }

    return NGX_OK;
}


/* the graphs of the http block while their kinds check them */
static ngx_array_t  *ngx_http_agent_graph_checking;


/* after the http block: what the kinds resolve (channels, prompt files) */

ngx_int_t
ngx_http_agent_graph_check_kinds(ngx_conf_t *cf, ngx_array_t *graphs,
    ngx_str_t *dir)
{
    ngx_int_t                rc;
    ngx_str_t                name;
    ngx_uint_t               i, k, line;
    ngx_http_agent_node_t   *nodes;
    ngx_http_agent_graph_t **g;

    g = graphs->elts;

    ngx_http_agent_graph_checking = graphs;

    /* the kinds' errors name the node's line, as if nginx were still on it */
    name = cf->conf_file->file.name;
    line = cf->conf_file->line;

    for (i = 0; i < graphs->nelts; i++) {
        nodes = g[i]->nodes.elts;

        for (k = 0; k < g[i]->nodes.nelts; k++) {
            cf->conf_file->file.name = nodes[k].file;
            cf->conf_file->line = nodes[k].line;

            rc = ngx_http_agent_graph_conf_refs(cf, g[i], &nodes[k], dir);

            if (rc == NGX_OK && nodes[k].kind->check) {
                rc = nodes[k].kind->check(cf, g[i], &nodes[k]);
            }

            cf->conf_file->file.name = name;
            cf->conf_file->line = line;

            if (rc != NGX_OK) {
                ngx_http_agent_graph_checking = NULL;
                return NGX_ERROR;
            }
        }
    }

    ngx_http_agent_graph_checking = NULL;

    return NGX_OK;
}


ngx_http_agent_graph_t *
ngx_http_agent_graph_conf_graph(ngx_str_t *name)
{
    if (ngx_http_agent_graph_checking == NULL) {
        return NULL;
    }

    return ngx_http_agent_graph_find(ngx_http_agent_graph_checking, name);
}


/*
 * A parameter naming a channel: "messages" only where messages may go
 * (messages: 1), otherwise a declared channel; for the kinds' check().
 */

ngx_int_t
ngx_http_agent_graph_conf_channel(ngx_conf_t *cf, ngx_http_agent_graph_t *graph,
    ngx_http_agent_node_t *node, const char *param, ngx_str_t *name,
    ngx_int_t *channel, ngx_uint_t messages)
{
    ngx_int_t  ch;

    ch = ngx_http_agent_graph_channel(graph, name);

    if (ch == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s=%V of the node \"%V\" "
                           "names an undeclared channel", param, name,
                           &node->name);
        return NGX_ERROR;
    }

    if (ch == NGX_HTTP_AGENT_CH_MESSAGES && !messages) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s=%V of the node \"%V\": "
                           "not the messages channel", param, name,
                           &node->name);
        return NGX_ERROR;
    }

    *channel = ch;

    return NGX_OK;
}


/*
 * A,B: each a channel, as ngx_http_agent_graph_conf_channel(), into
 * channels
 */

ngx_int_t
ngx_http_agent_graph_conf_channels(ngx_conf_t *cf,
    ngx_http_agent_graph_t *graph, ngx_http_agent_node_t *node,
    const char *param, ngx_str_t *list, ngx_array_t *channels,
    ngx_uint_t messages)
{
    u_char     *p, *q, *last;
    ngx_int_t  *ch;
    ngx_str_t   name;

    if (ngx_array_init(channels, cf->pool, 4, sizeof(ngx_int_t)) != NGX_OK) {
        return NGX_ERROR;
    }

    p = list->data;
    last = list->data + list->len;

    for ( /* void */ ; p < last; p = q + 1) {
        q = ngx_strlchr(p, last, ',');
        if (q == NULL) {
            q = last;
        }

        name.data = p;
        name.len = q - p;

        ch = ngx_array_push(channels);

        if (ch == NULL
            || ngx_http_agent_graph_conf_channel(cf, graph, node, param,
                                                 &name, ch, messages)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}
