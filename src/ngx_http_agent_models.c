
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_models.h"


/*
 * The models (agent_model) and databases (agent_database) of the http
 * block, and finding them by name or alias.
 */


char *
ngx_http_agent_model(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    u_char                  *p, *q, *last;
    ngx_str_t               *value, provider, *alias;
    ngx_uint_t               i;
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
    ngx_str_null(&provider);

    for (i = 2; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "provider=", 9) == 0) {
            provider.data = value[i].data + 9;
            provider.len = value[i].len - 9;
            continue;
        }

        if (ngx_strncmp(value[i].data, "url=", 4) == 0) {
            m->url.data = value[i].data + 4;
            m->url.len = value[i].len - 4;
            continue;
        }

        if (ngx_strncmp(value[i].data, "model=", 6) == 0) {
            m->model.data = value[i].data + 6;
            m->model.len = value[i].len - 6;
            continue;
        }

        if (ngx_strncmp(value[i].data, "key_env=", 8) == 0) {
            m->key_env.data = value[i].data + 8;
            m->key_env.len = value[i].len - 8;
            continue;
        }

        if (ngx_strncmp(value[i].data, "alias=", 6) == 0) {
            m->aliases = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t));
            if (m->aliases == NULL) {
                return NGX_CONF_ERROR;
            }

            p = value[i].data + 6;
            last = value[i].data + value[i].len;

            while (p < last) {
                q = ngx_strlchr(p, last, ',');
                if (q == NULL) {
                    q = last;
                }

                if (q > p) {
                    alias = ngx_array_push(m->aliases);
                    if (alias == NULL) {
                        return NGX_CONF_ERROR;
                    }

                    alias->data = p;
                    alias->len = q - p;
                }

                p = q + 1;
            }

            continue;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_model: invalid parameter \"%V\"",
                           &value[i]);
        return NGX_CONF_ERROR;
    }

    if (provider.len != 6 || ngx_strncmp(provider.data, "openai", 6) != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_model: unknown or missing provider "
                           "\"%V\", only \"provider=openai\" is supported",
                           &provider);
        return NGX_CONF_ERROR;
    }

    if (m->url.len == 0
        || (ngx_strncmp(m->url.data, "http://", 7) != 0
            && ngx_strncmp(m->url.data, "https://", 8) != 0))
    {
        return "needs \"url=http://...\" or \"url=https://...\"";
    }

    if (m->model.len == 0) {
        m->model = m->name;
    }

    return NGX_CONF_OK;
}


char *
ngx_http_agent_database(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_agent_main_conf_t *amcf = conf;

    ngx_str_t                  *value;
    ngx_http_agent_database_t  *db;

    value = cf->args->elts;

    if (ngx_http_agent_database_find(amcf, &value[1]) != NULL) {
        return "duplicate database name";
    }

    db = ngx_array_push(&amcf->databases);
    if (db == NULL) {
        return NGX_CONF_ERROR;
    }

    db->name = value[1];
    db->path = value[2];

    if (ngx_conf_full_name(cf->cycle, &db->path, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (access((char *) db->path.data, R_OK) != 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "agent_database \"%V\": cannot read \"%V\"",
                           &db->name, &db->path);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
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


ngx_http_agent_database_t *
ngx_http_agent_database_find(ngx_http_agent_main_conf_t *amcf,
    ngx_str_t *name)
{
    ngx_uint_t                  i;
    ngx_http_agent_database_t  *db;

    db = amcf->databases.elts;

    for (i = 0; i < amcf->databases.nelts; i++) {
        if (db[i].name.len == name->len
            && ngx_strncmp(db[i].name.data, name->data, name->len) == 0)
        {
            return &db[i];
        }
    }

    return NULL;
}
