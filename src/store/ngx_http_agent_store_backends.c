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


ngx_http_agent_store_backend_t  *ngx_http_agent_store =
    &ngx_http_agent_store_sqlite;


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


/* in the master before it starts workers, and in each worker */

void
ngx_http_agent_store_select(ngx_str_t *db)
{
    ngx_http_agent_store = ngx_http_agent_store_of(db);
}
