
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_chat.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"


/*
 * The configuration of graphs in nginx.conf (module.c's glue, split by
 * concern): agent_graph, agent_use_graph, agent_stream, and a location's
 * graph merged and checked with its agent_input.
 */


static char *ngx_http_agent_merge_assistants(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *conf, ngx_http_agent_main_conf_t *amcf);


/* the location's graph, stream format and inputs, checked against it */

char *
ngx_http_agent_conf_graph_merge(ngx_conf_t *cf, ngx_http_agent_loc_conf_t *conf)
{
    ngx_int_t                    ch;
    ngx_str_t                    name;
    ngx_uint_t                   i, k, n;
    ngx_http_agent_graph_t     **g;
    ngx_uint_t                   flags;
    ngx_http_agent_input_t      *in;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    /* what the location serves: its runs' graphs, or none */
    flags = conf->proto ? conf->proto->flags : 0;

    name = conf->graph_name;

    if (name.len == 0) {
        ngx_str_set(&name, "react");
    }

    conf->graph = ngx_http_agent_graph_find(&amcf->graphs, &name);

    if (conf->graph == NULL) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "agent_use_graph: unknown "
                      "graph \"%V\", declare it with agent_graph in %V:%ui",
                      &name, &conf->graph_file, conf->graph_line);
        return NGX_CONF_ERROR;
    }

    if (conf->graph->prompt_missing && (flags & NGX_HTTP_AGENT_PROTO_TURNS)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, NGX_ENOENT, "agent_prompts: "
                           "cannot open the prompt template \"%V/%s\" of "
                           "the built-in react graph, which an agent "
                           "location runs (agent_use_graph names another)",
                           &amcf->prompts_dir, NGX_HTTP_AGENT_PROMPT_SYSTEM);
        return NGX_CONF_ERROR;
    }

    /* checked by the directive */
    conf->format = ngx_http_agent_stream_format_find(&conf->format_name);

    if ((flags & NGX_HTTP_AGENT_PROTO_GRAPHS)
        && ngx_http_agent_merge_assistants(cf, conf, amcf) != NGX_CONF_OK)
    {
        return NGX_CONF_ERROR;
    }

    /* the inputs of turns: checked where turns run */
    if (conf->inputs == NULL || !(flags & NGX_HTTP_AGENT_PROTO_TURNS)) {
        return NGX_CONF_OK;
    }

    g = (flags & NGX_HTTP_AGENT_PROTO_GRAPHS)
        ? conf->assistant_graphs->elts : &conf->graph;
    n = (flags & NGX_HTTP_AGENT_PROTO_GRAPHS)
        ? conf->assistant_graphs->nelts : 1;

    in = conf->inputs->elts;

    for (k = 0; k < n; k++) {
        for (i = 0; i < conf->inputs->nelts; i++) {
            ch = ngx_http_agent_graph_channel(g[k], &in[i].name);

            if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES) {
                ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "agent_input: the "
                              "graph \"%V\" has no channel \"%V\" in %V:%ui",
                              &g[k]->name, &in[i].name, &in[i].file,
                              in[i].line);
                return NGX_CONF_ERROR;
            }

            if (k == 0) {
                in[i].channel = ch;
            }
        }
    }

    return NGX_CONF_OK;
}


/*
 * The graphs a protocol's location (the LangGraph API, AG-UI) runs: its
 * own (agent_use_graph) first, then those agent_assistants names; no
 * other, whatever a client names.
 */

static char *
ngx_http_agent_merge_assistants(ngx_conf_t *cf,
    ngx_http_agent_loc_conf_t *conf, ngx_http_agent_main_conf_t *amcf)
{
    ngx_str_t                *name;
    ngx_uint_t                i;
    ngx_http_agent_graph_t  **g;

    conf->assistant_graphs = ngx_array_create(cf->pool, 2,
                                              sizeof(ngx_http_agent_graph_t *));
    if (conf->assistant_graphs == NULL) {
        return NGX_CONF_ERROR;
    }

    g = ngx_array_push(conf->assistant_graphs);
    if (g == NULL) {
        return NGX_CONF_ERROR;
    }

    *g = conf->graph;

    if (conf->assistants == NULL) {
        return NGX_CONF_OK;
    }

    name = conf->assistants->elts;

    for (i = 0; i < conf->assistants->nelts; i++) {
        if (name[i].len == conf->graph->name.len
            && ngx_strncmp(name[i].data, conf->graph->name.data,
                           name[i].len) == 0)
        {
            continue;
        }

        g = ngx_array_push(conf->assistant_graphs);
        if (g == NULL) {
            return NGX_CONF_ERROR;
        }

        *g = ngx_http_agent_graph_find(&amcf->graphs, &name[i]);

        if (*g == NULL) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "agent_assistants: "
                          "unknown graph \"%V\", declare it with "
                          "agent_graph", &name[i]);
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


char *
ngx_http_agent_conf_graph(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    return ngx_http_agent_graph_block(cf, &amcf->graphs);
}


char *
ngx_http_agent_conf_graph_use(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_loc_conf_t *alcf = conf;

    ngx_str_t  *value;

    if (alcf->graph_name.len) {
        return "is duplicate";
    }

    value = cf->args->elts;

    alcf->graph_name = value[1];
    alcf->graph_file = cf->conf_file->file.name;
    alcf->graph_line = cf->conf_file->line;

    return NGX_CONF_OK;
}


char *
ngx_http_agent_conf_graph_stream(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_loc_conf_t *alcf = conf;

    ngx_str_t  *value;

    if (alcf->format_name.len) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_http_agent_stream_format_find(&value[1]) == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_stream: unknown "
                           "format \"%V\", use typed or events", &value[1]);
        return NGX_CONF_ERROR;
    }

    alcf->format_name = value[1];

    return NGX_CONF_OK;
}
