
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include <sqlite3.h>
#include <sys/random.h>
#include <time.h>
#include <sched.h>

#include "ngx_http_agent_store.h"


/*
 * The checkpoint store: one SQLite file shared by all workers, WAL mode,
 * one handle per worker with its statements prepared once.  Messages are
 * rows appended as steps add them; a checkpoint row holds the other channels
 * and how many messages belong to it, so a checkpoint costs what its step
 * added, whatever the length of the conversation.
 */


/*
 * How long a worker yields to another's write transaction on the event
 * loop: the transactions take a fraction of a millisecond
 */
#define NGX_HTTP_AGENT_STORE_BUSY_MS  100

#define NGX_HTTP_AGENT_STORE_UNLOCKS  64


enum {
    NGX_HTTP_AGENT_SQL_SESSION_INSERT = 0,
    NGX_HTTP_AGENT_SQL_SESSION_GET,
    NGX_HTTP_AGENT_SQL_SESSION_LIST,
    NGX_HTTP_AGENT_SQL_SESSION_DELETE,
    NGX_HTTP_AGENT_SQL_SESSION_SET_MODEL,
    NGX_HTTP_AGENT_SQL_SESSION_SET_DATABASE,
    NGX_HTTP_AGENT_SQL_SESSION_TOUCH,
    NGX_HTTP_AGENT_SQL_LOCK,
    NGX_HTTP_AGENT_SQL_LOCK_OWNER,
    NGX_HTTP_AGENT_SQL_LOCK_STEAL,
    NGX_HTTP_AGENT_SQL_UNLOCK,
    NGX_HTTP_AGENT_SQL_RENEW,
    NGX_HTTP_AGENT_SQL_MESSAGE_INSERT,
    NGX_HTTP_AGENT_SQL_MESSAGES,
    NGX_HTTP_AGENT_SQL_MESSAGES_DELETE,
    NGX_HTTP_AGENT_SQL_CHECKPOINT_INSERT,
    NGX_HTTP_AGENT_SQL_CHECKPOINT_LATEST,
    NGX_HTTP_AGENT_SQL_CHECKPOINT_LIST,
    NGX_HTTP_AGENT_SQL_CHECKPOINTS_DELETE,
    NGX_HTTP_AGENT_SQL_RESOURCE_INSERT,
    NGX_HTTP_AGENT_SQL_RESOURCE_LIST,
    NGX_HTTP_AGENT_SQL_RESOURCES_DELETE,
    NGX_HTTP_AGENT_SQL_BEGIN,
    NGX_HTTP_AGENT_SQL_COMMIT,
    NGX_HTTP_AGENT_SQL_ROLLBACK,
    NGX_HTTP_AGENT_SQL_LAST
};


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  run_id;
    u_char                     id_data[64];
    u_char                     run_data[64];
} ngx_http_agent_store_unlock_t;


static int ngx_http_agent_store_busy(void *data, int count);
static ngx_int_t ngx_http_agent_store_unlock_now(ngx_str_t *id,
    ngx_str_t *run_id);
static void ngx_http_agent_store_unlock_retry(ngx_event_t *ev);
static int64_t ngx_http_agent_store_ms(void);
static ngx_int_t ngx_http_agent_store_dir(ngx_cycle_t *cycle,
    ngx_str_t *path, ngx_uid_t user, ngx_gid_t group);
static sqlite3_stmt *ngx_http_agent_store_stmt(ngx_uint_t n);
static ngx_int_t ngx_http_agent_store_col(ngx_pool_t *pool,
    sqlite3_stmt *stmt, int col, ngx_str_t *out);
static void ngx_http_agent_store_bind(sqlite3_stmt *stmt, int n,
    ngx_str_t *s);
static ngx_int_t ngx_http_agent_store_exec(ngx_uint_t n);
static ngx_int_t ngx_http_agent_store_done(sqlite3_stmt *stmt, int rc);
static void ngx_http_agent_store_session_row(ngx_pool_t *pool,
    sqlite3_stmt *stmt, ngx_http_agent_session_t *s);
static void ngx_http_agent_store_checkpoint_row(ngx_pool_t *pool,
    sqlite3_stmt *stmt, ngx_http_agent_checkpoint_t *cp);


