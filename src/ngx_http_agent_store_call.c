
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sys/random.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_pg.h"


/*
 * Which store runs, chosen by agent_checkpoint_db: a path is a SQLite
 * file, a postgresql:// URL a PostgreSQL server.  Everything above the
 * store calls it through ngx_http_agent_store and its calls.
 */


ngx_http_agent_store_actions_t  *ngx_http_agent_store =
    &ngx_http_agent_store_sqlite;


static ngx_uint_t
ngx_http_agent_store_is_url(ngx_str_t *db)
{
    return (db->len > 13 && ngx_strncmp(db->data, "postgresql://", 13) == 0)
           || (db->len > 11 && ngx_strncmp(db->data, "postgres://", 11) == 0);
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

    if (ngx_http_agent_store_is_url(field)) {
        return ngx_http_agent_store_pg_conf(cf, field);
    }

    if (cf->args->nelts > 2) {
        return "takes parameters with a postgresql:// URL only";
    }

    if (ngx_conf_full_name(cf->cycle, field, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/* in the master before it starts workers, and in each worker */

void
ngx_http_agent_store_select(ngx_str_t *db)
{
    ngx_http_agent_store = ngx_http_agent_store_is_url(db)
                           ? &ngx_http_agent_store_pg
                           : &ngx_http_agent_store_sqlite;
}


void
ngx_http_agent_store_call_init(ngx_http_agent_store_call_t *sc,
    ngx_pool_t *pool, ngx_log_t *log, ngx_http_agent_store_wake_pt wake,
    void *data)
{
    ngx_memzero(sc, sizeof(ngx_http_agent_store_call_t));

    sc->pool = pool;
    sc->log = log;
    sc->wake = wake;
    sc->data = data;
}


/* the answers read: the next pass starts afresh */

void
ngx_http_agent_store_call_reset(ngx_http_agent_store_call_t *sc)
{
    sc->n = 0;

    if (sc->answers) {
        sc->answers->nelts = 0;
    }
}


/* 36 bytes, a random (version 4) UUID */

void
ngx_http_agent_store_new_id(u_char *buf)
{
    u_char      r[16];
    ngx_uint_t  i;

    if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
        for (i = 0; i < sizeof(r); i++) {
            r[i] = (u_char) ngx_random();
        }
    }

    r[6] = (r[6] & 0x0f) | 0x40;
    r[8] = (r[8] & 0x3f) | 0x80;

    buf = ngx_hex_dump(buf, r, 4);
    *buf++ = '-';
    buf = ngx_hex_dump(buf, r + 4, 2);
    *buf++ = '-';
    buf = ngx_hex_dump(buf, r + 6, 2);
    *buf++ = '-';
    buf = ngx_hex_dump(buf, r + 8, 2);
    *buf++ = '-';
    (void) ngx_hex_dump(buf, r + 10, 6);
}


/* 24 bytes, "2026-01-31T12:00:00.000Z" */

u_char *
ngx_http_agent_store_now(u_char *buf)
{
    ngx_tm_t     tm;
    ngx_time_t  *tp;

    tp = ngx_timeofday();
    ngx_gmtime(tp->sec, &tm);

    return ngx_sprintf(buf, "%4d-%02d-%02dT%02d:%02d:%02d.%03MZ",
                       tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                       tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec,
                       tp->msec);
}
