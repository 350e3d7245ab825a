
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <sqlite3.h>
#include <time.h>
#include <sched.h>

#include "ngx_http_agent_ops.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_sqlite.h"
#include "ngx_http_agent_util.h"


/*
 * The SQLite store's base: the worker's handle on the file, the store's
 * statements prepared once on it, a statement's step, and the caller's
 * transaction (a statement's parameters and rows: sqlite_query.c).  The
 * operations (sqlite_session.c, sqlite_history.c, sqlite_run.c) are
 * written with it; it calls none of them.
 */


static int ngx_http_agent_store_busy_handler(void *data, int count);


#define NGX_HTTP_AGENT_SESSION_COLS                                           \
    "id, title, metadata, created_at, updated_at, message_count, model, "     \
    "database, owner, prompt_tokens, completion_tokens, cached_tokens, "       \
    "history_bytes"

/* ?4: every message; otherwise what a person reads, no tool traffic */
#define NGX_HTTP_AGENT_MESSAGES_SHOWN                                         \
    " AND (?4 OR NOT (role = 'tool' OR (role = 'assistant'"                   \
    " AND tool_calls IS NOT NULL AND (content IS NULL OR content = ''))))"

/* a message's content once its images are no longer sent */
#define NGX_HTTP_AGENT_MESSAGES_IMAGES_SHOWN                                  \
    "COALESCE(content, '') || ' [' || json_array_length(images)"              \
    " || ' attachment(s) shown earlier in the conversation]'"

#define NGX_HTTP_AGENT_RUN_COLS                                               \
    "run_id, thread_id, assistant_id, status, metadata, kwargs,"              \
    " multitask_strategy, created_at, updated_at"

/*
 * a checkpoint's columns, and the latest of the subgraph that its next
 * node runs, under the namespace "NEXT:ID", saved after it (a subgraph
 * that waits there: ngx_http_agent_store_checkpoint_merge())
 */
#define NGX_HTTP_AGENT_CHECKPOINT_COLS                                        \
    "id, parent_id, step, node, next, msg_count, channels, created_at, ns,"   \
    " " NGX_HTTP_AGENT_CHECKPOINT_SUB("channels") ","                         \
    " " NGX_HTTP_AGENT_CHECKPOINT_SUB("id")

#define NGX_HTTP_AGENT_CHECKPOINT_SUB(col)                                    \
    "(SELECT s." col " FROM checkpoints s"                                    \
    " WHERE s.session_id = c.session_id AND s.ns <> ''"                       \
    " AND s.ns = c.next || ':' || c.id"                                       \
    " AND s.n > c.n ORDER BY s.n DESC LIMIT 1)"

/*
 * fencing: a write of a turn whose lease generation (?N, sc->gen) is no
 * longer the session's changes nothing; 0 or none: not checked
 */
#define NGX_HTTP_AGENT_SQL_GEN(n)                                             \
    "(COALESCE(?" n ", 0) = 0 OR run_gen = ?" n ")"

#define NGX_HTTP_AGENT_SQL_ASSISTANT_COLS                                     \
    "a.assistant_id, a.owner, v.graph_id, v.version, a.latest, a.versions,"   \
    " v.doc, a.created_at, v.created_at"


/*
 * a copied message keeps the id it had ("{thread}-{seq}", the thread's id
 * as its client names it: ngx_http_agent_store_id_shown; or the client's
 * own in its metadata), as LangGraph's copy keeps message ids
 */
#define NGX_HTTP_AGENT_SQLITE_COPY_MSG_ID                                     \
    "substr(?1, 1, instr(?1 || '.', '.') - 1) || '-' || seq"
#define NGX_HTTP_AGENT_SQLITE_COPY_META                                       \
    " CASE WHEN metadata IS NULL"                                             \
    " THEN json_object('id', " NGX_HTTP_AGENT_SQLITE_COPY_MSG_ID ")"          \
    " WHEN json_valid(metadata) AND json_type(metadata) = 'object'"           \
    " AND json_type(metadata, '$.id') IS NULL"                                \
    " THEN json_set(metadata, '$.id', " NGX_HTTP_AGENT_SQLITE_COPY_MSG_ID ")" \
    " ELSE metadata END"