static const char  *ngx_http_agent_store_schema =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS sessions ("
    " id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', metadata TEXT,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
    " message_count INTEGER NOT NULL DEFAULT 0, model TEXT, database TEXT,"
    " run_id TEXT, run_pid INTEGER, run_expires INTEGER, owner TEXT);"
    "CREATE TABLE IF NOT EXISTS messages ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT,"
    " tool_calls TEXT, tool_call_id TEXT, name TEXT, images TEXT,"
    " metadata TEXT, created_at TEXT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS messages_seq"
    " ON messages (session_id, seq);"
    "CREATE TABLE IF NOT EXISTS checkpoints ("
    " n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
    " session_id TEXT NOT NULL, parent_id TEXT, step INTEGER NOT NULL,"
    " node TEXT NOT NULL, next TEXT, msg_count INTEGER NOT NULL,"
    " channels TEXT NOT NULL, created_at TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS checkpoints_session"
    " ON checkpoints (session_id, n);"
    "CREATE TABLE IF NOT EXISTS resources ("
    " id TEXT PRIMARY KEY, session_id TEXT NOT NULL, name TEXT NOT NULL,"
    " table_name TEXT NOT NULL, columns TEXT NOT NULL,"
    " row_count INTEGER NOT NULL, size_bytes INTEGER NOT NULL,"
    " path TEXT NOT NULL, created_at TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS resources_session"
    " ON resources (session_id, created_at);";


#define NGX_HTTP_AGENT_SESSION_COLS                                           \
    "id, title, metadata, created_at, updated_at, message_count, model, "     \
    "database, owner"

#define NGX_HTTP_AGENT_CHECKPOINT_COLS                                        \
    "id, parent_id, step, node, next, msg_count, channels, created_at"


static const char  *ngx_http_agent_store_sql[] = {
    "INSERT INTO sessions (id, title, metadata, created_at, updated_at,"
    " owner) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
    "SELECT " NGX_HTTP_AGENT_SESSION_COLS " FROM sessions WHERE id = ?1",
    "SELECT " NGX_HTTP_AGENT_SESSION_COLS " FROM sessions"
    " WHERE ?3 IS NULL OR owner = ?3"
    " ORDER BY created_at DESC, rowid DESC LIMIT ?1 OFFSET ?2",
    "DELETE FROM sessions WHERE id = ?1",
    "UPDATE sessions SET model = ?2 WHERE id = ?1",
    "UPDATE sessions SET database = ?2 WHERE id = ?1",
    "UPDATE sessions SET updated_at = ?2,"
    " message_count = message_count + ?3,"
    " run_expires = CASE WHEN run_id IS NULL THEN NULL ELSE ?4 END"
    " WHERE id = ?1",
    "UPDATE sessions SET run_id = ?2, run_pid = ?3, run_expires = ?4"
    " WHERE id = ?1 AND (run_id IS NULL OR run_expires < ?5)",
    "SELECT run_id, run_pid FROM sessions WHERE id = ?1",
    "UPDATE sessions SET run_id = ?2, run_pid = ?3, run_expires = ?5"
    " WHERE id = ?1 AND run_id = ?4",
    "UPDATE sessions SET run_id = NULL, run_pid = NULL, run_expires = NULL"
    " WHERE id = ?1 AND run_id = ?2",
    "UPDATE sessions SET run_expires = ?3 WHERE id = ?1 AND run_id = ?2",
    "INSERT INTO messages (session_id, seq, role, content, tool_calls,"
    " tool_call_id, name, images, metadata, created_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    "SELECT id, role, content, tool_calls, tool_call_id, name, images,"
    " metadata, created_at, seq FROM messages"
    " WHERE session_id = ?1 AND seq < ?2 ORDER BY seq",
    "DELETE FROM messages WHERE session_id = ?1",
    "INSERT INTO checkpoints (id, session_id, parent_id, step, node, next,"
    " msg_count, channels, created_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    "SELECT " NGX_HTTP_AGENT_CHECKPOINT_COLS " FROM checkpoints"
    " WHERE session_id = ?1 ORDER BY n DESC LIMIT 1",
    "SELECT " NGX_HTTP_AGENT_CHECKPOINT_COLS " FROM checkpoints"
    " WHERE session_id = ?1 ORDER BY n DESC LIMIT ?2",
    "DELETE FROM checkpoints WHERE session_id = ?1",
    "INSERT INTO resources (id, session_id, name, table_name, columns,"
    " row_count, size_bytes, path, created_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    "SELECT id, name, table_name, columns, row_count, size_bytes, path,"
    " created_at FROM resources WHERE session_id = ?1"
    " ORDER BY created_at, rowid",
    "DELETE FROM resources WHERE session_id = ?1",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK"
};


static sqlite3       *ngx_http_agent_store_db;
static ngx_uint_t     ngx_http_agent_store_tx;
static sqlite3_stmt  *ngx_http_agent_store_stmts[NGX_HTTP_AGENT_SQL_LAST];
static ngx_log_t     *ngx_http_agent_store_log;
static ngx_msec_t     ngx_http_agent_store_lease = 30000;
static ngx_event_t    ngx_http_agent_store_retry;

static ngx_http_agent_store_unlock_t
    ngx_http_agent_store_unlocks[NGX_HTTP_AGENT_STORE_UNLOCKS];


ngx_int_t
ngx_http_agent_store_init(ngx_cycle_t *cycle, ngx_str_t *path,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group)
{
    int        rc;
    char      *err;
    sqlite3   *db;
    ngx_uint_t i;

    static const char  *suffix[] = { "", "-wal", "-shm" };

    if (ngx_http_agent_store_dir(cycle, path, user, group) != NGX_OK) {
        return NGX_ERROR;
    }

    if (resources_dir->len) {
        if (ngx_create_full_path(resources_dir->data, 0755) != 0
            || (ngx_create_dir(resources_dir->data, 0755) == NGX_FILE_ERROR
                && ngx_errno != NGX_EEXIST))
        {
            ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                          "agent_resources_dir: cannot create \"%V\"",
                          resources_dir);
            return NGX_ERROR;
        }

        if (geteuid() == 0
            && chown((char *) resources_dir->data, user, group) == -1)
        {
            ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                          "agent_resources_dir: chown(\"%V\") failed",
                          resources_dir);
            return NGX_ERROR;
        }
    }

    rc = sqlite3_open_v2((char *) path->data, &db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent_checkpoint_db: cannot open \"%V\": %s",
                      path, sqlite3_errstr(rc));
        sqlite3_close(db);
        return NGX_ERROR;
    }

    sqlite3_busy_timeout(db, NGX_HTTP_AGENT_STORE_BUSY_MS);

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

    sqlite3_close(db);

    /* the master runs as root, the workers do not */

    if (geteuid() == 0) {
        for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
            u_char  name[NGX_MAX_PATH];

            ngx_snprintf(name, sizeof(name), "%V%s%Z", path, suffix[i]);

            if (chown((char *) name, user, group) == -1
                && ngx_errno != NGX_ENOENT)
            {
                ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                              "agent_checkpoint_db: chown(\"%s\") failed",
                              name);
                return NGX_ERROR;
            }
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
        if (ngx_create_full_path(path->data, 0755) != 0) {
            ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                          "agent_checkpoint_db: cannot create \"%s\"", dir);
            return NGX_ERROR;
        }

        if (geteuid() == 0 && chown((char *) dir, user, group) == -1) {
            ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                          "agent_checkpoint_db: chown(\"%s\") failed", dir);
            return NGX_ERROR;
        }

        return NGX_OK;
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


