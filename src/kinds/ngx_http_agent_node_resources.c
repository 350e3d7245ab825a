
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_engine.h"


/*
 * "node NAME resources output=CHANNEL text=CHANNEL": the session's CSV
 * files (seed 000's load_csv_metadata): as a JSON array, and as lines of
 * text for a prompt.
 */


typedef struct {
    ngx_str_t                  output_name;
    ngx_int_t                  output;
    ngx_str_t                  text_name;
    ngx_int_t                  text;
} ngx_http_agent_node_resources_conf_t;


static ngx_int_t ngx_http_agent_node_resources_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node);


static ngx_http_agent_param_t  ngx_http_agent_node_resources_params[] = {
    { ngx_string("output"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_resources_conf_t, output_name),
      &ngx_http_agent_param_optional },
    { ngx_string("text"), ngx_http_agent_params_set_channel,
      offsetof(ngx_http_agent_node_resources_conf_t, text_name),
      &ngx_http_agent_param_optional },
    ngx_http_agent_null_param
};


ngx_http_agent_kind_t  ngx_http_agent_resources_kind = {
    ngx_string("resources"),
    NULL,
    ngx_http_agent_node_resources_params,
    NULL,
    ngx_http_agent_node_resources_run,
    0,
    NULL,
    sizeof(ngx_http_agent_node_resources_conf_t)
};


static ngx_int_t
ngx_http_agent_node_resources_run(ngx_http_agent_run_t *run,
    ngx_http_agent_node_t *node)
{
    ngx_http_agent_node_resources_conf_t *rc = node->conf;

    u_char                     *p;
    size_t                      size;
    ngx_str_t                   json, text, quoted;
    ngx_uint_t                  i, n;
    ngx_http_agent_env_t       *env;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_resource_t  *res;

    env = run->data;

    /* listed when the turn began: a file uploaded since the last turn */
    if (ngx_http_agent_env_sql(run) != NGX_OK) {
        return NGX_ERROR;
    }

    res = env->sql.resources->elts;
    n = env->sql.resources->nelts;

    if (rc->output >= 0) {
        j = ngx_http_agent_json_create(run->pool);
        if (j == NULL) {
            return NGX_ERROR;
        }

        ngx_http_agent_json_arr(j);

        for (i = 0; i < n; i++) {
            ngx_http_agent_json_obj(j);
            ngx_http_agent_json_key(j, "id");
            ngx_http_agent_json_str(j, &res[i].id);
            ngx_http_agent_json_key(j, "name");
            ngx_http_agent_json_str(j, &res[i].name);
            ngx_http_agent_json_key(j, "table");
            ngx_http_agent_json_str(j, &res[i].table);
            ngx_http_agent_json_key(j, "columns");
            ngx_http_agent_json_raw(j, &res[i].columns);
            ngx_http_agent_json_key(j, "row_count");
            ngx_http_agent_json_int(j, res[i].row_count);
            ngx_http_agent_json_key(j, "size_bytes");
            ngx_http_agent_json_int(j, res[i].size_bytes);
            ngx_http_agent_json_end(j);
        }

        ngx_http_agent_json_arr_end(j);

        if (ngx_http_agent_json_done(j, &json) != NGX_OK
            || ngx_http_agent_graph_write_value(run->update, rc->output,
                                                &json)
               != NGX_OK)
        {
            return NGX_ERROR;
        }
    }

    if (rc->text < 0) {
        return NGX_OK;
    }

    size = 64;

    for (i = 0; i < n; i++) {
        size += res[i].name.len + res[i].table.len + res[i].columns.len + 96;
    }

    p = ngx_pnalloc(run->pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    text.data = p;

    if (n == 0) {
        p = ngx_sprintf(p, "(none uploaded)");
    }

    for (i = 0; i < n; i++) {
        p = ngx_sprintf(p, "- table %V%s (file %V, %L rows), columns: %V\n",
                        &res[i].table, i == 0 ? " (also csv_data)" : "",
                        &res[i].name, res[i].row_count, &res[i].columns);
    }

    text.len = p - text.data;

    if (ngx_http_agent_json_quote(run->pool, &text, &quoted) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_write_value(run->update, rc->text, &quoted);
}
