/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"


/*
 * The store's back ends, and the one place one is chosen: by the scheme
 * of agent_checkpoint_db.  A new back end is its folder, its table and a
 * line here.
 */


static ngx_http_agent_store_backend_t *ngx_http_agent_store_of(
    ngx_str_t *db);


static ngx_http_agent_store_backend_t *
ngx_http_agent_store_of(ngx_str_t *db)
{
    if ((db->len > 13 && ngx_strncmp(db->data, "postgresql://", 13) == 0)
        || (db->len > 11 && ngx_strncmp(db->data, "postgres://", 11) == 0))
    {
        return &ngx_http_agent_store_pg;
    }

    return &ngx_http_agent_store_sqlite;
}


/* agent_checkpoint_db PATH | postgresql://... [password_env=] [pool=] ... */

char *
ngx_http_agent_store_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    char  *p = conf;

    ngx_str_t  *field, *value;

    field = (ngx_str_t *) (p + cmd->offset);

    if (field->data) {
        return "is duplicate";
    }

    value = cf->args->elts;
    *field = value[1];

    return ngx_http_agent_store_of(field)->conf(cf, field);
}


/*
 * in the master before it starts workers, and in each worker; there, a
 * test's knob (docs/testing.md), passed by nginx's env directive alone:
 * "1", SQLite's answers come later, as PostgreSQL's, so that every pass
 * is made again; "astray", and a pass made again asks differently
 */

void
ngx_http_agent_store_select(ngx_str_t *db)
{
    char  *defer;

    ngx_http_agent_store = ngx_http_agent_store_of(db);

    defer = getenv("NGX_AGENT_STORE_DEFER");

    ngx_http_agent_store_defer =
        (defer == NULL || defer[0] == '\0' || ngx_strcmp(defer, "0") == 0)
        ? 0
        : (ngx_strcmp(defer, "astray") == 0) ? NGX_HTTP_AGENT_STORE_ASTRAY
                                             : NGX_HTTP_AGENT_STORE_DEFER;
}
