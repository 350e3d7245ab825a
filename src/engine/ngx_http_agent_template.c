
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_util.h"


static ngx_int_t ngx_http_agent_template_value(ngx_http_agent_run_t *run,
    ngx_pool_t *pool, ngx_str_t *name, ngx_str_t *out);


/*
 * Templates (prompt files, text=): "{{channel}}" and "{{channel.field}}"
 * become the value, strings as they are, anything else as JSON, and
 * "{{messages.last}}" the last message's text.  A name that is no channel
 * is left as it is written.
 */


#define NGX_HTTP_AGENT_TEMPLATE_VARS  32


ngx_int_t
ngx_http_agent_template_render(ngx_http_agent_run_t *run, ngx_pool_t *pool,
    ngx_str_t *tpl, ngx_str_t *out)
{
    u_char                       *p, *q, *last, *end;
    ngx_int_t                     rc;
    ngx_str_t                     name;
    ngx_uint_t                    n, i;
    ngx_http_agent_prompt_var_t   vars[NGX_HTTP_AGENT_TEMPLATE_VARS];

    n = 0;
    p = tpl->data;
    last = tpl->data + tpl->len;

    while (n < NGX_HTTP_AGENT_TEMPLATE_VARS
           && (q = ngx_strlcasestrn(p, last, (u_char *) "{{", 2 - 1))
              != NULL)
    {
        end = ngx_strlcasestrn(q + 2, last, (u_char *) "}}", 2 - 1);
        if (end == NULL) {
            break;
        }

        p = end + 2;

        name.data = q + 2;
        name.len = end - name.data;

        if (name.len == 0 || name.len > 128) {
            continue;
        }

        for (i = 0; i < n; i++) {
            if (vars[i].name.len == name.len
                && ngx_strncmp(vars[i].name.data, name.data, name.len) == 0)
            {
                break;
            }
        }

        if (i < n) {
            continue;
        }

        rc = ngx_http_agent_template_value(run, pool, &name, &vars[n].value);

        if (rc == NGX_ERROR) {
            return NGX_ERROR;
        }

        if (rc == NGX_OK) {
            vars[n].name = name;
            n++;
        }
    }

    return ngx_http_agent_prompt_render(pool, tpl, vars, n, out);
}


/* a channel (or channel.field) as text; NGX_DECLINED: no such channel */

static ngx_int_t
ngx_http_agent_template_value(ngx_http_agent_run_t *run, ngx_pool_t *pool,
    ngx_str_t *name, ngx_str_t *out)
{
    u_char                *dot, key[129];
    yajl_val               v;
    ngx_int_t              ch;
    ngx_str_t              channel, json, field;
    ngx_http_agent_msg_t  *m;

    channel = *name;
    ngx_str_null(&field);
    dot = ngx_strlchr(name->data, name->data + name->len, '.');

    if (dot) {
        channel.len = dot - name->data;
        field.data = dot + 1;
        field.len = name->data + name->len - field.data;
    }

    ch = ngx_http_agent_graph_channel(run->graph, &channel);

    if (ch == NGX_HTTP_AGENT_CH_MESSAGES && field.len == 4
        && ngx_strncmp(field.data, "last", 4) == 0)
    {
        /* {{messages.last}}: the last message's text */
        m = ngx_http_agent_graph_last_message(run, ch);

        if (m) {
            *out = m->content;

        } else {
            ngx_str_set(out, "");
        }

        return NGX_OK;
    }

    if (ch == NGX_ERROR || ch == NGX_HTTP_AGENT_CH_MESSAGES) {
        return NGX_DECLINED;
    }

    if (ngx_http_agent_graph_value(run, ch, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    v = ngx_http_agent_json_parse(pool, json.data, json.len, NULL);
    if (v == NULL) {
        return NGX_ERROR;
    }

    if (dot) {
        ngx_memcpy(key, field.data, field.len);
        key[field.len] = '\0';

        v = YAJL_IS_OBJECT(v) ? ngx_http_agent_json_get(v, (char *) key)
                              : NULL;

        if (v == NULL) {
            ngx_str_set(out, "");
            return NGX_OK;
        }
    }

    if (YAJL_IS_STRING(v)) {
        out->data = (u_char *) YAJL_GET_STRING(v);
        out->len = ngx_strlen(out->data);
        return NGX_OK;
    }

    if (YAJL_IS_NULL(v)) {
        ngx_str_set(out, "");
        return NGX_OK;
    }

    return ngx_http_agent_json_encode(pool, v, out);
}