ngx_int_t
ngx_http_agent_store_open(ngx_cycle_t *cycle, ngx_str_t *path)
{
    int  rc;

    ngx_http_agent_store_log = cycle->log;

    rc = sqlite3_open_v2((char *) path->data, &ngx_http_agent_store_db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent: cannot open checkpoint db \"%V\": %s",
                      path, sqlite3_errstr(rc));
        return NGX_ERROR;
    }

    sqlite3_busy_handler(ngx_http_agent_store_db, ngx_http_agent_store_busy,
                         NULL);

    /* WAL makes a commit one sequential write; NORMAL syncs at checkpoint */
    sqlite3_exec(ngx_http_agent_store_db,
                 "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;",
                 NULL, NULL, NULL);

    return NGX_OK;
}


/*
 * Another worker holds the write lock for the tenth of a millisecond its
 * transaction takes: yield to it instead of SQLite's default sleeps of a
 * millisecond and more, and give up after the busy time.
 */

static int
ngx_http_agent_store_busy(void *data, int count)
{
    static struct timespec  start;
    struct timespec         now;

    clock_gettime(CLOCK_MONOTONIC, &now);

    if (count == 0) {
        start = now;
    }

    if ((now.tv_sec - start.tv_sec) * 1000
        + (now.tv_nsec - start.tv_nsec) / 1000000
        > NGX_HTTP_AGENT_STORE_BUSY_MS)
    {
        return 0;
    }

    sched_yield();

    return 1;
}


/* a transaction of the caller's: the checkpoint writes join it */

ngx_int_t
ngx_http_agent_store_begin(void)
{
    if (ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_BEGIN) != NGX_OK) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_tx = 1;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_store_commit(void)
{
    ngx_http_agent_store_tx = 0;

    if (ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_COMMIT) != NGX_OK) {
        (void) ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);
        return NGX_ERROR;
    }

    return NGX_OK;
}


void
ngx_http_agent_store_rollback(void)
{
    if (ngx_http_agent_store_tx) {
        ngx_http_agent_store_tx = 0;
        (void) ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);
    }
}


void
ngx_http_agent_store_close(ngx_cycle_t *cycle)
{
    ngx_uint_t  i;

    for (i = 0; i < NGX_HTTP_AGENT_SQL_LAST; i++) {
        if (ngx_http_agent_store_stmts[i]) {
            sqlite3_finalize(ngx_http_agent_store_stmts[i]);
            ngx_http_agent_store_stmts[i] = NULL;
        }
    }

    if (ngx_http_agent_store_db) {
        sqlite3_close(ngx_http_agent_store_db);
        ngx_http_agent_store_db = NULL;
    }
}


