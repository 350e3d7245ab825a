
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_llm_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_ops.h"


/*
 * The models of the http block (agent_model), their fallbacks checked,
 * and finding them by name or alias.
 */


static char *ngx_http_agent_model_provider(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static char *ngx_http_agent_model_headers_conf(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
static ngx_int_t ngx_http_agent_model_headers(ngx_array_t *headers);


static ngx_http_agent_param_bounds_t  ngx_http_agent_model_retries = {
    0, 10
};

static ngx_http_agent_param_bounds_t  ngx_http_agent_model_tokens = {
    1, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_model_params[] = {
    { ngx_string("provider"), ngx_http_agent_model_provider, 0, NULL },
    { ngx_string("url"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_model_t, url), NULL },
    { ngx_string("model"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_model_t, model), NULL },
    { ngx_string("key_env"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_model_t, key_env), NULL },
    { ngx_string("fallback"), ngx_http_agent_params_set_str,
      offsetof(ngx_http_agent_model_t, fallback_name), NULL },
    { ngx_string("alias"), ngx_http_agent_params_set_list,
      offsetof(ngx_http_agent_model_t, aliases), NULL },
    { ngx_string("headers"), ngx_http_agent_model_headers_conf,
      offsetof(ngx_http_agent_model_t, headers), NULL },
    { ngx_string("retries"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_model_t, retries),
      &ngx_http_agent_model_retries },
    { ngx_string("max_tokens"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_model_t, max_tokens),
      &ngx_http_agent_model_tokens },
    { ngx_string("price"), ngx_http_agent_cost_price,
      offsetof(ngx_http_agent_model_t, price), NULL },
    { ngx_string("cache"), ngx_http_agent_params_set_flag,
      offsetof(ngx_http_agent_model_t, cache), NULL },
    { ngx_string("backoff"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_model_t, backoff), NULL },
    { ngx_string("connect_timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_model_t, connect_timeout), NULL },
    { ngx_string("first_token_timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_model_t, first_token_timeout), NULL },
    { ngx_string("idle_timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_model_t, idle_timeout), NULL },
    { ngx_string("timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_model_t, timeout), NULL },
    ngx_http_agent_null_param
};


char *
ngx_http_agent_model(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    ngx_str_t               *value;
    ngx_http_agent_model_t  *m;

    value = cf->args->elts;

    if (ngx_http_agent_model_find(amcf, &value[1]) != NULL) {
        return "duplicate model name";
    }

    m = ngx_array_push(&amcf->models);
    if (m == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(m, sizeof(ngx_http_agent_model_t));
    m->name = value[1];
    m->retries = 2;
    m->backoff = 500;
    m->connect_timeout = NGX_CONF_UNSET_MSEC;
    m->idle_timeout = NGX_CONF_UNSET_MSEC;
    m->timeout = NGX_CONF_UNSET_MSEC;
    m->cache = 1;
    m->file = cf->conf_file->file.name;
    m->line = cf->conf_file->line;

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_model_params,
                                    &value[2], cf->args->nelts - 2, m,
                                    "agent_model", &m->name)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (m->provider == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_model \"%V\": missing provider, one of "
                           "\"provider=openai\", \"provider=azure\", "
                           "\"provider=anthropic\" or \"provider=gemini\"",
                           &m->name);
        return NGX_CONF_ERROR;
    }

    if (m->url.len == 0) {
        m->url = m->provider->url;
    }

    if (m->url.len == 0
        || (ngx_strncmp(m->url.data, "http://", 7) != 0
            && ngx_strncmp(m->url.data, "https://", 8) != 0))
    {
        return "needs \"url=http://...\" or \"url=https://...\"";
    }

    /* a base URL: the provider adds its path */
    while (m->url.len > 8 && m->url.data[m->url.len - 1] == '/') {
        m->url.len--;
    }

    if (m->model.len == 0) {
        m->model = m->name;
    }

    return NGX_CONF_OK;
}


/* every fallback= names a model, and no chain of them comes back */

char *
ngx_http_agent_model_check(ngx_conf_t *cf, ngx_http_agent_main_conf_t *amcf)
{
    ngx_uint_t               i, n;
    ngx_http_agent_model_t  *m, *f;

    m = amcf->models.elts;

    for (i = 0; i < amcf->models.nelts; i++) {
        if (m[i].fallback_name.len == 0) {
            continue;
        }

        f = ngx_http_agent_model_find(amcf, &m[i].fallback_name);

        if (f == NULL) {
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                          "agent_model \"%V\": unknown fallback model "
                          "\"%V\" in %V:%ui", &m[i].name,
                          &m[i].fallback_name, &m[i].file, m[i].line);
            return NGX_CONF_ERROR;
        }

        m[i].fallback = f;
    }

    for (i = 0; i < amcf->models.nelts; i++) {
        f = &m[i];

        for (n = 0; f && n <= amcf->models.nelts; n++) {
            f = f->fallback;

            if (f == &m[i]) {
                ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                              "agent_model \"%V\": its fallbacks come back "
                              "to it in %V:%ui", &m[i].name, &m[i].file,
                              m[i].line);
                return NGX_CONF_ERROR;
            }
        }
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_model_provider(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_model_t *m = conf;

    m->provider = ngx_http_agent_providers_find(value);

    return m->provider ? NGX_CONF_OK
                       : "unknown provider: openai, azure, anthropic or gemini";
}


static char *
ngx_http_agent_model_headers_conf(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_model_t *m = conf;

    if (ngx_http_agent_params_set_list(cf, p, value, conf) != NGX_CONF_OK) {
        return NGX_CONF_ERROR;
    }

    if (ngx_http_agent_model_headers(m->headers) != NGX_OK) {
        return "Name:value, ... without control bytes";
    }

    return NGX_CONF_OK;
}


/* "Name:value" each, a token for a name, no control bytes */

static ngx_int_t
ngx_http_agent_model_headers(ngx_array_t *headers)
{
    u_char      *p, *colon;
    ngx_str_t   *h;
    ngx_uint_t   i;

    h = headers->elts;

    for (i = 0; i < headers->nelts; i++) {
        colon = ngx_strlchr(h[i].data, h[i].data + h[i].len, ':');

        if (colon == NULL || colon == h[i].data) {
            return NGX_ERROR;
        }

        for (p = h[i].data; p < h[i].data + h[i].len; p++) {
            if (*p < 0x20 || *p == 0x7f
                || (p < colon && (*p == ' ' || *p == '\t')))
            {
                return NGX_ERROR;
            }
        }
    }

    return NGX_OK;
}


ngx_http_agent_model_t *
ngx_http_agent_model_find(ngx_http_agent_main_conf_t *amcf, ngx_str_t *name)
{
    ngx_str_t               *alias;
    ngx_uint_t               i, j;
    ngx_http_agent_model_t  *m;

    m = amcf->models.elts;

    for (i = 0; i < amcf->models.nelts; i++) {
        if (m[i].name.len == name->len
            && ngx_strncmp(m[i].name.data, name->data, name->len) == 0)
        {
            return &m[i];
        }

        if (m[i].aliases == NULL) {
            continue;
        }

        alias = m[i].aliases->elts;

        for (j = 0; j < m[i].aliases->nelts; j++) {
            if (alias[j].len == name->len
                && ngx_strncmp(alias[j].data, name->data, name->len) == 0)
            {
                return &m[i];
            }
        }
    }

    return NULL;
}
