
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools_int.h"


/*
 * A Vega-Lite spec written by the model is data for the page, never code
 * or a way out of it.  vega-embed merges a spec's usermeta.embedOptions
 * over the page's own options (actions, a sourceHeader that runs as
 * script, a config or patch fetched by URL), and data.url, image marks and
 * href make the browser fetch or open any address.  So a spec is written
 * anew from an allow-list of view keys; usermeta and href are dropped
 * wherever they are, a config that is not an object is dropped, and a url
 * or an image mark refuses the spec with words the model can act on (the
 * analyst's fixer asks it again).
 */


static ngx_int_t ngx_http_agent_vega_view(ngx_http_agent_json_t *j,
    yajl_val v, ngx_uint_t depth, ngx_str_t *err);
static ngx_int_t ngx_http_agent_vega_value(ngx_http_agent_json_t *j,
    const char *key, yajl_val v, ngx_uint_t depth, ngx_str_t *err);
static ngx_uint_t ngx_http_agent_vega_is_view(const char *key);
static ngx_uint_t ngx_http_agent_vega_in(const char *key,
    const char **list);


/* the keys of a view (the spec, a layer, a concat's member, a facet's) */
static const char  *ngx_http_agent_vega_view_keys[] = {
    "$schema", "title", "description", "name", "data", "datasets", "mark",
    "encoding", "transform", "params", "width", "height", "autosize",
    "background", "padding", "config", "projection", "view", "layer",
    "hconcat", "vconcat", "concat", "columns", "facet", "spec", "repeat",
    "resolve", "align", "bounds", "center", "spacing", NULL
};

/* never kept, at any depth */
static const char  *ngx_http_agent_vega_dropped[] = {
    "usermeta", "href", "embedOptions", NULL
};


ngx_int_t
ngx_http_agent_vega_clean(ngx_http_agent_json_t *j, yajl_val spec,
    ngx_str_t *err)
{
    if (spec == NULL || !YAJL_IS_OBJECT(spec)) {
        ngx_str_set(err, "the chart specification must be a JSON object");
        return NGX_DECLINED;
    }

    return ngx_http_agent_vega_view(j, spec, 0, err);
}


static ngx_int_t
ngx_http_agent_vega_view(ngx_http_agent_json_t *j, yajl_val v,
    ngx_uint_t depth, ngx_str_t *err)
{
    size_t       i;
    yajl_val     val;
    const char  *key;

    ngx_http_agent_json_obj(j);

    for (i = 0; i < v->u.object.len; i++) {
        key = v->u.object.keys[i];
        val = v->u.object.values[i];

        if (!ngx_http_agent_vega_in(key, ngx_http_agent_vega_view_keys)) {
            continue;
        }

        /* a spec of Vega-Lite's only: vega-embed reads its mode from it */
        if (ngx_strcmp(key, "$schema") == 0
            && (depth || !YAJL_IS_STRING(val)
                || ngx_strncmp(val->u.string,
                               "https://vega.github.io/schema/vega-lite/",
                               40) != 0))
        {
            continue;
        }

        if (ngx_strcmp(key, "config") == 0 && !YAJL_IS_OBJECT(val)) {
            continue;
        }

        ngx_http_agent_json_cstr(j, key);

        if (ngx_http_agent_vega_value(j, key, val, depth + 1, err)
            != NGX_OK)
        {
            return NGX_DECLINED;
        }
    }

    ngx_http_agent_json_end(j);

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_vega_value(ngx_http_agent_json_t *j, const char *key,
    yajl_val v, ngx_uint_t depth, ngx_str_t *err)
{
    size_t       i;
    yajl_val     val, type;
    const char  *k;

    if (depth > NGX_HTTP_AGENT_JSON_MAX_DEPTH) {
        ngx_str_set(err, "the chart specification is nested too deeply");
        return NGX_DECLINED;
    }

    if (ngx_strcmp(key, "mark") == 0) {
        type = YAJL_IS_OBJECT(v) ? ngx_http_agent_json_get(v, "type") : v;

        if (type && YAJL_IS_STRING(type)
            && ngx_strcasecmp((u_char *) type->u.string,
                              (u_char *) "image") == 0)
        {
            ngx_str_set(err, "image marks are not allowed: the chart may "
                        "load nothing from elsewhere");
            return NGX_DECLINED;
        }
    }

    if (v == NULL) {
        ngx_http_agent_json_null(j);
        return NGX_OK;
    }

    /* rows are data, whatever their columns are called */
    if (ngx_strcmp(key, "values") == 0 || ngx_strcmp(key, "datasets") == 0) {
        ngx_http_agent_json_val(j, v);
        return NGX_OK;
    }

    if (YAJL_IS_ARRAY(v)) {
        ngx_http_agent_json_arr(j);

        for (i = 0; i < v->u.array.len; i++) {
            val = v->u.array.values[i];

            if (ngx_http_agent_vega_is_view(key) && YAJL_IS_OBJECT(val)) {
                if (ngx_http_agent_vega_view(j, val, depth + 1, err)
                    != NGX_OK)
                {
                    return NGX_DECLINED;
                }

                continue;
            }

            if (ngx_http_agent_vega_value(j, "", val, depth + 1, err)
                != NGX_OK)
            {
                return NGX_DECLINED;
            }
        }

        ngx_http_agent_json_arr_end(j);
        return NGX_OK;
    }

    if (!YAJL_IS_OBJECT(v)) {
        ngx_http_agent_json_val(j, v);
        return NGX_OK;
    }

    if (ngx_strcmp(key, "spec") == 0) {
        return ngx_http_agent_vega_view(j, v, depth, err);
    }

    ngx_http_agent_json_obj(j);

    for (i = 0; i < v->u.object.len; i++) {
        k = v->u.object.keys[i];
        val = v->u.object.values[i];

        if (ngx_http_agent_vega_in(k, ngx_http_agent_vega_dropped)) {
            continue;
        }

        if (ngx_strcmp(k, "url") == 0) {
            ngx_str_set(err, "data from a url is not allowed: put the rows "
                        "in \"data\": {\"values\": [...]}");
            return NGX_DECLINED;
        }

        ngx_http_agent_json_cstr(j, k);

        if (ngx_http_agent_vega_value(j, k, val, depth + 1, err) != NGX_OK) {
            return NGX_DECLINED;
        }
    }

    ngx_http_agent_json_end(j);

    return NGX_OK;
}


/* the arrays whose members are views of their own */

static ngx_uint_t
ngx_http_agent_vega_is_view(const char *key)
{
    static const char  *views[] = {
        "layer", "hconcat", "vconcat", "concat", NULL
    };

    return ngx_http_agent_vega_in(key, views);
}


static ngx_uint_t
ngx_http_agent_vega_in(const char *key, const char **list)
{
    ngx_uint_t  i;

    for (i = 0; list[i]; i++) {
        if (ngx_strcmp(key, list[i]) == 0) {
            return 1;
        }
    }

    return 0;
}
