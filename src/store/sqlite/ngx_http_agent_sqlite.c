
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <sqlite3.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"
#include "ngx_http_agent_util.h"


/*
 * The checkpoint store: one SQLite file shared by all workers, WAL mode,
 * one handle per worker with its statements prepared once.  Messages are
 * rows appended as steps add them; a checkpoint row holds the other channels
 * and how many messages belong to it, so a checkpoint costs what its step
 * added, whatever the length of the conversation.
 */


static ngx_int_t ngx_http_agent_sqlite_init(ngx_cycle_t *cycle,
    ngx_str_t *path, ngx_str_t *resources_dir, ngx_uid_t user,
    ngx_gid_t group);
static ngx_int_t ngx_http_agent_sqlite_resource_fetch(
    ngx_http_agent_store_call_t *sc, ngx_http_agent_resource_t *res);
static char *ngx_http_agent_sqlite_conf(ngx_conf_t *cf, ngx_str_t *db);
static ngx_int_t ngx_http_agent_sqlite_start(ngx_cycle_t *cycle,
    ngx_str_t *path, void *thread_pool);
static void ngx_http_agent_sqlite_stop(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_agent_store_dir(ngx_cycle_t *cycle,
    ngx_str_t *path, ngx_uid_t user, ngx_gid_t group);
static int ngx_http_agent_store_found(void *data, int n, char **values,
    char **names);
static ngx_int_t ngx_http_agent_store_give(ngx_cycle_t *cycle,
    ngx_str_t *path, ngx_uid_t user, ngx_gid_t group);


/*
 * a checkpoint's id is its thread's: a copied thread keeps the original's
 * ids, as LangGraph's copy does (files of earlier versions had them unique
 * across threads: rebuilt once, below)
 */
#define NGX_HTTP_AGENT_SQLITE_CHECKPOINTS                                     \
    "CREATE TABLE IF NOT EXISTS checkpoints ("                                \
    " n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL,"                 \
    " session_id TEXT NOT NULL, parent_id TEXT, step INTEGER NOT NULL,"       \
    " node TEXT NOT NULL, next TEXT, msg_count INTEGER NOT NULL,"             \
    " channels TEXT NOT NULL, created_at TEXT NOT NULL,"                      \
    " ns TEXT NOT NULL DEFAULT '');"                                          \
    "CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_id"                        \
    " ON checkpoints (session_id, id);"


static const char  *ngx_http_agent_store_schema =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS sessions ("
    " id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', metadata TEXT,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
    " message_count INTEGER NOT NULL DEFAULT 0, model TEXT, database TEXT,"
    " run_id TEXT, run_pid INTEGER, run_expires INTEGER, owner TEXT,"
    " run_host TEXT, history_bytes INTEGER NOT NULL DEFAULT 0,"
    " run_gen INTEGER NOT NULL DEFAULT 0,"
    " prompt_tokens INTEGER NOT NULL DEFAULT 0,"
    " completion_tokens INTEGER NOT NULL DEFAULT 0,"
    " cached_tokens INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS messages ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT,"
    " tool_calls TEXT, tool_call_id TEXT, name TEXT, images TEXT,"
    " metadata TEXT, created_at TEXT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS messages_seq"
    " ON messages (session_id, seq);"
    NGX_HTTP_AGENT_SQLITE_CHECKPOINTS
    "CREATE INDEX IF NOT EXISTS checkpoints_session"
    " ON checkpoints (session_id, n);"
    "CREATE TABLE IF NOT EXISTS resources ("
    " id TEXT PRIMARY KEY, session_id TEXT NOT NULL, name TEXT NOT NULL,"
    " table_name TEXT NOT NULL, columns TEXT NOT NULL,"
    " row_count INTEGER NOT NULL, size_bytes INTEGER NOT NULL,"
    " path TEXT NOT NULL, created_at TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS resources_session"
    " ON resources (session_id, created_at);"
    "CREATE TABLE IF NOT EXISTS runs ("
    " run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL,"
    " assistant_id TEXT NOT NULL, status TEXT NOT NULL, metadata TEXT,"
    " kwargs TEXT, multitask_strategy TEXT, created_at TEXT NOT NULL,"
    " updated_at TEXT NOT NULL, cancel TEXT, events INTEGER NOT NULL,"
    " checkpoint TEXT, attempts INTEGER NOT NULL DEFAULT 0, origin TEXT,"
    " limit_keys TEXT, secret TEXT);"
    "CREATE INDEX IF NOT EXISTS runs_thread ON runs (thread_id, created_at);"
    "CREATE INDEX IF NOT EXISTS runs_expire ON runs (events, updated_at);"
    "CREATE TABLE IF NOT EXISTS run_events ("
    " run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL,"
    " data TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS assistants ("
    " assistant_id TEXT PRIMARY KEY, owner TEXT, graph_id TEXT NOT NULL,"
    " latest INTEGER NOT NULL, versions INTEGER NOT NULL,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS assistant_versions ("
    " assistant_id TEXT NOT NULL, version INTEGER NOT NULL,"
    " graph_id TEXT NOT NULL, doc TEXT NOT NULL, created_at TEXT NOT NULL,"
    " PRIMARY KEY (assistant_id, version)) WITHOUT ROWID;"
    /* an assistant keeps its last versions */
    "CREATE TRIGGER IF NOT EXISTS assistant_versions_kept AFTER INSERT ON"
    " assistant_versions BEGIN DELETE FROM assistant_versions"
    " WHERE assistant_id = new.assistant_id"
    " AND version <= new.version - " NGX_HTTP_AGENT_STORE_VERSIONS "; END;"
    "CREATE TABLE IF NOT EXISTS crons ("
    " cron_id TEXT PRIMARY KEY, owner TEXT, assistant_id TEXT NOT NULL,"
    " thread_id TEXT, origin TEXT, doc TEXT NOT NULL,"
    " next_run INTEGER NOT NULL DEFAULT 0,"
    " enabled INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL,"
    " updated_at TEXT NOT NULL, limit_keys TEXT);"
    "CREATE INDEX IF NOT EXISTS crons_due ON crons (next_run)"
    " WHERE enabled = 1 AND next_run > 0;"
    "CREATE INDEX IF NOT EXISTS crons_owner ON crons (owner, created_at);"
    "CREATE TABLE IF NOT EXISTS items ("
    " n INTEGER PRIMARY KEY, owner TEXT NOT NULL, ns TEXT NOT NULL,"
    " key TEXT NOT NULL, value TEXT NOT NULL, text TEXT,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL, expires INTEGER,"
    " UNIQUE (owner, ns, key));"
    "CREATE INDEX IF NOT EXISTS items_expires ON items (expires)"
    " WHERE expires IS NOT NULL;"
    /* the items' text, found by words; kept by triggers, in each write */
    "CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5(text);"
    "CREATE TRIGGER IF NOT EXISTS items_ai AFTER INSERT ON items"
    " WHEN new.text IS NOT NULL BEGIN"
    " INSERT INTO items_fts (rowid, text) VALUES (new.n, new.text); END;"
    "CREATE TRIGGER IF NOT EXISTS items_ad AFTER DELETE ON items BEGIN"
    " DELETE FROM items_fts WHERE rowid = old.n; END;"
    "CREATE TRIGGER IF NOT EXISTS items_au AFTER UPDATE OF text ON items"
    " BEGIN DELETE FROM items_fts WHERE rowid = old.n;"
    " INSERT INTO items_fts (rowid, text) SELECT new.n, new.text"
    " WHERE new.text IS NOT NULL; END;"
    /* cached nodes' updates and model answers (store_bounds.c) */
    "CREATE TABLE IF NOT EXISTS cache ("
    " key TEXT PRIMARY KEY, value TEXT NOT NULL, bytes INTEGER NOT NULL,"
    " created INTEGER NOT NULL, expires INTEGER NOT NULL);"
    /* the bounds' sums and the oldest read from the index alone */
    "CREATE INDEX IF NOT EXISTS cache_age ON cache (created, key, bytes);"
    "CREATE INDEX IF NOT EXISTS cache_expires ON cache (expires);";


static ngx_int_t
ngx_http_agent_sqlite_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group)
{
    int         rc;
    char       *err;
    mode_t      mask;
    sqlite3    *db;

    ngx_http_agent_store_host_init(cycle);

    if (ngx_http_agent_store_dir(cycle, path, user, group) != NGX_OK) {
        return NGX_ERROR;
    }

    /* a master that is not root keeps the files as its own */
    if (geteuid() != 0) {
        user = geteuid();
        group = getegid();
    }

    if (ngx_http_agent_store_resources_dir(cycle, resources_dir, user, group)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /*
     * the database is never reached through a link (SQLITE_OPEN_NOFOLLOW)
     * and created 0600: SQLite gives its -wal and -shm the same mode
     */

    if (ngx_http_agent_store_give(cycle, path, user, group) != NGX_OK) {
        return NGX_ERROR;
    }

    mask = umask(077);
    rc = sqlite3_open_v2((char *) path->data, &db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE
                         |SQLITE_OPEN_NOFOLLOW, NULL);
    (void) umask(mask);

    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent_checkpoint_db: cannot open \"%V\": %s",
                      path, sqlite3_errstr(rc));
        sqlite3_close(db);
        return NGX_ERROR;
    }

    sqlite3_busy_timeout(db, 100);

    if (sqlite3_exec(db, ngx_http_agent_store_schema, NULL, NULL, &err)
        != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent_checkpoint_db: cannot set up \"%V\": %s",
                      path, err);
        sqlite3_free(err);
        sqlite3_close(db);
        return NGX_ERROR;
    }

    /* files of earlier versions: the columns they lack (errors: present) */
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN run_expires "
                        "INTEGER", NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN owner TEXT",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN run_host TEXT",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN attempts INTEGER "
                        "NOT NULL DEFAULT 0", NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN origin TEXT",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN limit_keys TEXT",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE crons ADD COLUMN limit_keys TEXT",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE runs ADD COLUMN secret TEXT",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN run_gen "
                        "INTEGER NOT NULL DEFAULT 0", NULL, NULL, NULL);
    /*
     * an item's embedding, float32s (store_near.c); an owner's items that
     * have one, newest first, without reading the others
     */
    (void) sqlite3_exec(db, "ALTER TABLE items ADD COLUMN embedding BLOB",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS items_vectors"
                        " ON items (owner, n) WHERE embedding IS NOT NULL",
                        NULL, NULL, NULL);

    /* the runs a worker that died left running: found by the re-driver */
    (void) sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS runs_running"
                        " ON runs (thread_id) WHERE status = 'running'",
                        NULL, NULL, NULL);

    /*
     * the take-over check's (sqlite_look.c): the holders of leases by
     * worker, their leases by expiry; only sessions a run holds are there
     */
    (void) sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS sessions_holder"
                        " ON sessions (run_host, run_pid)"
                        " WHERE run_id IS NOT NULL;"
                        "CREATE INDEX IF NOT EXISTS sessions_lease"
                        " ON sessions (run_expires) WHERE run_id IS NOT NULL",
                        NULL, NULL, NULL);

    /* the history's size of a file of an earlier version, counted once */
    if (sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN history_bytes "
                     "INTEGER NOT NULL DEFAULT 0", NULL, NULL, NULL)
        == SQLITE_OK)
    {
        (void) sqlite3_exec(db, "UPDATE sessions SET history_bytes ="
                            " (SELECT COALESCE(SUM(length(CAST(content AS"
                            " BLOB)) + COALESCE(length(CAST(tool_calls AS"
                            " BLOB)), 0) + COALESCE(length(CAST(images AS"
                            " BLOB)), 0)), 0) FROM messages"
                            " WHERE session_id = sessions.id)",
                            NULL, NULL, NULL);
    }
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN prompt_tokens "
                        "INTEGER NOT NULL DEFAULT 0", NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN "
                        "completion_tokens INTEGER NOT NULL DEFAULT 0",
                        NULL, NULL, NULL);
    (void) sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN cached_tokens "
                        "INTEGER NOT NULL DEFAULT 0", NULL, NULL, NULL);

    /*
     * a file whose checkpoint ids are unique across threads: rebuilt, its
     * AUTOINCREMENT carried over; the old workers of a reload may write
     * meanwhile: waited for (the master's start, no event loop yet)
     */

    sqlite3_busy_timeout(db, 10000);

    if (sqlite3_exec(db, "SELECT 1 FROM sqlite_master"
                     " WHERE name = 'sqlite_autoindex_checkpoints_1'",
                     ngx_http_agent_store_found, NULL, NULL)
        == SQLITE_ABORT
        && sqlite3_exec(db, "BEGIN IMMEDIATE;"
                        "ALTER TABLE checkpoints RENAME TO checkpoints_old;"
                        "DROP INDEX IF EXISTS checkpoints_session;"
                        "DROP INDEX IF EXISTS checkpoints_id;"
                        NGX_HTTP_AGENT_SQLITE_CHECKPOINTS
                        "CREATE INDEX checkpoints_session"
                        " ON checkpoints (session_id, n);"
                        "INSERT INTO checkpoints (n, id, session_id,"
                        " parent_id, step, node, next, msg_count, channels,"
                        " created_at) SELECT n, id, session_id,"
                        " parent_id, step, node, next, msg_count, channels,"
                        " created_at FROM checkpoints_old ORDER BY n;"
                        "DELETE FROM sqlite_sequence"
                        " WHERE name = 'checkpoints';"
                        "UPDATE sqlite_sequence SET name = 'checkpoints'"
                        " WHERE name = 'checkpoints_old';"
                        "DROP TABLE checkpoints_old;"
                        "COMMIT", NULL, NULL, &err)
           != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent_checkpoint_db: cannot rebuild the checkpoints "
                      "of \"%V\": %s", path, err);
        sqlite3_free(err);
        sqlite3_close(db);
        return NGX_ERROR;
    }

    /* a subgraph's checkpoints: those of its namespace (files before) */
    (void) sqlite3_exec(db, "ALTER TABLE checkpoints ADD COLUMN ns TEXT "
                        "NOT NULL DEFAULT ''", NULL, NULL, NULL);

    /* the thread's own steps (most of the writes) are not in the index */

    if (sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS checkpoints_subgraph"
                     " ON checkpoints (session_id, ns, n) WHERE ns <> ''",
                     NULL, NULL, &err)
        != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent_checkpoint_db: cannot index the checkpoints "
                      "of \"%V\": %s", path, err);
        sqlite3_free(err);
        sqlite3_close(db);
        return NGX_ERROR;
    }

    sqlite3_close(db);

    /* the master runs as root, the workers do not */

    return ngx_http_agent_store_give(cycle, path, user, group);
}


