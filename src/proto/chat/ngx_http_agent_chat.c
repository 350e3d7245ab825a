
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#if (NGX_THREADS)
#include <ngx_thread_pool.h>
#endif

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_chat_int.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_stream.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sql.h"


/* POST /connection while its schema is read */
typedef struct {
    ngx_http_request_t             *request;
    ngx_str_t                       id;
    ngx_str_t                       name;
    ngx_str_t                       tables;
} ngx_http_agent_connect_t;


static void ngx_http_agent_connection_wake(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_connection_read(void *data, ngx_int_t rc,
    ngx_str_t *tables);
static ngx_int_t ngx_http_agent_connection_save(ngx_http_request_t *r,
    ngx_http_agent_connect_t *cn, ngx_str_t *tables);
static ngx_int_t ngx_http_agent_connection_write(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_run_t *run, void *data);


ngx_int_t
ngx_http_agent_chat_model_answer(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    u_char                      *key;
    yajl_val                     v;
    ngx_int_t                    rc;
    ngx_str_t                    name;
    ngx_uint_t                   i;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_model_t      *m, *cur;
    ngx_http_agent_session_t     s;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);
    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    cur = s.model.len ? ngx_http_agent_allowed_model(amcf, alcf, &s.model)
                      : NULL;

    if (cur == NULL) {
        cur = ngx_http_agent_allowed_model_default(amcf, alcf);
    }

    if (body) {
        rc = ngx_http_agent_reply_parse(r, body, &v, 0);
        if (rc != NGX_OK) {
            return rc;
        }

        if (ngx_http_agent_json_get_str(v, "name", &name) != NGX_OK) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "\"name\" must be a string");
        }

        cur = ngx_http_agent_allowed_model(amcf, alcf, &name);
        if (cur == NULL) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                              "there is no model \"%V\"",
                                              &name);
        }

        rc = ngx_http_agent_store_session_set(ngx_http_agent_reply_sc(r), id,
                                              NGX_HTTP_AGENT_STORE_MODEL,
                                              &cur->name);
        if (rc == NGX_AGAIN) {
            return NGX_AGAIN;
        }

        if (rc != NGX_OK) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                              "the model could not be saved");
        }
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "model");

    if (cur) {
        ngx_http_agent_json_str(j, &cur->name);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "models");
    ngx_http_agent_json_obj(j);

    m = amcf->models.elts;

    for (i = 0; i < amcf->models.nelts; i++) {
        if (ngx_http_agent_allowed_model(amcf, alcf, &m[i].name) == NULL) {
            continue;
        }

        ngx_http_agent_json_str(j, &m[i].name);

        key = NULL;
        if (m[i].key_env.len) {
            key = (u_char *) getenv((char *) m[i].key_env.data);
        }

        ngx_http_agent_json_bool(j, m[i].key_env.len == 0
                                    || (key && *key));
    }

    ngx_http_agent_json_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/*
 * GET /{id}/connection: the session's database and the ones this location
 * may use, for a picker (seed 004's connections, as names)
 */

static ngx_int_t
ngx_http_agent_connection_get(ngx_http_request_t *r, ngx_str_t *id)
{
    ngx_int_t                    rc;
    ngx_uint_t                   i;
    ngx_http_agent_json_t       *j;
    ngx_http_agent_session_t     s;
    ngx_http_agent_database_t   *db;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "thread_id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "database");

    if (s.database.len
        && ngx_http_agent_allowed_database(amcf, alcf, &s.database))
    {
        ngx_http_agent_json_str(j, &s.database);

    } else {
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "databases");
    ngx_http_agent_json_arr(j);

    db = amcf->databases.elts;

    for (i = 0; i < amcf->databases.nelts; i++) {
        if (ngx_http_agent_allowed_database(amcf, alcf, &db[i].name)) {
            ngx_http_agent_json_str(j, &db[i].name);
        }
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


ngx_int_t
ngx_http_agent_chat_connection(ngx_http_request_t *r, ngx_str_t *id,
    ngx_str_t *body)
{
    yajl_val                     v;
    ngx_int_t                    rc;
    ngx_str_t                    tables;
    ngx_http_agent_session_t     s;
    ngx_http_agent_database_t   *db;
    ngx_http_agent_loc_conf_t   *alcf;
    ngx_http_agent_main_conf_t  *amcf;
    ngx_http_agent_connect_t    *cn;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    amcf = ngx_http_get_module_main_conf(r, ngx_http_agent_module);

    if (body == NULL) {
        return ngx_http_agent_connection_get(r, id);
    }

    rc = ngx_http_agent_reply_parse(r, body, &v, 0);
    if (rc != NGX_OK) {
        return rc;
    }

    cn = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_connect_t));
    if (cn == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (ngx_http_agent_json_get_str(v, "database", &cn->name) != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"database\" must be a string");
    }

    /* a database this location may not use is answered as unknown */
    db = ngx_http_agent_allowed_database(amcf, alcf, &cn->name);
    if (db == NULL) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "there is no database \"%V\"",
                                          &cn->name);
    }

    rc = ngx_http_agent_reply_session_get(r, id, &s);
    if (rc != NGX_OK) {
        return rc;
    }

    cn->request = r;
    cn->id = *id;

    /* the schema is read on the thread pool; inline only without one */
    rc = ngx_http_agent_sql_schema_post(alcf->thread_pool,
                                        r->connection->log, db,
                                        ngx_http_agent_connection_read, cn);
    if (rc == NGX_OK) {
        /* the body's read holds the request: the callback finalizes it */
        return NGX_DONE;
    }

    if (ngx_http_agent_sql_schema(r->pool, r->connection->log, db, &tables)
        != NGX_OK)
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the database \"%V\" cannot be read",
                                          &cn->name);
    }

    return ngx_http_agent_connection_save(r, cn, &tables);
}


