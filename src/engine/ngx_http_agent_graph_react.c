
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/*
 * The built-in "react" graph (seed 000), in the same language; shipped
 * also as conf/graphs/react.conf, which t/graph_language.t keeps identical.
 */

static ngx_str_t  ngx_http_agent_react_text = ngx_string(
"    channel csv_resources value;\n"
"    channel csv_metadata  value;\n"
"    channel db_schema     value 'default=\"(none)\"';\n"
"    channel model_calls   sum;\n"
"\n"
"    node load_csv_metadata resources output=csv_resources "
"text=csv_metadata;\n"
"    node model llm prompt=react_system.md\n"
"        tools=load_csv_data,execute_sql_query count=model_calls;\n"
"    node tools tools;\n"
"\n"
"    edge START load_csv_metadata;\n"
"    edge load_csv_metadata model;\n"
"    edge model tools if=tool_calls;\n"
"    edge model END;\n"
"    edge tools model;\n"
"}\n");


/* the compiled-in react graph, unless nginx.conf declares its own */

ngx_int_t
ngx_http_agent_graph_builtin(ngx_conf_t *cf, ngx_array_t *graphs)
{
    char                    *rv;
    ngx_buf_t                b;
    ngx_str_t                name;
    ngx_conf_t               save;
    ngx_uint_t               i;
    ngx_conf_file_t          file, *prev;
    ngx_http_agent_node_t   *nodes;
    ngx_http_agent_graph_t  *graph, **gp;

    ngx_str_set(&name, "react");

    if (ngx_http_agent_graph_find(graphs, &name) != NULL) {
        return NGX_OK;
    }

    graph = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_graph_t));
    if (graph == NULL) {
        return NGX_ERROR;
    }

    graph->name = name;
    graph->builtin = 1;
    ngx_str_set(&graph->file, "the built-in react graph");

    /*
     * the text is read as a block of a file: a valid descriptor that is
     * never read (its size is 0), the buffer already full
     */

    ngx_memzero(&file, sizeof(ngx_conf_file_t));
    ngx_memzero(&b, sizeof(ngx_buf_t));

    b.start = ngx_http_agent_react_text.data;
    b.pos = b.start;
    b.last = b.start + ngx_http_agent_react_text.len;
    b.end = b.last;
    b.temporary = 1;

    file.file.fd = 0;
    file.file.name = graph->file;
    file.file.log = cf->log;
    file.line = 1;
    file.buffer = &b;

    save = *cf;
    prev = cf->conf_file;
    cf->conf_file = &file;

    rv = ngx_http_agent_graph_parse(cf, graph);

    *cf = save;
    cf->conf_file = prev;

    if (rv != NGX_CONF_OK) {
        return NGX_ERROR;
    }

    /* its nodes' errors (a missing prompt file) name the http block */

    nodes = graph->nodes.elts;

    for (i = 0; i < graph->nodes.nelts; i++) {
        nodes[i].file = cf->conf_file->file.name;
        nodes[i].line = cf->conf_file->line;
    }

    gp = ngx_array_push(graphs);
    if (gp == NULL) {
        return NGX_ERROR;
    }

    *gp = graph;

    return NGX_OK;
}