/* the database, its -wal and -shm: the workers' (ngx_http_agent_files.c) */

/* sqlite3_exec()'s callback: a row, and it stops (SQLITE_ABORT) */

static int
ngx_http_agent_store_found(void *data, int n, char **values, char **names)
{
    return 1;
}


static ngx_int_t
ngx_http_agent_store_give(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_uid_t user, ngx_gid_t group)
{
    ngx_uint_t  i;
    u_char      name[NGX_MAX_PATH];

    static const char  *suffix[] = { "", "-wal", "-shm" };

    for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        ngx_snprintf(name, sizeof(name), "%V%s%Z", path, suffix[i]);

        if (ngx_http_agent_files_give(cycle->log, name, user, group, 0)
            == NGX_ERROR)
        {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/*
 * WAL needs the workers to create files next to the database: a folder the
 * module makes is given to the workers' user; one that exists and that
 * they cannot write in is worth a warning.
 */

static ngx_int_t
ngx_http_agent_store_dir(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_uid_t user, ngx_gid_t group)
{
    u_char           *p, dir[NGX_MAX_PATH];
    ngx_file_info_t   fi;

    p = ngx_strlchr(path->data, path->data + path->len, '/');
    if (p == NULL || path->len >= NGX_MAX_PATH) {
        return NGX_OK;
    }

    p = path->data + path->len;
    while (*--p != '/') { /* void */ }

    if (p == path->data) {
        return NGX_OK;
    }

    ngx_cpystrn(dir, path->data, p - path->data + 1);

    if (ngx_file_info(dir, &fi) == NGX_FILE_ERROR) {
        if (ngx_create_full_path(path->data, 0700) != 0) {
            ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                          "agent_checkpoint_db: cannot create \"%s\"", dir);
            return NGX_ERROR;
        }

        if (geteuid() != 0) {
            return NGX_OK;
        }

        /* the folder the master made: the workers' */
        return ngx_http_agent_files_give(cycle->log, dir, user, group, 1)
               == NGX_OK ? NGX_OK : NGX_ERROR;
    }

    if (geteuid() == 0 && user != 0
        && fi.st_uid != user
        && !(fi.st_mode & S_IWOTH)
        && !(fi.st_gid == group && (fi.st_mode & S_IWGRP)))
    {
        ngx_log_error(NGX_LOG_WARN, cycle->log, 0,
                      "agent_checkpoint_db: the workers may not write in "
                      "\"%s\", which SQLite needs for its WAL files; give "
                      "the folder to the workers' user", dir);
    }

    return NGX_OK;
}


/*
 * a worker's handles: the store's, then those of the parts above it, the
 * prune's, the near items' and the take-over check's own
 */

static ngx_int_t
ngx_http_agent_sqlite_start(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool)
{
    if (ngx_http_agent_sqlite_open(cycle, path, thread_pool) != NGX_OK) {
        return NGX_ERROR;
    }

    /* a test's knob (docs/testing.md) */
    if (ngx_http_agent_store_defer) {
        ngx_http_agent_sqlite_later_init(&ngx_http_agent_store_sqlite);
        ngx_http_agent_sqlite_later_sessions(&ngx_http_agent_store_sqlite);
        ngx_http_agent_sqlite_later_runs(&ngx_http_agent_store_sqlite);
    }

    ngx_http_agent_sqlite_prune_init(cycle, path, thread_pool);
    ngx_http_agent_sqlite_near_init(path, thread_pool);

    return ngx_http_agent_sqlite_look_init(cycle, path, thread_pool);
}


static void
ngx_http_agent_sqlite_stop(ngx_cycle_t *cycle)
{
    ngx_http_agent_sqlite_look_close();
    ngx_http_agent_sqlite_prune_close();
    ngx_http_agent_sqlite_close(cycle);
}


/* the files of SQLite's resources are this host's */

static ngx_int_t
ngx_http_agent_sqlite_resource_fetch(ngx_http_agent_store_call_t *sc,
    ngx_http_agent_resource_t *res)
{
    return NGX_OK;
}


/* agent_checkpoint_db PATH: a file, relative to the prefix */

static char *
ngx_http_agent_sqlite_conf(ngx_conf_t *cf, ngx_str_t *db)
{
    if (cf->args->nelts > 2) {
        return "takes parameters with a postgresql:// URL only";
    }

    if (ngx_conf_full_name(cf->cycle, db, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


ngx_http_agent_store_backend_t  ngx_http_agent_store_sqlite = {
    ngx_string("sqlite"),
    NGX_HTTP_AGENT_STORE_TX,
    ngx_http_agent_sqlite_conf,
    ngx_http_agent_sqlite_init,
    ngx_http_agent_sqlite_start,
    ngx_http_agent_sqlite_stop,
    ngx_http_agent_sqlite_begin,
    ngx_http_agent_sqlite_commit,
    ngx_http_agent_sqlite_rollback,
    ngx_http_agent_sqlite_cancel,
    ngx_http_agent_sqlite_session_create,
    ngx_http_agent_sqlite_session_get,
    ngx_http_agent_sqlite_session_list,
    ngx_http_agent_sqlite_session_count,
    ngx_http_agent_sqlite_session_delete,
    ngx_http_agent_sqlite_session_set,
    ngx_http_agent_sqlite_lock,
    ngx_http_agent_sqlite_lock_renew,
    ngx_http_agent_sqlite_leases_renew,
    ngx_http_agent_sqlite_unlock,
    ngx_http_agent_sqlite_session_open,
    ngx_http_agent_sqlite_messages,
    ngx_http_agent_sqlite_messages_page,
    ngx_http_agent_sqlite_checkpoint_get,
    ngx_http_agent_sqlite_checkpoint_list,
    ngx_http_agent_sqlite_checkpoint_write,
    ngx_http_agent_sqlite_fork_later,
    ngx_http_agent_sqlite_fork_keep,
    ngx_http_agent_sqlite_fork_cut,
    ngx_http_agent_sqlite_resource_add,
    NULL,
    ngx_http_agent_sqlite_resource_list,
    ngx_http_agent_sqlite_resource_fetch,
    ngx_http_agent_sqlite_run_insert,
    ngx_http_agent_sqlite_run_status,
    ngx_http_agent_sqlite_run_get,
    ngx_http_agent_sqlite_run_list,
    ngx_http_agent_sqlite_run_cancel,
    ngx_http_agent_sqlite_run_cancelled,
    ngx_http_agent_sqlite_run_event,
    ngx_http_agent_sqlite_run_events,
    ngx_http_agent_sqlite_run_rollback,
    ngx_http_agent_sqlite_run_delete,
    ngx_http_agent_sqlite_thread_busy,
    ngx_http_agent_sqlite_run_lost,
    ngx_http_agent_sqlite_run_orphans,
    ngx_http_agent_sqlite_run_claim,
    ngx_http_agent_sqlite_cron_put,
    ngx_http_agent_sqlite_cron_get,
    ngx_http_agent_sqlite_cron_list,
    ngx_http_agent_sqlite_cron_delete,
    ngx_http_agent_sqlite_cron_due,
    ngx_http_agent_sqlite_cron_claim,
    ngx_http_agent_sqlite_assistant_put,
    ngx_http_agent_sqlite_assistant_get,
    ngx_http_agent_sqlite_assistant_list,
    ngx_http_agent_sqlite_assistant_latest,
    ngx_http_agent_sqlite_assistant_delete,
    ngx_http_agent_sqlite_item_put,
    ngx_http_agent_sqlite_item_get,
    ngx_http_agent_sqlite_item_delete,
    ngx_http_agent_sqlite_item_search,
    ngx_http_agent_sqlite_item_namespaces,
    ngx_http_agent_sqlite_session_copy,
    ngx_http_agent_sqlite_checkpoint_prune,
    ngx_http_agent_sqlite_thread_storage,
    ngx_http_agent_sqlite_cache_get,
    ngx_http_agent_sqlite_cache_put
};