static sqlite3_stmt *
ngx_http_agent_store_stmt(ngx_uint_t n)
{
    int            rc;
    sqlite3_stmt  *stmt;

    if (ngx_http_agent_store_db == NULL) {
        return NULL;
    }

    stmt = ngx_http_agent_store_stmts[n];

    if (stmt == NULL) {
        rc = sqlite3_prepare_v3(ngx_http_agent_store_db,
                                ngx_http_agent_store_sql[n], -1,
                                SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
        if (rc != SQLITE_OK) {
            ngx_log_error(NGX_LOG_ERR, ngx_http_agent_store_log, 0,
                          "agent: sqlite prepare failed: %s",
                          sqlite3_errmsg(ngx_http_agent_store_db));
            return NULL;
        }

        ngx_http_agent_store_stmts[n] = stmt;
    }

    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);

    return stmt;
}


static void
ngx_http_agent_store_bind(sqlite3_stmt *stmt, int n, ngx_str_t *s)
{
    if (s == NULL || s->data == NULL) {
        sqlite3_bind_null(stmt, n);
        return;
    }

    sqlite3_bind_text(stmt, n, (char *) s->data, s->len, SQLITE_STATIC);
}


static ngx_int_t
ngx_http_agent_store_col(ngx_pool_t *pool, sqlite3_stmt *stmt, int col,
    ngx_str_t *out)
{
    size_t          len;
    const u_char   *p;

    p = sqlite3_column_text(stmt, col);

    if (p == NULL) {
        ngx_str_null(out);
        return NGX_OK;
    }

    len = sqlite3_column_bytes(stmt, col);

    out->data = ngx_pnalloc(pool, len + 1);
    if (out->data == NULL) {
        out->len = 0;
        return NGX_ERROR;
    }

    ngx_memcpy(out->data, p, len);
    out->data[len] = '\0';
    out->len = len;

    return NGX_OK;
}


static ngx_int_t
ngx_http_agent_store_done(sqlite3_stmt *stmt, int rc)
{
    sqlite3_reset(stmt);

    if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
        return NGX_OK;
    }

    ngx_log_error(NGX_LOG_ERR, ngx_http_agent_store_log, 0,
                  "agent: sqlite step failed: %s",
                  sqlite3_errmsg(ngx_http_agent_store_db));

    return NGX_ERROR;
}


static ngx_int_t
ngx_http_agent_store_exec(ngx_uint_t n)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(n);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_store_done(stmt, sqlite3_step(stmt));
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


ngx_int_t
ngx_http_agent_store_session_create(ngx_pool_t *pool, ngx_str_t *title,
    ngx_str_t *metadata, ngx_str_t *owner, ngx_http_agent_session_t *s)
{
    u_char        *p;
    sqlite3_stmt  *stmt;

    p = ngx_pnalloc(pool, 36 + 24);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_memzero(s, sizeof(ngx_http_agent_session_t));

    ngx_http_agent_store_new_id(p);
    s->id.data = p;
    s->id.len = 36;

    s->created_at.data = p + 36;
    s->created_at.len = ngx_http_agent_store_now(p + 36) - (p + 36);
    s->updated_at = s->created_at;
    s->title = *title;
    s->metadata = *metadata;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_SESSION_INSERT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, &s->id);
    ngx_http_agent_store_bind(stmt, 2, title);
    ngx_http_agent_store_bind(stmt, 3, metadata->len ? metadata : NULL);
    ngx_http_agent_store_bind(stmt, 4, &s->created_at);
    ngx_http_agent_store_bind(stmt, 5, owner);

    if (owner) {
        s->owner = *owner;
    }

    return ngx_http_agent_store_done(stmt, sqlite3_step(stmt));
}


static void
ngx_http_agent_store_session_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_session_t *s)
{
    (void) ngx_http_agent_store_col(pool, stmt, 0, &s->id);
    (void) ngx_http_agent_store_col(pool, stmt, 1, &s->title);
    (void) ngx_http_agent_store_col(pool, stmt, 2, &s->metadata);
    (void) ngx_http_agent_store_col(pool, stmt, 3, &s->created_at);
    (void) ngx_http_agent_store_col(pool, stmt, 4, &s->updated_at);
    s->message_count = sqlite3_column_int64(stmt, 5);
    (void) ngx_http_agent_store_col(pool, stmt, 6, &s->model);
    (void) ngx_http_agent_store_col(pool, stmt, 7, &s->database);
    (void) ngx_http_agent_store_col(pool, stmt, 8, &s->owner);
}