static const char  *ngx_http_agent_store_sql[] = {
    "INSERT INTO sessions (id, title, metadata, created_at, updated_at,"
    " owner) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
    "SELECT " NGX_HTTP_AGENT_SESSION_COLS " FROM sessions WHERE id = ?1",
    "SELECT " NGX_HTTP_AGENT_SESSION_COLS " FROM sessions"
    " WHERE (?3 IS NULL OR owner = ?3)"
    " AND (?4 IS NULL OR agent_contains(metadata, ?4))"
    " ORDER BY CASE WHEN ?5 = 1 THEN created_at END,"
    " CASE WHEN ?5 = 1 THEN rowid END, created_at DESC, rowid DESC"
    " LIMIT ?1 OFFSET ?2",
    "SELECT count(*) FROM sessions WHERE (?1 IS NULL OR owner = ?1)"
    " AND (?2 IS NULL OR agent_contains(metadata, ?2))",
    "DELETE FROM sessions WHERE id = ?1",
    "UPDATE sessions SET model = ?2 WHERE id = ?1",
    "UPDATE sessions SET database = ?2 WHERE id = ?1",
    "UPDATE sessions SET metadata = ?2 WHERE id = ?1",
    "UPDATE sessions SET updated_at = ?2,"
    " message_count = message_count + ?3,"
    " run_expires = ?4,"
    " prompt_tokens = prompt_tokens + ?5,"
    " completion_tokens = completion_tokens + ?6,"
    " cached_tokens = cached_tokens + ?7,"
    " history_bytes = history_bytes + ?9"
    " WHERE id = ?1 AND run_id = ?8 AND " NGX_HTTP_AGENT_SQL_GEN("10"),
    "UPDATE sessions SET run_id = ?2, run_pid = ?3, run_expires = ?4,"
    " run_host = ?6, run_gen = COALESCE(?7, 0)"
    " WHERE id = ?1 AND (run_id IS NULL OR run_expires < ?5"
    " OR (run_id = ?2 AND run_pid = ?3 AND run_host = ?6))",
    "SELECT run_id, run_pid, run_host FROM sessions WHERE id = ?1",
    "UPDATE sessions SET run_id = ?2, run_pid = ?3, run_expires = ?5,"
    " run_host = ?6, run_gen = COALESCE(?7, 0)"
    " WHERE id = ?1 AND run_id = ?4",
    "UPDATE sessions SET run_id = NULL, run_pid = NULL, run_expires = NULL,"
    " run_host = NULL"
    " WHERE id = ?1 AND run_id = ?2 AND " NGX_HTTP_AGENT_SQL_GEN("3"),
    "UPDATE sessions SET run_expires = ?3 WHERE id = ?1 AND run_id = ?2"
    " AND " NGX_HTTP_AGENT_SQL_GEN("4"),
    "UPDATE sessions SET run_expires = j.value ->> 'e'"
    " FROM json_each(?1) AS j WHERE sessions.id = j.value ->> 'id'"
    " AND sessions.run_id = j.value ->> 'r'"
    " AND (j.value ->> 'g' = 0 OR sessions.run_gen = j.value ->> 'g')"
    " RETURNING run_id",
    "INSERT INTO messages (session_id, seq, role, content, tool_calls,"
    " tool_call_id, name, images, metadata, created_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    "WITH t(keep) AS (SELECT CASE WHEN ?3 < 0 THEN -1 WHEN ?3 = 0 THEN ?2"
    " ELSE COALESCE((SELECT seq FROM messages WHERE session_id = ?1"
    " AND role = 'user' AND seq < ?2 ORDER BY seq DESC LIMIT 1"
    " OFFSET ?3 - 1), -1) END)"
    " SELECT id, role,"
    " CASE WHEN images IS NOT NULL AND seq < (SELECT keep FROM t)"
    "  THEN " NGX_HTTP_AGENT_MESSAGES_IMAGES_SHOWN
    "  ELSE content END,"
    " tool_calls, tool_call_id, name,"
    " CASE WHEN seq < (SELECT keep FROM t) THEN NULL ELSE images END,"
    " metadata, created_at, seq FROM messages"
    /* t as a value, not joined: the index's order, no sort of the rows */
    " WHERE session_id = ?1 AND seq < ?2 ORDER BY seq",
    /* from a seq on, as stored, for a worker's kept rows (store_history.c) */
    "SELECT id, role, content, tool_calls, tool_call_id, name, images,"
    " metadata, created_at, seq,"
    " CASE WHEN images IS NOT NULL THEN " NGX_HTTP_AGENT_MESSAGES_IMAGES_SHOWN
    " END FROM messages WHERE session_id = ?1 AND seq >= ?2 AND seq < ?3"
    " ORDER BY seq",
    "SELECT seq FROM (SELECT seq, COUNT(*) OVER w AS n,"
    " SUM(length(CAST(content AS BLOB))"
    " + COALESCE(length(CAST(tool_calls AS BLOB)), 0)"
    " + CASE WHEN ?5 THEN COALESCE(length(CAST(images AS BLOB)), 0)"
    " ELSE 0 END) OVER w AS bytes"
    " FROM messages WHERE session_id = ?1 AND id < ?2"
    NGX_HTTP_AGENT_MESSAGES_SHOWN
    " WINDOW w AS (ORDER BY seq DESC))"
    " WHERE n > ?3 OR (n > 1 AND bytes > ?6) LIMIT 1",
    "SELECT id, role, content, tool_calls, tool_call_id, name,"
    " CASE WHEN ?5 OR images IS NULL THEN images ELSE"
    "  (SELECT json_group_array(json_object("
    "   'mime_type', json_extract(value, '$.mime_type'),"
    "   'size', length(json_extract(value, '$.data')) * 3 / 4))"
    "   FROM json_each(images)) END,"
    " metadata, created_at, seq FROM messages"
    " WHERE session_id = ?1 AND id < ?2 AND seq > ?3"
    NGX_HTTP_AGENT_MESSAGES_SHOWN
    " ORDER BY seq",
    "DELETE FROM messages WHERE session_id = ?1",
    "INSERT INTO checkpoints (id, session_id, parent_id, step, node, next,"
    " msg_count, channels, created_at, ns)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    /* by id, of any namespace; the latest: the thread's own */
    "SELECT " NGX_HTTP_AGENT_CHECKPOINT_COLS " FROM checkpoints c"
    " WHERE session_id = ?1"
    " AND CASE WHEN ?2 IS NULL THEN ns = '' ELSE id = ?2 END"
    " ORDER BY n DESC LIMIT 1",
    "SELECT " NGX_HTTP_AGENT_CHECKPOINT_COLS " FROM checkpoints c"
    " WHERE session_id = ?1 AND ns = ?3 ORDER BY n DESC LIMIT ?2",
    "DELETE FROM checkpoints WHERE session_id = ?1",
    "INSERT INTO resources (id, session_id, name, table_name, columns,"
    " row_count, size_bytes, path, created_at)"
    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9"
    " WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?2)",
    "SELECT id, name, table_name, columns, row_count, size_bytes, path,"
    " created_at FROM resources WHERE session_id = ?1"
    " ORDER BY created_at, rowid",
    "DELETE FROM resources WHERE session_id = ?1",
    "INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata,"
    " kwargs, multitask_strategy, created_at, updated_at, events,"
    " checkpoint, origin, limit_keys, secret)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10, ?11, ?12, ?13)",
    /*
     * a run that failed keeps its error event: let go with the others;
     * "interrupted" by a cancel answered as done stays so (its end may
     * come before its worker hears the cancel); an ended run's secret goes
     */
    "UPDATE runs SET status = CASE WHEN status = 'interrupted'"
    " AND cancel = 'interrupt' THEN status ELSE ?2 END, updated_at = ?3,"
    " events = CASE WHEN ?2 = 'error' THEN 1 ELSE events END,"
    " secret = CASE WHEN ?2 IN ('pending', 'running') THEN secret END"
    " WHERE run_id = ?1 AND (?2 <> 'running' OR status = 'pending')"
    " AND (COALESCE(?4, 0) = 0 OR attempts = ?4 - 1)",
    "SELECT " NGX_HTTP_AGENT_RUN_COLS " FROM runs"
    " WHERE run_id = ?1 AND (?2 IS NULL OR thread_id = ?2)",
    "SELECT " NGX_HTTP_AGENT_RUN_COLS " FROM runs WHERE thread_id = ?1"
    " AND (?4 IS NULL OR status = ?4)"
    " ORDER BY created_at DESC, rowid DESC LIMIT ?2 OFFSET ?3",
    /* now: the run's worker hears it later; its row says it now */
    "UPDATE runs SET cancel = ?2,"
    " status = CASE WHEN ?2 = 'interrupt'"
    " AND (?3 = 2 OR ?3 = 1 AND status = 'pending')"
    " THEN 'interrupted' ELSE status END,"
    " updated_at = CASE WHEN ?2 = 'interrupt' AND ?3 = 2"
    " THEN ?4 ELSE updated_at END"
    " WHERE run_id = ?1 AND status IN ('pending', 'running')",
    "SELECT cancel FROM runs WHERE run_id = ?1",
    /* a pending write (seq < 0) is made again; a kept event is not */
    "INSERT INTO run_events (run_id, seq, event, data)"
    " SELECT ?1, ?2, ?3, ?4 WHERE COALESCE(?5, 0) = 0 OR EXISTS"
    " (SELECT 1 FROM runs WHERE run_id = ?1 AND attempts = ?5 - 1)"
    " ON CONFLICT (run_id, seq) DO UPDATE"
    " SET event = excluded.event, data = excluded.data WHERE ?2 < 0",
    "SELECT seq, event, data FROM run_events"
    " WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
    "DELETE FROM run_events WHERE run_id IN"
    " (SELECT run_id FROM runs WHERE thread_id = ?1)",
    "DELETE FROM runs WHERE thread_id = ?1",
    "SELECT run_id FROM sessions WHERE id = ?1 AND run_expires >= ?2",
    "DELETE FROM messages WHERE session_id = ?1 AND seq >= COALESCE("
    " (SELECT msg_count FROM checkpoints WHERE session_id = ?1"
    " AND id = ?2), 0)",
    "DELETE FROM checkpoints WHERE session_id = ?1 AND n > COALESCE("
    " (SELECT n FROM checkpoints WHERE session_id = ?1 AND id = ?2), 0)",
    "UPDATE sessions SET message_count ="
    " (SELECT COUNT(*) FROM messages WHERE session_id = ?1),"
    " history_bytes = (SELECT COALESCE(SUM(length(CAST(content AS BLOB))"
    " + COALESCE(length(CAST(tool_calls AS BLOB)), 0)"
    " + COALESCE(length(CAST(images AS BLOB)), 0)), 0)"
    " FROM messages WHERE session_id = ?1) WHERE id = ?1",
    "DELETE FROM run_events WHERE run_id = ?1",
    "DELETE FROM runs WHERE run_id = ?1",
    "UPDATE sessions SET run_pid = ?3, run_host = ?4, run_expires = ?5,"
    " run_gen = (SELECT attempts + 2 FROM runs WHERE run_id = ?1)"
    " WHERE id = ?2 AND run_id = ?1 AND run_pid IS ?6 AND run_expires IS ?7",
    "UPDATE runs SET attempts = attempts + 1"
    " WHERE run_id = ?1 AND status = 'running'",
    /* a claimed run's columns, as PostgreSQL's (store_rows.c) */
    "SELECT " NGX_HTTP_AGENT_RUN_COLS ", origin, checkpoint,"
    " (SELECT owner FROM sessions WHERE id = runs.thread_id), attempts,"
    " (SELECT MAX(seq) FROM run_events WHERE run_id = ?1 AND seq >= 0),"
    " limit_keys, secret FROM runs WHERE run_id = ?1",
    /* the kept events of the step that runs again (docs/runs.md) */
    "DELETE FROM run_events WHERE run_id = ?1 AND seq > (SELECT"
    " COALESCE(MAX(seq), 1) FROM run_events WHERE run_id = ?1"
    " AND event IN ('values', 'updates', 'checkpoints'))",
    "SELECT id, msg_count, channels FROM checkpoints WHERE session_id = ?1"
    " AND msg_count > 0 AND n > (SELECT n FROM checkpoints"
    " WHERE session_id = ?1 AND id = ?2)",
    "UPDATE checkpoints SET channels = ?2, msg_count = 0"
    " WHERE session_id = ?3 AND id = ?1",
    "DELETE FROM messages WHERE session_id = ?1 AND seq >= ?2",
    "DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM runs"
    " WHERE events = 1 AND status NOT IN ('pending', 'running')"
    " AND updated_at < ?1 LIMIT 64)",
    "UPDATE runs SET events = 0 WHERE run_id IN (SELECT run_id FROM runs"
    " WHERE events = 1 AND status NOT IN ('pending', 'running')"
    " AND updated_at < ?1 LIMIT 64)",
    "INSERT INTO assistants (assistant_id, owner, graph_id, latest,"
    " versions, created_at, updated_at) VALUES (?1, ?2, ?3, 1, 1, ?4, ?4)"
    " ON CONFLICT DO NOTHING",
    "UPDATE assistants SET latest = ?3, versions = ?3, graph_id = ?4,"
    " updated_at = ?5 WHERE assistant_id = ?1 AND owner IS ?2"
    " AND versions = ?3 - 1",
    "INSERT INTO assistant_versions (assistant_id, version, graph_id, doc,"
    " created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    "SELECT " NGX_HTTP_AGENT_SQL_ASSISTANT_COLS " FROM assistants a"
    " JOIN assistant_versions v ON v.assistant_id = a.assistant_id"
    " AND v.version = CASE WHEN ?3 > 0 THEN ?3 ELSE a.latest END"
    " WHERE a.assistant_id = ?1 AND a.owner IS ?2",
    "SELECT " NGX_HTTP_AGENT_SQL_ASSISTANT_COLS " FROM assistants a"
    " JOIN assistant_versions v ON v.assistant_id = a.assistant_id"
    " AND (?3 IS NOT NULL OR v.version = a.latest)"
    " WHERE a.owner IS ?1 AND (?2 IS NULL OR v.graph_id = ?2)"
    " AND (?3 IS NULL OR a.assistant_id = ?3)"
    " ORDER BY a.created_at DESC, a.assistant_id, v.version DESC",
    "UPDATE assistants SET latest = ?3, updated_at = ?4"
    " WHERE assistant_id = ?1 AND owner IS ?2 AND EXISTS (SELECT 1"
    " FROM assistant_versions WHERE assistant_id = ?1 AND version = ?3)",
    "DELETE FROM assistants WHERE assistant_id = ?1 AND owner IS ?2",
    "DELETE FROM assistant_versions WHERE assistant_id = ?1 AND NOT EXISTS"
    " (SELECT 1 FROM assistants WHERE assistant_id = ?1)",
    "INSERT INTO items (owner, ns, key, value, text, created_at,"
    " updated_at, expires, embedding) SELECT COALESCE(?1, ''), ?2, ?3, ?4,"
    " ?5, ?6, ?6, ?7, ?10 WHERE ?8 IS NULL OR (SELECT count(*) < ?8"
    " AND COALESCE(sum(length(CAST(value AS BLOB))), 0)"
    " + length(CAST(?4 AS BLOB)) <= ?9 FROM items"
    " WHERE owner = COALESCE(?1, '') AND NOT (ns = ?2 AND key = ?3))"
    " ON CONFLICT (owner, ns, key) DO UPDATE SET value = excluded.value,"
    " text = excluded.text, updated_at = excluded.updated_at,"
    " expires = excluded.expires, embedding = excluded.embedding",
    "DELETE FROM items WHERE n IN (SELECT n FROM items"
    " WHERE expires <= ?1 LIMIT 64)",
    "SELECT " NGX_HTTP_AGENT_SQL_ITEM_COLS ", 0 FROM items"
    " WHERE owner = COALESCE(?1, '') AND ns = ?2 AND key = ?3"
    " AND (expires IS NULL OR expires > ?4)",
    "DELETE FROM items WHERE owner = COALESCE(?1, '') AND ns = ?2"
    " AND key = ?3",
    "SELECT " NGX_HTTP_AGENT_SQL_ITEM_COLS ", 0 FROM items"
    " WHERE " NGX_HTTP_AGENT_SQL_ITEM_WHERE
    " ORDER BY updated_at DESC, n DESC LIMIT ?5 OFFSET ?6",
    "SELECT " NGX_HTTP_AGENT_SQL_ITEM_COLS ", -bm25(items_fts)"
    " FROM items_fts JOIN items ON n = items_fts.rowid"
    " WHERE items_fts MATCH ?7 AND " NGX_HTTP_AGENT_SQL_ITEM_WHERE
    " ORDER BY bm25(items_fts), n DESC LIMIT ?5 OFFSET ?6",
    "SELECT DISTINCT ns FROM items WHERE owner = COALESCE(?1, '')"
    " AND " NGX_HTTP_AGENT_SQL_ITEM_UNDER
    " AND (expires IS NULL OR expires > ?3)"
    " AND (?4 IS NULL OR ns = ?4 OR substr(ns, -length(?4) - 1) = '.' || ?4)"
    " ORDER BY ns LIMIT ?5",
    "INSERT INTO sessions (id, title, metadata, created_at, updated_at,"
    " message_count, model, database, owner, history_bytes, prompt_tokens,"
    " completion_tokens, cached_tokens) SELECT ?2, title, metadata, ?3, ?3,"
    " message_count, model, database, owner, history_bytes, prompt_tokens,"
    " completion_tokens, cached_tokens FROM sessions WHERE id = ?1"
    " AND NOT EXISTS (SELECT 1 FROM sessions WHERE id = ?2)",
    "INSERT INTO messages (session_id, seq, role, content, tool_calls,"
    " tool_call_id, name, images, metadata, created_at) SELECT ?2, seq, role,"
    " content, tool_calls, tool_call_id, name, images,"
    NGX_HTTP_AGENT_SQLITE_COPY_META ", created_at"
    " FROM messages WHERE session_id = ?1 ORDER BY seq",
    "INSERT INTO checkpoints (id, session_id, parent_id, step, node, next,"
    " msg_count, channels, created_at, ns) SELECT id, ?2, parent_id, step,"
    " node, next, msg_count, channels, created_at, ns FROM checkpoints"
    " WHERE session_id = ?1 ORDER BY n",
    "INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata,"
    " kwargs, multitask_strategy, created_at, updated_at, events, checkpoint)"
    " SELECT agent_copy_id(run_id, ?2), ?2, assistant_id, status, metadata,"
    " kwargs, multitask_strategy, created_at, updated_at, 0,"
    " checkpoint FROM runs WHERE thread_id = ?1"
    " ORDER BY created_at",
    "INSERT INTO crons (cron_id, owner, assistant_id, thread_id, origin,"
    " doc, next_run, enabled, created_at, updated_at, limit_keys)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
    " ON CONFLICT (cron_id) DO UPDATE SET assistant_id = ?3,"
    " thread_id = ?4, origin = ?5, doc = ?6, next_run = ?7, enabled = ?8,"
    " updated_at = ?10, limit_keys = ?11",
    "SELECT cron_id, owner, assistant_id, thread_id, origin, doc, next_run,"
    " enabled, created_at, updated_at, limit_keys FROM crons"
    " WHERE cron_id = ?1 AND owner IS ?2",
    "SELECT cron_id, owner, assistant_id, thread_id, origin, doc, next_run,"
    " enabled, created_at, updated_at, limit_keys FROM crons"
    " WHERE owner IS ?1"
    " ORDER BY created_at, cron_id",
    "DELETE FROM crons"
    " WHERE cron_id = ?1 AND owner IS ?2",
    "SELECT cron_id, owner, assistant_id, thread_id, origin, doc, next_run,"
    " enabled, created_at, updated_at, limit_keys FROM crons"
    " WHERE enabled = 1 AND next_run > 0"
    " AND next_run <= ?1 ORDER BY next_run LIMIT 8",
    "UPDATE crons SET next_run = ?3 WHERE cron_id = ?1 AND next_run = ?2"
    " AND enabled = 1",
    "DELETE FROM crons WHERE thread_id = ?1",
    /* a run's pending writes (turn_writes.c), at its end */
    "DELETE FROM run_events WHERE run_id = ?1 AND seq < 0",
    /* and its thread, if it holds it still */
    "UPDATE sessions SET run_id = NULL, run_pid = NULL, run_expires = NULL,"
    " run_host = NULL WHERE id = (SELECT thread_id FROM runs"
    " WHERE run_id = ?1) AND run_id = ?1",
    /* the cache (sqlite_cache.c) */
    "SELECT value FROM cache WHERE key = ?1 AND expires > ?2",
    "DELETE FROM cache WHERE expires <= ?1",
    "SELECT count(*), coalesce(sum(bytes), 0) FROM cache WHERE key <> ?1",
    "DELETE FROM cache WHERE key IN (SELECT key FROM cache WHERE key <> ?1"
    " ORDER BY created, key LIMIT ?2)",
    "DELETE FROM cache WHERE key IN (SELECT key FROM (SELECT key,"
    " sum(bytes) OVER (ORDER BY created DESC, key DESC) AS b FROM cache"
    " WHERE key <> ?1) WHERE b + ?2 > ?3)",
    "INSERT INTO cache (key, value, bytes, created, expires)"
    " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (key) DO UPDATE"
    " SET value = excluded.value, bytes = excluded.bytes,"
    " created = excluded.created, expires = excluded.expires",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK"
};


sqlite3              *ngx_http_agent_sqlite_db;
static sqlite3_stmt  *ngx_http_agent_store_stmts[NGX_HTTP_AGENT_SQL_LAST];

ngx_uint_t            ngx_http_agent_sqlite_tx;
ngx_log_t            *ngx_http_agent_sqlite_log;

/* the statement's start, when make bench asks (ngx_http_agent_phase.c) */
static uint64_t       ngx_http_agent_sqlite_phase;
static ngx_uint_t     ngx_http_agent_sqlite_phase_tx;


ngx_int_t
ngx_http_agent_sqlite_open(ngx_cycle_t *cycle, ngx_str_t *path,
    void *thread_pool)
{
    int  rc;

    ngx_http_agent_sqlite_log = cycle->log;

    rc = sqlite3_open_v2((char *) path->data, &ngx_http_agent_sqlite_db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent: cannot open checkpoint db \"%V\": %s",
                      path, sqlite3_errstr(rc));
        return NGX_ERROR;
    }

    sqlite3_busy_handler(ngx_http_agent_sqlite_db,
                         ngx_http_agent_store_busy_handler, NULL);

    if (ngx_http_agent_sqlite_contains_add(ngx_http_agent_sqlite_db)
        != SQLITE_OK
        || ngx_http_agent_sqlite_copy_id_add(ngx_http_agent_sqlite_db)
           != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0,
                      "agent: sqlite3_create_function() failed");
        return NGX_ERROR;
    }

    /* WAL makes a commit one sequential write; NORMAL syncs at checkpoint */
    sqlite3_exec(ngx_http_agent_sqlite_db,
                 "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;",
                 NULL, NULL, NULL);

    return ngx_http_agent_sqlite_wal_init(cycle, ngx_http_agent_sqlite_db,
                                          path, thread_pool);
}


