
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_store.h"


/*
 * The session's uploaded files a turn's SQL tool attaches: only those the
 * module made, fetched to this host from a shared store first.
 */


static ngx_uint_t ngx_http_agent_turn_file_ours(ngx_http_agent_turn_t *turn,
    ngx_http_agent_resource_t *res);


/* agent_resources_dir/ID.sqlite, ID a UUID: a path the module made */

static ngx_uint_t
ngx_http_agent_turn_file_ours(ngx_http_agent_turn_t *turn,
    ngx_http_agent_resource_t *res)
{
    u_char                      c;
    ngx_str_t                  *dir;
    ngx_uint_t                  i;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_get_module_main_conf(turn->request, ngx_http_agent_module);
    dir = &amcf->resources_dir;

    if (res->id.len != 36
        || res->path.len != dir->len + 1 + 36 + sizeof(".sqlite") - 1
        || ngx_strncmp(res->path.data, dir->data, dir->len) != 0
        || res->path.data[dir->len] != '/'
        || ngx_strncmp(res->path.data + dir->len + 1, res->id.data, 36) != 0
        || ngx_strncmp(res->path.data + dir->len + 37, ".sqlite", 7) != 0)
    {
        goto refused;
    }

    for (i = 0; i < 36; i++) {
        c = res->id.data[i];

        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'))
        {
            goto refused;
        }
    }

    return 1;

refused:

    ngx_log_error(NGX_LOG_ERR, turn->request->connection->log, 0,
                  "agent: session \"%V\": a file row whose path is not "
                  "agent_resources_dir/ID.sqlite is not read",
                  &turn->session_id);

    return 0;
}


/* the session's files on this host: fetched once from a shared store */

ngx_int_t
ngx_http_agent_turn_files(ngx_http_agent_turn_t *turn,
    ngx_array_t *resources)
{
    ngx_int_t                   rc;
    ngx_uint_t                  i;
    ngx_http_agent_resource_t  *res;

    res = resources->elts;

    for (i = 0; i < resources->nelts; i++) {

        /*
         * the SQL tool attaches only a file the module made: the row's path
         * must be agent_resources_dir/ID.sqlite, whatever the store holds
         * (a row moved from elsewhere, or written by hand)
         */

        if (!ngx_http_agent_turn_file_ours(turn, &res[i])) {
            return ngx_http_agent_reply_error(turn->request,
                                              NGX_HTTP_INTERNAL_SERVER_ERROR,
                                              "the session's CSV file \"%V\" "
                                              "is not one of this server's",
                                              &res[i].name);
        }

        rc = ngx_http_agent_store_resource_fetch(&turn->sc, &res[i]);

        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (rc != NGX_OK) {
            return ngx_http_agent_reply_error(turn->request,
                                              NGX_HTTP_INTERNAL_SERVER_ERROR,
                                              "the session's CSV file \"%V\" "
                                              "could not be fetched",
                                              &res[i].name);
        }
    }

    turn->env.sql.resources = resources;

    return NGX_OK;
}