ngx_int_t
ngx_http_agent_store_session_get(ngx_pool_t *pool, ngx_str_t *id,
    ngx_http_agent_session_t *s)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_SESSION_GET);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_DONE) {
        sqlite3_reset(stmt);
        return NGX_DECLINED;
    }

    if (rc == SQLITE_ROW) {
        ngx_http_agent_store_session_row(pool, stmt, s);
    }

    return ngx_http_agent_store_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_store_session_list(ngx_pool_t *pool, ngx_int_t limit,
    ngx_int_t offset, ngx_str_t *owner, ngx_array_t *sessions)
{
    int                        rc;
    sqlite3_stmt              *stmt;
    ngx_http_agent_session_t  *s;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_SESSION_LIST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    sqlite3_bind_int64(stmt, 1, limit);
    sqlite3_bind_int64(stmt, 2, offset);
    ngx_http_agent_store_bind(stmt, 3, owner);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        s = ngx_array_push(sessions);
        if (s == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_http_agent_store_session_row(pool, stmt, s);
    }

    return ngx_http_agent_store_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_store_session_delete(ngx_pool_t *pool, ngx_str_t *id)
{
    int                         changes;
    ngx_uint_t                  i;
    ngx_array_t                 resources;
    sqlite3_stmt               *stmt;
    ngx_http_agent_resource_t  *res;

    if (ngx_array_init(&resources, pool, 4,
                       sizeof(ngx_http_agent_resource_t))
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (ngx_http_agent_store_resource_list(pool, id, &resources) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_BEGIN) != NGX_OK) {
        return NGX_ERROR;
    }

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_SESSION_DELETE);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    changes = sqlite3_changes(ngx_http_agent_store_db);

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_MESSAGES_DELETE);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_CHECKPOINTS_DELETE);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_RESOURCES_DELETE);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    if (ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_COMMIT) != NGX_OK) {
        goto failed;
    }

    /* the rows are gone: the files go after them */

    res = resources.elts;

    for (i = 0; i < resources.nelts; i++) {
        if (ngx_delete_file(res[i].path.data) == NGX_FILE_ERROR) {
            ngx_log_error(NGX_LOG_WARN, ngx_http_agent_store_log, ngx_errno,
                          "agent: cannot delete \"%V\"", &res[i].path);
        }
    }

    return changes ? NGX_OK : NGX_DECLINED;

failed:

    (void) ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_store_session_set(ngx_str_t *id, ngx_uint_t field,
    ngx_str_t *value)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(field == NGX_HTTP_AGENT_STORE_MODEL
                                     ? NGX_HTTP_AGENT_SQL_SESSION_SET_MODEL
                                     : NGX_HTTP_AGENT_SQL_SESSION_SET_DATABASE);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    ngx_http_agent_store_bind(stmt, 2, value);

    return ngx_http_agent_store_done(stmt, sqlite3_step(stmt));
}


/*
 * A turn holds its session with a lease: NGX_OK, NGX_BUSY when another
 * turn holds an unexpired lease, NGX_DECLINED when there is no such
 * session.  The running turn renews the lease (each checkpoint, and a
 * timer of the turn); a holder that died, or whose pid was reused after a
 * restart, frees the session when its lease runs out.  A holder whose
 * process is gone from this host frees it at once.
 */

ngx_int_t
ngx_http_agent_store_lock(ngx_str_t *id, ngx_str_t *run_id, ngx_msec_t lease)
{
    int            rc;
    int64_t        now;
    ngx_pid_t      pid;
    ngx_str_t      owner;
    sqlite3_stmt  *stmt;
    u_char         buf[64];

    ngx_http_agent_store_lease = lease;
    now = ngx_http_agent_store_ms();

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_LOCK);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    ngx_http_agent_store_bind(stmt, 2, run_id);
    sqlite3_bind_int64(stmt, 3, ngx_pid);
    sqlite3_bind_int64(stmt, 4, now + lease);
    sqlite3_bind_int64(stmt, 5, now);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    if (sqlite3_changes(ngx_http_agent_store_db) == 1) {
        return NGX_OK;
    }

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_LOCK_OWNER);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    rc = sqlite3_step(stmt);

    if (rc != SQLITE_ROW) {
        (void) ngx_http_agent_store_done(stmt, rc);
        return rc == SQLITE_DONE ? NGX_DECLINED : NGX_ERROR;
    }

    owner.len = sqlite3_column_bytes(stmt, 0);
    if (owner.len > sizeof(buf) || sqlite3_column_text(stmt, 0) == NULL) {
        sqlite3_reset(stmt);
        return NGX_BUSY;
    }

    owner.data = buf;
    ngx_memcpy(buf, sqlite3_column_text(stmt, 0), owner.len);
    pid = (ngx_pid_t) sqlite3_column_int64(stmt, 1);
    sqlite3_reset(stmt);

    if (pid == ngx_pid || kill(pid, 0) == 0 || ngx_errno != ESRCH) {
        return NGX_BUSY;
    }

    ngx_log_error(NGX_LOG_WARN, ngx_http_agent_store_log, 0,
                  "agent: session \"%V\" was held by process %P, "
                  "which is gone; taking it over", id, pid);

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_LOCK_STEAL);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    ngx_http_agent_store_bind(stmt, 2, run_id);
    sqlite3_bind_int64(stmt, 3, ngx_pid);
    ngx_http_agent_store_bind(stmt, 4, &owner);
    sqlite3_bind_int64(stmt, 5, now + lease);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        return NGX_ERROR;
    }

    return sqlite3_changes(ngx_http_agent_store_db) == 1 ? NGX_OK : NGX_BUSY;
}


