
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_pg.h"


/*
 * The PostgreSQL store's configuration: agent_checkpoint_db's URL and
 * parameters (a URL that does not parse is never echoed with its
 * password), the connection's parameters, and the schema the master sets
 * up before the workers start.
 */


static ngx_int_t ngx_http_agent_pg_mask(ngx_pool_t *pool, ngx_str_t *url,
    ngx_str_t *masked);


/* agent_checkpoint_db postgresql://... [password_env=] [pool=] [timeout=] */

char *
ngx_http_agent_pg_conf_read(ngx_conf_t *cf, ngx_str_t *url)
{
    char        *env;
    ngx_str_t   *value, v;
    ngx_int_t    n;
    ngx_uint_t   i;

    value = cf->args->elts;

    ngx_http_agent_pg_conf.url.len = url->len;
    ngx_http_agent_pg_conf.pool = 4;
    ngx_http_agent_pg_conf.timeout = 5000;
    ngx_str_null(&ngx_http_agent_pg_conf.password);

    /* libpq reads a C string */
    ngx_http_agent_pg_conf.url.data = ngx_pnalloc(cf->pool, url->len + 1);
    if (ngx_http_agent_pg_conf.url.data == NULL) {
        return NGX_CONF_ERROR;
    }

    *ngx_cpymem(ngx_http_agent_pg_conf.url.data, url->data, url->len) = '\0';

    for (i = 2; i < cf->args->nelts; i++) {

        if (ngx_strncmp(value[i].data, "password_env=", 13) == 0) {
            v.data = value[i].data + 13;
            v.len = value[i].len - 13;

            /* read now, as key_env: the workers' environment is cleared */
            env = getenv((char *) v.data);

            if (env == NULL || *env == '\0') {
                ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                                   "agent_checkpoint_db: the environment "
                                   "variable \"%V\" is not set", &v);
                return NGX_CONF_ERROR;
            }

            ngx_http_agent_pg_conf.password.len = ngx_strlen(env);
            ngx_http_agent_pg_conf.password.data = (u_char *) env;
            continue;
        }

        if (ngx_strncmp(value[i].data, "pool=", 5) == 0) {
            n = ngx_atoi(value[i].data + 5, value[i].len - 5);

            if (n < 1 || n > 64) {
                return "takes pool= from 1 to 64";
            }

            ngx_http_agent_pg_conf.pool = n;
            continue;
        }

        if (ngx_strncmp(value[i].data, "timeout=", 8) == 0) {
            v.data = value[i].data + 8;
            v.len = value[i].len - 8;

            n = ngx_parse_time(&v, 0);

            if (n == NGX_ERROR || n < 1) {
                return "takes timeout= as a time, such as 5s";
            }

            ngx_http_agent_pg_conf.timeout = n;
            continue;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_checkpoint_db: unknown parameter \"%V\"",
                           &value[i]);
        return NGX_CONF_ERROR;
    }

    /* a URL libpq cannot read is refused now, not at the first turn */

    {
    char              *err;
    ngx_str_t          masked, why;
    PQconninfoOption  *opts;

    opts = PQconninfoParse((char *) ngx_http_agent_pg_conf.url.data, &err);

    if (opts == NULL) {
        PQfreemem(err);

        /*
         * libpq's reason may quote the URL or a piece of it, the password
         * too: the reason given is the one for the URL with its password
         * masked, which alone is ever printed
         */

        if (ngx_http_agent_pg_mask(cf->pool, url, &masked) != NGX_OK) {
            return NGX_CONF_ERROR;
        }

        opts = PQconninfoParse((char *) masked.data, &err);

        if (opts) {
            ngx_str_set(&why, "its password cannot be read (are its "
                        "reserved characters percent-encoded?)");

        } else if (err) {
            why.data = (u_char *) err;
            why.len = ngx_strlen(err);

            /* libpq's reasons end with a newline */
            while (why.len && why.data[why.len - 1] == '\n') {
                why.len--;
            }

        } else {
            ngx_str_set(&why, "out of memory");
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_checkpoint_db: \"%V\" is not a "
                           "PostgreSQL URL: %V", &masked, &why);

        PQconninfoFree(opts);
        PQfreemem(err);
        return NGX_CONF_ERROR;
    }

    PQconninfoFree(opts);
    }

    return NGX_CONF_OK;
}