/*
 * Another worker holds the write lock for the tenth of a millisecond its
 * transaction takes: yield to it instead of SQLite's default sleeps of a
 * millisecond and more, and give up after the spin time: a write that can
 * wait then waits on a timer (sqlite_retry.c), not on the event loop.
 */

static int
ngx_http_agent_store_busy_handler(void *data, int count)
{
    static struct timespec  start;
    struct timespec         now;

    clock_gettime(CLOCK_MONOTONIC, &now);

    if (count == 0) {
        start = now;
    }

    if ((now.tv_sec - start.tv_sec) * 1000
        + (now.tv_nsec - start.tv_nsec) / 1000000
        > (time_t) ngx_http_agent_sqlite_spin)
    {
        return 0;
    }

    sched_yield();

    return 1;
}


/* a transaction of the caller's: the checkpoint writes join it */

ngx_int_t
ngx_http_agent_sqlite_begin(ngx_http_agent_store_call_t *sc)
{
    ngx_int_t  rc;

    /* the first of its pass: a busy file, and the caller makes it again */

    if (ngx_http_agent_sqlite_can_wait(sc, 1)) {
        rc = ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_BEGIN);
        rc = ngx_http_agent_sqlite_busy(sc, rc, NULL, NULL, 0);

    } else {
        rc = ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_BEGIN);
    }

    if (rc != NGX_OK) {
        return rc;
    }

    ngx_http_agent_sqlite_tx = 1;

    return NGX_OK;
}