ngx_int_t
ngx_http_agent_store_lock_renew(ngx_str_t *id, ngx_str_t *run_id,
    ngx_msec_t lease)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_RENEW);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    ngx_http_agent_store_bind(stmt, 2, run_id);
    sqlite3_bind_int64(stmt, 3, ngx_http_agent_store_ms() + lease);

    return ngx_http_agent_store_done(stmt, sqlite3_step(stmt));
}


/*
 * An unlock that fails (the file busy past the busy time, a full disk)
 * is tried again from a timer of the worker's; the lease is the last
 * resort.  The turn and its request may be gone by then: the ids are
 * copied here.
 */

void
ngx_http_agent_store_unlock(ngx_str_t *id, ngx_str_t *run_id)
{
    ngx_uint_t                     i;
    ngx_http_agent_store_unlock_t  *u;

    if (ngx_http_agent_store_unlock_now(id, run_id) == NGX_OK) {
        return;
    }

    for (i = 0; i < NGX_HTTP_AGENT_STORE_UNLOCKS; i++) {
        u = &ngx_http_agent_store_unlocks[i];

        if (u->id.len == 0 && id->len <= sizeof(u->id_data)
            && run_id->len <= sizeof(u->run_data))
        {
            u->id.data = u->id_data;
            u->id.len = ngx_cpymem(u->id_data, id->data, id->len)
                        - u->id_data;
            u->run_id.data = u->run_data;
            u->run_id.len = ngx_cpymem(u->run_data, run_id->data,
                                       run_id->len)
                            - u->run_data;
            break;
        }
    }

    ngx_log_error(NGX_LOG_ERR, ngx_http_agent_store_log, 0,
                  "agent: session \"%V\" could not be unlocked, %s", id,
                  i < NGX_HTTP_AGENT_STORE_UNLOCKS
                  ? "trying again each second"
                  : "its lease will free it");

    if (i < NGX_HTTP_AGENT_STORE_UNLOCKS
        && !ngx_http_agent_store_retry.timer_set)
    {
        ngx_http_agent_store_retry.handler = ngx_http_agent_store_unlock_retry;
        ngx_http_agent_store_retry.log = ngx_http_agent_store_log;
        ngx_http_agent_store_retry.cancelable = 1;
        ngx_add_timer(&ngx_http_agent_store_retry, 1000);
    }
}


static ngx_int_t
ngx_http_agent_store_unlock_now(ngx_str_t *id, ngx_str_t *run_id)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_UNLOCK);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    ngx_http_agent_store_bind(stmt, 2, run_id);

    return ngx_http_agent_store_done(stmt, sqlite3_step(stmt));
}


static void
ngx_http_agent_store_unlock_retry(ngx_event_t *ev)
{
    ngx_uint_t                     i, left;
    ngx_http_agent_store_unlock_t  *u;

    left = 0;

    for (i = 0; i < NGX_HTTP_AGENT_STORE_UNLOCKS; i++) {
        u = &ngx_http_agent_store_unlocks[i];

        if (u->id.len == 0) {
            continue;
        }

        if (ngx_http_agent_store_db
            && ngx_http_agent_store_unlock_now(&u->id, &u->run_id)
               == NGX_OK)
        {
            ngx_log_error(NGX_LOG_NOTICE, ev->log, 0,
                          "agent: session \"%V\" unlocked", &u->id);
            u->id.len = 0;
            continue;
        }

        left++;
    }

    if (left && !ngx_exiting && !ngx_terminate) {
        ngx_add_timer(ev, 1000);
    }
}


static int64_t
ngx_http_agent_store_ms(void)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    return (int64_t) tp->sec * 1000 + tp->msec;
}


/* the messages with seq below upto; all: tool calls and results too */

ngx_int_t
ngx_http_agent_store_messages(ngx_pool_t *pool, ngx_str_t *id, int64_t upto,
    ngx_uint_t all, ngx_array_t *messages)
{
    int                    rc;
    sqlite3_stmt          *stmt;
    ngx_http_agent_msg_t  *m, tmp;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_MESSAGES);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, upto < 0 ? INT64_MAX : upto);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {

        if (!all) {
            /* what a person reads: no tool traffic */
            tmp.role.data = (u_char *) sqlite3_column_text(stmt, 1);

            if (tmp.role.data[0] == 't'
                || (tmp.role.data[0] == 'a'
                    && sqlite3_column_type(stmt, 3) != SQLITE_NULL
                    && sqlite3_column_bytes(stmt, 2) == 0))
            {
                continue;
            }
        }

        m = ngx_array_push(messages);
        if (m == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_memzero(m, sizeof(ngx_http_agent_msg_t));

        m->seq = sqlite3_column_int64(stmt, 0);
        (void) ngx_http_agent_store_col(pool, stmt, 1, &m->role);
        (void) ngx_http_agent_store_col(pool, stmt, 2, &m->content);
        (void) ngx_http_agent_store_col(pool, stmt, 3, &m->tool_calls);
        (void) ngx_http_agent_store_col(pool, stmt, 4, &m->tool_call_id);
        (void) ngx_http_agent_store_col(pool, stmt, 5, &m->name);
        (void) ngx_http_agent_store_col(pool, stmt, 6, &m->images);
        (void) ngx_http_agent_store_col(pool, stmt, 7, &m->metadata);
        (void) ngx_http_agent_store_col(pool, stmt, 8, &m->created_at);

        if (m->content.data == NULL) {
            ngx_str_set(&m->content, "");
        }
    }

    return ngx_http_agent_store_done(stmt, rc);
}