/*
 * The URL as it may be printed: user:***@ for any password.  The user
 * part runs to the last "@" before the query, not libpq's first "@" or
 * "/": a password with an unencoded "/" or "@" is masked whole all the
 * same.
 */

static ngx_int_t
ngx_http_agent_pg_mask(ngx_pool_t *pool, ngx_str_t *url, ngx_str_t *masked)
{
    u_char  *p, *start, *at, *colon, *last;

    masked->data = ngx_pnalloc(pool, url->len + sizeof("***"));
    if (masked->data == NULL) {
        return NGX_ERROR;
    }

    last = url->data + url->len;
    start = ngx_strlcasestrn(url->data, last, (u_char *) "://", 3 - 1);
    start = start ? start + 3 : url->data;

    at = NULL;

    for (p = start; p < last && *p != '?'; p++) {
        if (*p == '@') {
            at = p;
        }
    }

    colon = at ? ngx_strlchr(start, at, ':') : NULL;

    if (colon == NULL) {
        p = ngx_cpymem(masked->data, url->data, url->len);

    } else {
        p = ngx_cpymem(masked->data, url->data, colon + 1 - url->data);
        p = ngx_cpymem(p, "***", 3);
        p = ngx_cpymem(p, at, last - at);
    }

    *p = '\0';
    masked->len = p - masked->data;

    return NGX_OK;
}


/*
 * The master sets the schema up before the workers start, so that the
 * tables exist when nginx's start returns (a client, or agent-sqlite-to-pg,
 * may come at once).  It waits for that at most connect_timeout and the
 * statement timeout, at start and reload, never in a worker.  A server
 * that is not up yet is not an error at start: the workers connect, and
 * connect again, by themselves, and set the schema up as they do.
 */

ngx_int_t
ngx_http_agent_pg_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group)
{
    char         timeout[64];
    PGconn      *conn;
    PGresult    *res;
    const char  *keys[6], *values[6];

    ngx_http_agent_store_host_init(cycle);

    ngx_http_agent_pg_conninfo(keys, values, timeout, "2");

    conn = PQconnectdbParams(keys, values, 1);

    if (conn && PQstatus(conn) == CONNECTION_OK) {
        res = PQexec(conn, ngx_http_agent_pg_schema);

        if (PQresultStatus(res) != PGRES_COMMAND_OK
            && PQresultStatus(res) != PGRES_TUPLES_OK)
        {
            ngx_log_error(NGX_LOG_WARN, cycle->log, 0, "agent: the "
                          "PostgreSQL schema could not be set up at start, "
                          "the workers try again: %s",
                          PQresultErrorMessage(res));
        }

        PQclear(res);

    } else {
        ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0, "agent: PostgreSQL is "
                      "not reachable at start, the workers connect when it "
                      "is");
    }

    PQfinish(conn);

    /* where this host keeps the files of the resources it reads */
    ngx_http_agent_pg_resources_dir = *resources_dir;

    return ngx_http_agent_store_resources_dir(cycle, resources_dir, user,
                                              group);
}


/* the connection's parameters: ours first, what the URL says wins */

void
ngx_http_agent_pg_conninfo(const char **keys, const char **values,
    char *timeout, const char *connect)
{
    ngx_sprintf((u_char *) timeout, "-c statement_timeout=%M%Z",
                ngx_http_agent_pg_conf.timeout);

    keys[0] = "options";
    values[0] = timeout;
    keys[1] = "application_name";
    values[1] = "nginx-agent";
    keys[2] = "connect_timeout";
    values[2] = connect;
    keys[3] = "dbname";
    values[3] = (char *) ngx_http_agent_pg_conf.url.data;
    keys[4] = ngx_http_agent_pg_conf.password.len ? "password" : NULL;
    values[4] = (char *) ngx_http_agent_pg_conf.password.data;
    keys[5] = NULL;
    values[5] = NULL;
}