ngx_int_t
ngx_http_agent_sqlite_commit(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_sqlite_tx = 0;

    if (ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_COMMIT) != NGX_OK) {
        (void) ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);
        return NGX_ERROR;
    }

    return NGX_OK;
}


void
ngx_http_agent_sqlite_rollback(ngx_http_agent_store_call_t *sc)
{
    if (ngx_http_agent_sqlite_tx) {
        ngx_http_agent_sqlite_tx = 0;
        (void) ngx_http_agent_sqlite_exec(NGX_HTTP_AGENT_SQL_ROLLBACK);
    }
}


void
ngx_http_agent_sqlite_close(ngx_cycle_t *cycle)
{
    ngx_uint_t  i;

    for (i = 0; i < NGX_HTTP_AGENT_SQL_LAST; i++) {
        if (ngx_http_agent_store_stmts[i]) {
            sqlite3_finalize(ngx_http_agent_store_stmts[i]);
            ngx_http_agent_store_stmts[i] = NULL;
        }
    }

    ngx_http_agent_sqlite_wal_close();

    if (ngx_http_agent_sqlite_db) {
        sqlite3_close(ngx_http_agent_sqlite_db);
        ngx_http_agent_sqlite_db = NULL;
    }
}


sqlite3_stmt *
ngx_http_agent_sqlite_stmt(ngx_uint_t n)
{
    int            rc;
    sqlite3_stmt  *stmt;

    if (ngx_http_agent_sqlite_db == NULL) {
        return NULL;
    }

    stmt = ngx_http_agent_store_stmts[n];

    if (stmt == NULL) {
        rc = sqlite3_prepare_v3(ngx_http_agent_sqlite_db,
                                ngx_http_agent_store_sql[n], -1,
                                SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
        if (rc != SQLITE_OK) {
            ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_STORE_ERRORS, NULL,
                                       NULL, 1);
            ngx_log_error(NGX_LOG_ERR, ngx_http_agent_sqlite_log, 0,
                          "agent: sqlite prepare failed: %s",
                          sqlite3_errmsg(ngx_http_agent_sqlite_db));
            return NULL;
        }

        ngx_http_agent_store_stmts[n] = stmt;
    }

    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);

    ngx_http_agent_sqlite_phase = ngx_http_agent_phase_now();
    ngx_http_agent_sqlite_phase_tx = (n == NGX_HTTP_AGENT_SQL_BEGIN
                                      || n == NGX_HTTP_AGENT_SQL_COMMIT);

    return stmt;
}


