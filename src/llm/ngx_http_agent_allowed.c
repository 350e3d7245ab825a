
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_sql.h"


/*
 * What a location may reach is what its configuration names: the models
 * of agent_models (all declared ones without it), the databases of
 * agent_databases (without it, only the location's agent_use_database).
 * A name outside the list is answered as an unknown one.
 */


ngx_http_agent_model_t *
ngx_http_agent_allowed_model(ngx_http_agent_main_conf_t *amcf,
    ngx_http_agent_loc_conf_t *alcf, ngx_str_t *name)
{
    ngx_str_t               *n;
    ngx_uint_t               i;
    ngx_http_agent_model_t  *m;

    m = ngx_http_agent_model_find(amcf, name);

    if (m == NULL || alcf->models == NULL) {
        return m;
    }

    n = alcf->models->elts;

    for (i = 0; i < alcf->models->nelts; i++) {
        if (ngx_http_agent_model_find(amcf, &n[i]) == m) {
            return m;
        }
    }

    return NULL;
}


/* the location's default model: the first it may use */

ngx_http_agent_model_t *
ngx_http_agent_allowed_model_default(ngx_http_agent_main_conf_t *amcf,
    ngx_http_agent_loc_conf_t *alcf)
{
    ngx_str_t  *n;

    if (alcf->models == NULL) {
        return amcf->models.nelts ? amcf->models.elts : NULL;
    }

    n = alcf->models->elts;

    return ngx_http_agent_model_find(amcf, &n[0]);
}


ngx_http_agent_database_t *
ngx_http_agent_allowed_database(ngx_http_agent_main_conf_t *amcf,
    ngx_http_agent_loc_conf_t *alcf, ngx_str_t *name)
{
    ngx_str_t                  *n;
    ngx_uint_t                  i;
    ngx_http_agent_database_t  *db;

    db = ngx_http_agent_database_find(amcf, name);

    if (db == NULL) {
        return NULL;
    }

    if (alcf->databases == NULL) {
        return db == alcf->database ? db : NULL;
    }

    n = alcf->databases->elts;

    for (i = 0; i < alcf->databases->nelts; i++) {
        if (n[i].len == db->name.len
            && ngx_strncmp(n[i].data, db->name.data, n[i].len) == 0)
        {
            return db;
        }
    }

    return NULL;
}


/* nginx -t: every name of agent_models and agent_databases is declared */

char *
ngx_http_agent_allowed_check(ngx_conf_t *cf, ngx_http_agent_loc_conf_t *alcf)
{
    ngx_str_t                   *n;
    ngx_uint_t                   i;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    n = alcf->models ? alcf->models->elts : NULL;

    for (i = 0; n && i < alcf->models->nelts; i++) {
        if (ngx_http_agent_model_find(amcf, &n[i]) == NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "agent_models: unknown model \"%V\", "
                               "declare it with agent_model", &n[i]);
            return NGX_CONF_ERROR;
        }
    }

    n = alcf->databases ? alcf->databases->elts : NULL;

    for (i = 0; n && i < alcf->databases->nelts; i++) {
        if (ngx_http_agent_database_find(amcf, &n[i]) == NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "agent_databases: unknown database \"%V\", "
                               "declare it with agent_database", &n[i]);
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


/*
 * agent_models NAME ...; agent_databases NAME ...; (and agent_assistants):
 * every name, once
 */

char *
ngx_http_agent_allowed_slot(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    char  *p = conf;

    ngx_str_t     *value, *s;
    ngx_uint_t     i;
    ngx_array_t  **a;

    a = (ngx_array_t **) (p + cmd->offset);

    if (*a != NGX_CONF_UNSET_PTR) {
        return "is duplicate";
    }

    *a = ngx_array_create(cf->pool, cf->args->nelts - 1, sizeof(ngx_str_t));
    if (*a == NULL) {
        return NGX_CONF_ERROR;
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        s = ngx_array_push(*a);
        if (s == NULL) {
            return NGX_CONF_ERROR;
        }

        *s = value[i];
    }

    return NGX_CONF_OK;
}