static void
ngx_http_agent_store_checkpoint_row(ngx_pool_t *pool, sqlite3_stmt *stmt,
    ngx_http_agent_checkpoint_t *cp)
{
    (void) ngx_http_agent_store_col(pool, stmt, 0, &cp->id);
    (void) ngx_http_agent_store_col(pool, stmt, 1, &cp->parent_id);
    cp->step = sqlite3_column_int64(stmt, 2);
    (void) ngx_http_agent_store_col(pool, stmt, 3, &cp->node);
    (void) ngx_http_agent_store_col(pool, stmt, 4, &cp->next);
    cp->msg_count = sqlite3_column_int64(stmt, 5);
    (void) ngx_http_agent_store_col(pool, stmt, 6, &cp->channels);
    (void) ngx_http_agent_store_col(pool, stmt, 7, &cp->created_at);
}


ngx_int_t
ngx_http_agent_store_checkpoint_latest(ngx_pool_t *pool, ngx_str_t *id,
    ngx_http_agent_checkpoint_t *cp)
{
    int            rc;
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_CHECKPOINT_LATEST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);

    rc = sqlite3_step(stmt);

    if (rc == SQLITE_DONE) {
        sqlite3_reset(stmt);
        return NGX_DECLINED;
    }

    if (rc == SQLITE_ROW) {
        ngx_http_agent_store_checkpoint_row(pool, stmt, cp);
    }

    return ngx_http_agent_store_done(stmt, rc);
}


ngx_int_t
ngx_http_agent_store_checkpoint_list(ngx_pool_t *pool, ngx_str_t *id,
    ngx_array_t *checkpoints)
{
    int                           rc;
    sqlite3_stmt                 *stmt;
    ngx_http_agent_checkpoint_t  *cp;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_CHECKPOINT_LIST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, 1000);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        cp = ngx_array_push(checkpoints);
        if (cp == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        ngx_http_agent_store_checkpoint_row(pool, stmt, cp);
    }

    return ngx_http_agent_store_done(stmt, rc);
}


/*
 * One transaction: the messages the step added, the checkpoint row, the
 * session's counters.  cp->msg_count is the count after the step; cp->id
 * and cp->created_at are filled in here.
 */