ngx_int_t
ngx_http_agent_sqlite_done(sqlite3_stmt *stmt, int rc)
{
    sqlite3_reset(stmt);

    /* a transaction's ends are "read only" to SQLite: the commit writes */
    ngx_http_agent_phase_add((ngx_http_agent_sqlite_phase_tx
                              || !sqlite3_stmt_readonly(stmt))
                             ? NGX_HTTP_AGENT_PHASE_WRITE
                             : NGX_HTTP_AGENT_PHASE_READ,
                             ngx_http_agent_sqlite_phase);
    ngx_http_agent_sqlite_phase = 0;

    if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
        return NGX_OK;
    }

    if ((rc & 0xff) == SQLITE_BUSY) {
        ngx_http_agent_sqlite_busy_seen = 1;

        if (ngx_http_agent_sqlite_spin < 100) {
            /* the write waits on a timer: not an error yet */
            return NGX_ERROR;
        }
    }

    ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_STORE_ERRORS, NULL, NULL, 1);

    ngx_log_error(NGX_LOG_ERR, ngx_http_agent_sqlite_log, 0,
                  "agent: sqlite step failed: %s",
                  sqlite3_errmsg(ngx_http_agent_sqlite_db));

    return NGX_ERROR;
}


ngx_int_t
ngx_http_agent_sqlite_exec(ngx_uint_t n)
{
    sqlite3_stmt  *stmt;

    stmt = ngx_http_agent_sqlite_stmt(n);
    if (stmt == NULL) {
        return NGX_ERROR;
    }

    return ngx_http_agent_sqlite_done(stmt, sqlite3_step(stmt));
}
