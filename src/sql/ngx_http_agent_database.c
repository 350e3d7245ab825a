
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_sql.h"


/* the databases of the http block (agent_database), found by name */


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


/* a location's agent_use_database, its database found (merge time) */

char *
ngx_http_agent_database_use(ngx_conf_t *cf, ngx_http_agent_loc_conf_t *alcf)
{
    ngx_http_agent_main_conf_t  *amcf;

    if (alcf->use_database.len == 0) {
        return NGX_CONF_OK;
    }

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    alcf->database = ngx_http_agent_database_find(amcf, &alcf->use_database);

    if (alcf->database == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_use_database: unknown database \"%V\", "
                           "declare it with agent_database",
                           &alcf->use_database);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}
