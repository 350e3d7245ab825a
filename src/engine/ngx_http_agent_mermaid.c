
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/*
 * A graph as a mermaid flowchart, as LangGraph's draw_mermaid() has it:
 * START and END as rounded nodes, each node with its kind, conditional
 * edges labelled with their if= and drawn dotted.
 */


#define NGX_HTTP_AGENT_MERMAID_HEAD                                           \
    "graph TD;\n    __start__([START]):::first\n"
#define NGX_HTTP_AGENT_MERMAID_LAST  "    __end__([END]):::last\n"
#define NGX_HTTP_AGENT_MERMAID_CLASSES                                        \
    "    classDef default fill:#f2f0ff,line-height:1.2\n"                     \
    "    classDef first fill-opacity:0\n"                                     \
    "    classDef last fill:#bfb6fc\n"


static u_char *ngx_http_agent_mermaid_text(u_char *p, ngx_str_t *s);
static u_char *ngx_http_agent_mermaid_id(u_char *p, ngx_str_t *name);


ngx_int_t
ngx_http_agent_mermaid(ngx_pool_t *pool, ngx_http_agent_graph_t *graph,
    ngx_str_t *out)
{
    u_char                 *p;
    size_t                  size;
    ngx_uint_t              i, k;
    ngx_http_agent_edge_t  *e;
    ngx_http_agent_node_t  *n, *entry;

    n = graph->nodes.elts;

    /*
     * the fixed lines, the edge from START, then each node and edge; every
     * byte of a condition may become a 6-byte entity
     */
    size = sizeof(NGX_HTTP_AGENT_MERMAID_HEAD) - 1
           + sizeof(NGX_HTTP_AGENT_MERMAID_LAST) - 1
           + sizeof("    __start__ --> _;\n") - 1
           + n[graph->entry].name.len
           + sizeof(NGX_HTTP_AGENT_MERMAID_CLASSES) - 1;

    for (i = 0; i < graph->nodes.nelts; i++) {
        size += 3 * n[i].name.len + n[i].kind->name.len
                + n[i].then_text.len + 50;
        e = n[i].edges.elts;

        for (k = 0; k < n[i].edges.nelts; k++) {
            size += n[i].name.len + e[k].to_name.len + 6 * e[k].text.len
                    + 40;
        }
    }

    p = ngx_pnalloc(pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    out->data = p;

    p = ngx_cpymem(p, NGX_HTTP_AGENT_MERMAID_HEAD,
                   sizeof(NGX_HTTP_AGENT_MERMAID_HEAD) - 1);

    for (i = 0; i < graph->nodes.nelts; i++) {
        if (n[i].part) {
            /* only a part of other nodes' steps: named in their boxes */
            continue;
        }

        p = ngx_cpymem(p, "    ", 4);
        p = ngx_http_agent_mermaid_id(p, &n[i].name);

        if (n[i].then_text.len) {
            p = ngx_sprintf(p, "[\"%V (%V, then %V)\"]\n", &n[i].name,
                            &n[i].kind->name, &n[i].then_text);

        } else {
            p = ngx_sprintf(p, "[\"%V (%V)\"]\n", &n[i].name,
                            &n[i].kind->name);
        }
    }

    p = ngx_cpymem(p, NGX_HTTP_AGENT_MERMAID_LAST,
                   sizeof(NGX_HTTP_AGENT_MERMAID_LAST) - 1);

    entry = &n[graph->entry];
    p = ngx_cpymem(p, "    __start__ --> ", 18);
    p = ngx_http_agent_mermaid_id(p, &entry->name);
    p = ngx_cpymem(p, ";\n", 2);

    for (i = 0; i < graph->nodes.nelts; i++) {
        e = n[i].edges.elts;

        for (k = 0; k < n[i].edges.nelts; k++) {
            p = ngx_cpymem(p, "    ", 4);
            p = ngx_http_agent_mermaid_id(p, &n[i].name);
            *p++ = ' ';

            if (e[k].cond) {
                p = ngx_cpymem(p, "-. \"", 4);
                p = ngx_http_agent_mermaid_text(p, &e[k].text);
                p = ngx_cpymem(p, "\" .-> ", 6);

            } else {
                p = ngx_cpymem(p, "--> ", 4);
            }

            if (e[k].to == NGX_HTTP_AGENT_END) {
                p = ngx_cpymem(p, "__end__;\n", 9);

            } else {
                p = ngx_http_agent_mermaid_id(p, &e[k].to_name);
                p = ngx_cpymem(p, ";\n", 2);
            }
        }
    }

    p = ngx_cpymem(p, NGX_HTTP_AGENT_MERMAID_CLASSES,
                   sizeof(NGX_HTTP_AGENT_MERMAID_CLASSES) - 1);

    out->len = p - out->data;

    return NGX_OK;
}


/* a label: quotes and the characters mermaid reads as markup, escaped */

static u_char *
ngx_http_agent_mermaid_text(u_char *p, ngx_str_t *s)
{
    size_t  i;

    for (i = 0; i < s->len; i++) {
        switch (s->data[i]) {

        case '"':
            p = ngx_cpymem(p, "#quot;", 6);
            break;

        case '<':
            p = ngx_cpymem(p, "#lt;", 4);
            break;

        case '>':
            p = ngx_cpymem(p, "#gt;", 4);
            break;

        case '\n':
        case '\r':
            *p++ = ' ';
            break;

        default:
            *p++ = s->data[i];
        }
    }

    return p;
}


/* a node's id: its name, with "_" after one that mermaid reads as a word */

static u_char *
ngx_http_agent_mermaid_id(u_char *p, ngx_str_t *name)
{
    ngx_uint_t  i;

    static ngx_str_t  words[] = {
        ngx_string("end"), ngx_string("graph"), ngx_string("subgraph"),
        ngx_string("style"), ngx_string("class"), ngx_string("classDef"),
        ngx_string("click"), ngx_string("linkStyle"), ngx_string("default"),
        ngx_string("flowchart"), ngx_null_string
    };

    p = ngx_cpymem(p, name->data, name->len);

    for (i = 0; words[i].len; i++) {
        if (words[i].len == name->len
            && ngx_strncasecmp(words[i].data, name->data, name->len) == 0)
        {
            *p++ = '_';
            break;
        }
    }

    return p;
}
