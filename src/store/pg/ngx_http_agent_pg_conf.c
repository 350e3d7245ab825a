
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"
#include "ngx_http_agent_util.h"


/*
 * The PostgreSQL store's configuration: agent_checkpoint_db's URL and
 * parameters (a URL that does not parse is never echoed with its
 * password), the connection's parameters, and the schema the master sets
 * up before the workers start.
 */


static ngx_int_t ngx_http_agent_pg_mask(ngx_pool_t *pool, ngx_str_t *url,
    ngx_str_t *masked);
static char *ngx_http_agent_pg_password_env(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);


ngx_http_agent_pg_conf_t  ngx_http_agent_pg_conf;
ngx_str_t                 ngx_http_agent_pg_resources_dir;


static ngx_http_agent_param_bounds_t  ngx_http_agent_pg_pool = { 1, 64 };

static ngx_http_agent_param_bounds_t  ngx_http_agent_pg_timeout = {
    1, NGX_MAX_INT_T_VALUE
};


static ngx_http_agent_param_t  ngx_http_agent_pg_conf_params[] = {
    { ngx_string("password_env"), ngx_http_agent_pg_password_env, 0, NULL },
    { ngx_string("pool"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_pg_conf_t, pool), &ngx_http_agent_pg_pool },
    { ngx_string("timeout"), ngx_http_agent_params_set_msec,
      offsetof(ngx_http_agent_pg_conf_t, timeout),
      &ngx_http_agent_pg_timeout },
    ngx_http_agent_null_param
};


/* agent_checkpoint_db postgresql://... [password_env=] [pool=] [timeout=] */

char *
ngx_http_agent_pg_conf_read(ngx_conf_t *cf, ngx_str_t *url)
{
    ngx_str_t  *value;

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

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_pg_conf_params,
                                    &value[2], cf->args->nelts - 2,
                                    &ngx_http_agent_pg_conf,
                                    "agent_checkpoint_db", NULL)
        != NGX_OK)
    {
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


/* read now, as key_env: the workers' environment is cleared */

static char *
ngx_http_agent_pg_password_env(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_http_agent_pg_conf_t *pcf = conf;

    char    *env;
    u_char  *name;

    name = ngx_pnalloc(cf->temp_pool, value->len + 1);
    if (name == NULL) {
        return NGX_CONF_ERROR;
    }

    *ngx_cpymem(name, value->data, value->len) = '\0';

    env = getenv((char *) name);

    if (env == NULL || *env == '\0') {
        return "the environment variable is not set";
    }

    pcf->password.len = ngx_strlen(env);
    pcf->password.data = (u_char *) env;

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