ngx_int_t
ngx_http_agent_store_checkpoint_write(ngx_pool_t *pool,
    ngx_str_t *session_id, ngx_http_agent_checkpoint_t *cp,
    ngx_array_t *added)
{
    u_char                *p;
    int64_t                seq, visible;
    ngx_uint_t             i, n, own;
    sqlite3_stmt          *stmt;
    ngx_http_agent_msg_t  *m;

#if (NGX_DEBUG)
    struct timespec        start;

    clock_gettime(CLOCK_MONOTONIC, &start);
#endif

    p = ngx_pnalloc(pool, 36 + 24);
    if (p == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_new_id(p);
    cp->id.data = p;
    cp->id.len = 36;
    cp->created_at.data = p + 36;
    cp->created_at.len = ngx_http_agent_store_now(p + 36) - (p + 36);

    own = !ngx_http_agent_store_tx;

    if (own && ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_BEGIN) != NGX_OK) {
        return NGX_ERROR;
    }

    n = added ? added->nelts : 0;
    m = added ? added->elts : NULL;
    seq = cp->msg_count - n;
    visible = 0;

    for (i = 0; i < n; i++) {
        stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_MESSAGE_INSERT);
        if (stmt == NULL) {
            goto failed;
        }

        m[i].created_at = cp->created_at;

        ngx_http_agent_store_bind(stmt, 1, session_id);
        sqlite3_bind_int64(stmt, 2, seq + i);
        ngx_http_agent_store_bind(stmt, 3, &m[i].role);
        ngx_http_agent_store_bind(stmt, 4, &m[i].content);
        ngx_http_agent_store_bind(stmt, 5, m[i].tool_calls.len
                                           ? &m[i].tool_calls : NULL);
        ngx_http_agent_store_bind(stmt, 6, m[i].tool_call_id.len
                                           ? &m[i].tool_call_id : NULL);
        ngx_http_agent_store_bind(stmt, 7, m[i].name.len ? &m[i].name : NULL);
        ngx_http_agent_store_bind(stmt, 8, m[i].images.len
                                           ? &m[i].images : NULL);
        ngx_http_agent_store_bind(stmt, 9, m[i].metadata.len
                                           ? &m[i].metadata : NULL);
        ngx_http_agent_store_bind(stmt, 10, &cp->created_at);

        if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
            goto failed;
        }

        if (m[i].role.data[0] == 'u'
            || (m[i].role.data[0] == 'a'
                && (m[i].content.len || m[i].tool_calls.len == 0)))
        {
            visible++;
        }
    }

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_CHECKPOINT_INSERT);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_store_bind(stmt, 1, &cp->id);
    ngx_http_agent_store_bind(stmt, 2, session_id);
    ngx_http_agent_store_bind(stmt, 3, cp->parent_id.len
                                       ? &cp->parent_id : NULL);
    sqlite3_bind_int64(stmt, 4, cp->step);
    ngx_http_agent_store_bind(stmt, 5, &cp->node);
    ngx_http_agent_store_bind(stmt, 6, cp->next.len ? &cp->next : NULL);
    sqlite3_bind_int64(stmt, 7, cp->msg_count);
    ngx_http_agent_store_bind(stmt, 8, &cp->channels);
    ngx_http_agent_store_bind(stmt, 9, &cp->created_at);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_SESSION_TOUCH);
    if (stmt == NULL) {
        goto failed;
    }

    ngx_http_agent_store_bind(stmt, 1, session_id);
    ngx_http_agent_store_bind(stmt, 2, &cp->created_at);
    sqlite3_bind_int64(stmt, 3, visible);

    /* a checkpoint renews the running turn's lease */
    sqlite3_bind_int64(stmt, 4, ngx_http_agent_store_ms()
                                + ngx_http_agent_store_lease);

    if (ngx_http_agent_store_done(stmt, sqlite3_step(stmt)) != NGX_OK) {
        goto failed;
    }

    if (own && ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_COMMIT) != NGX_OK)
    {
        goto failed;
    }

#if (NGX_DEBUG)
    {
    struct timespec  done;

    /* the benchmark reads this line: the cost of one checkpoint */
    clock_gettime(CLOCK_MONOTONIC, &done);
    ngx_log_debug3(NGX_LOG_DEBUG_HTTP, ngx_cycle->log, 0,
                   "agent store: checkpoint of %L messages (%ui new) "
                   "written in %L us", cp->msg_count, n,
                   (int64_t) (done.tv_sec - start.tv_sec) * 1000000
                   + (done.tv_nsec - start.tv_nsec) / 1000);
    }
#endif

    return NGX_OK;

failed:

    /* the caller's transaction is the caller's to roll back */
    if (own) {
        (void) ngx_http_agent_store_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);
    }

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_store_resource_add(ngx_str_t *session_id,
    ngx_http_agent_resource_t *res)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_RESOURCE_INSERT);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, &res->id);
    ngx_http_agent_store_bind(stmt, 2, session_id);
    ngx_http_agent_store_bind(stmt, 3, &res->name);
    ngx_http_agent_store_bind(stmt, 4, &res->table);
    ngx_http_agent_store_bind(stmt, 5, &res->columns);
    sqlite3_bind_int64(stmt, 6, res->row_count);
    sqlite3_bind_int64(stmt, 7, res->size_bytes);
    ngx_http_agent_store_bind(stmt, 8, &res->path);
    ngx_http_agent_store_bind(stmt, 9, &res->created_at);

    return ngx_http_agent_store_done(stmt, sqlite3_step(stmt));
}


ngx_int_t
ngx_http_agent_store_resource_list(ngx_pool_t *pool, ngx_str_t *session_id,
    ngx_array_t *resources)
{
    int                         rc;
    sqlite3_stmt               *stmt;
    ngx_http_agent_resource_t  *res;

    stmt = ngx_http_agent_store_stmt(NGX_HTTP_AGENT_SQL_RESOURCE_LIST);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_store_bind(stmt, 1, session_id);

    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        res = ngx_array_push(resources);
        if (res == NULL) {
            sqlite3_reset(stmt);
            return NGX_ERROR;
        }

        (void) ngx_http_agent_store_col(pool, stmt, 0, &res->id);
        (void) ngx_http_agent_store_col(pool, stmt, 1, &res->name);
        (void) ngx_http_agent_store_col(pool, stmt, 2, &res->table);
        (void) ngx_http_agent_store_col(pool, stmt, 3, &res->columns);
        res->row_count = sqlite3_column_int64(stmt, 4);
        res->size_bytes = sqlite3_column_int64(stmt, 5);
        (void) ngx_http_agent_store_col(pool, stmt, 6, &res->path);
        (void) ngx_http_agent_store_col(pool, stmt, 7, &res->created_at);
    }

    return ngx_http_agent_store_done(stmt, rc);
}