static void
ngx_http_agent_connection_read(void *data, ngx_int_t rc, ngx_str_t *tables)
{
    ngx_http_agent_connect_t *cn = data;

    ngx_http_request_t    *r;
    ngx_http_agent_ctx_t  *ctx;

    r = cn->request;

    if (rc != NGX_OK) {
        rc = ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                        "the database \"%V\" cannot be read",
                                        &cn->name);

    } else {
        cn->tables.len = tables->len;
        cn->tables.data = ngx_pstrdup(r->pool, tables);

        /* the store's answers run the save again, not the whole request */
        ctx = ngx_http_get_module_ctx(r, ngx_http_agent_module);
        ngx_http_agent_store_call_reset(&ctx->store);
        ctx->store.wake = ngx_http_agent_connection_wake;
        ctx->store.data = cn;

        rc = cn->tables.data ? ngx_http_agent_connection_save(r, cn,
                                                               &cn->tables)
                             : NGX_HTTP_INTERNAL_SERVER_ERROR;

        if (rc == NGX_AGAIN && ctx->store.waiting) {
            rc = ngx_http_agent_reply_wait(r);
            if (rc == NGX_OK) {
                return;
            }
        }
    }

    /* a thread's completion, not a request handler */
    ngx_http_agent_reply_finish(r, rc);
}


static void
ngx_http_agent_connection_wake(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_connect_t *cn = sc->data;

    ngx_int_t              rc;
    ngx_http_request_t    *r;

    r = cn->request;

    sc->n = 0;

    rc = ngx_http_agent_connection_save(r, cn, &cn->tables);

    if (rc == NGX_AGAIN && sc->waiting) {
        return;
    }

    ngx_http_agent_reply_finish(r, rc);
}


/*
 * Under the session's lease: the database named in the session, its
 * tables in db_schema (a channel of the location's graph, or kept for one)
 */

static ngx_int_t
ngx_http_agent_connection_write(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_run_t *run, void *data)
{
    ngx_http_agent_connect_t *cn = data;

    ngx_int_t  rc;

    rc = ngx_http_agent_store_session_set(sc, &cn->id,
                                          NGX_HTTP_AGENT_STORE_DATABASE,
                                          &cn->name);
    if (rc != NGX_OK) {
        return rc;
    }

    return ngx_http_agent_state_set(run, "db_schema", &cn->tables);
}


static ngx_int_t
ngx_http_agent_connection_save(ngx_http_request_t *r,
    ngx_http_agent_connect_t *cn, ngx_str_t *tables)
{
    ngx_int_t                     rc;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_turn_state_t   st;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);

    cn->tables = *tables;

    ngx_memzero(&st, sizeof(ngx_http_agent_turn_state_t));

    st.graph = alcf->graph;
    st.id = cn->id;
    st.after = "connect";
    ngx_str_set(&st.as_node, "__connection__");
    st.write = ngx_http_agent_connection_write;
    st.data = cn;

    rc = ngx_http_agent_turn_state_update(r, &st);
    if (rc != NGX_OK) {
        return rc;
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "database");
    ngx_http_agent_json_str(j, &cn->name);
    ngx_http_agent_json_key(j, "tables");
    ngx_http_agent_json_raw(j, tables);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* a turn: POST /{session_id}/message */
