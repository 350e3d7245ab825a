
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The PostgreSQL store's schema and statements.  The schema is the SQLite
 * store's, table for table and column for column; what SQLite does in a
 * transaction of several statements is one statement here (WITH clauses
 * that write) or a function, so that each operation of the store is one
 * round trip.  The schema: pg_schema.c.
 */


#define NGX_HTTP_AGENT_PG_SESSION_COLS                                        \
    "id, title, metadata, created_at, updated_at, message_count, model, "     \
    "database, owner, prompt_tokens, completion_tokens, cached_tokens, "       \
    "history_bytes"

/* with the wait of a subgraph at its next node: store_checkpoint.c */
#define NGX_HTTP_AGENT_PG_CHECKPOINT_COLS                                     \
    "id, parent_id, step, node, next, msg_count, channels, created_at, ns,"   \
    " " NGX_HTTP_AGENT_PG_CHECKPOINT_SUB("c", "channels") ","                 \
    " " NGX_HTTP_AGENT_PG_CHECKPOINT_SUB("c", "id")

/* the latest checkpoint of the subgraph of x's next node, after x */
#define NGX_HTTP_AGENT_PG_CHECKPOINT_SUB(x, col)                              \
    "(SELECT s." col " FROM checkpoints s WHERE s.session_id = "              \
    x ".session_id AND s.ns <> '' AND s.ns = " x ".next || ':' || " x ".id"   \
    " AND s.n > " x ".n ORDER BY s.n DESC LIMIT 1)"

#define NGX_HTTP_AGENT_PG_ASSISTANT_COLS                                      \
    "a.assistant_id, a.owner, v.graph_id, v.version, a.latest, a.versions,"   \
    " v.doc, a.created_at, v.created_at"

#define NGX_HTTP_AGENT_PG_CRON_COLS                                           \
    "cron_id, owner, assistant_id, thread_id, origin, doc, next_run,"         \
    " enabled, created_at, updated_at, limit_keys"

#define NGX_HTTP_AGENT_PG_ITEM_COLS                                           \
    "owner, ns, key, value, created_at, updated_at, expires"

/* the rows of owner $1 under the prefix $2, not expired at $3, holding $4 */
#define NGX_HTTP_AGENT_PG_ITEM_WHERE                                          \
    " owner = COALESCE($1::text, '')"                                         \
    " AND ($2::text IS NULL OR ns = $2 OR starts_with(ns, $2 || '.'))"        \
    " AND (expires IS NULL OR expires > $3::bigint)"                          \
    " AND ($4::text IS NULL OR value::jsonb @> $4::jsonb)"

#define NGX_HTTP_AGENT_PG_RUN_COLS                                            \
    "run_id, thread_id, assistant_id, status, metadata, kwargs,"              \
    " multitask_strategy, created_at, updated_at"

/* a run's id copied (to is $2), as SQLite's agent_copy_id(): NULL stays */
#define NGX_HTTP_AGENT_PG_COPY_ID(c)                                          \
    "md5(" c " || $2::text)::uuid::text"

/*
 * a copied message keeps the id it had ("{thread}-{seq}", the thread's id
 * as its client names it: ngx_http_agent_store_id_shown; or the client's
 * own in its metadata), as LangGraph's copy keeps message ids; the
 * SQLite store's NGX_HTTP_AGENT_SQLITE_COPY_META
 */
#define NGX_HTTP_AGENT_PG_COPY_META                                           \
    "agent_meta_id(x.metadata, split_part($1::text, '.', 1) || '-' || x.seq)"

/* a step's messages as json_to_recordset() reads them */
#define NGX_HTTP_AGENT_PG_MSG_COLS                                            \
    "seq bigint, role text, content text, tool_calls text,"                   \
    " tool_call_id text, name text, images text, metadata text"

/* the rows of a turn's start that are not the session's */
#define NGX_HTTP_AGENT_PG_NO_SESSION                                          \
    ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"     \
    " NULL, NULL"

/* $4: every message; otherwise what a person reads, no tool traffic */
#define NGX_HTTP_AGENT_PG_SHOWN                                               \
    " AND ($4::int = 1 OR NOT (role = 'tool' OR (role = 'assistant'"          \
    " AND tool_calls IS NOT NULL AND (content IS NULL OR content = ''))))"


/*
 * a step: its rows only while the run holds the session, false otherwise;
 * the last step lets the session go; a subgraph's step: in its namespace
 * ($19)
 */
#define NGX_HTTP_AGENT_PG_WRITE_SQL(ns, nsv)                                  \
    "WITH u AS (UPDATE sessions SET updated_at = $10,"                        \
    " message_count = message_count + $11::bigint,"                           \
    " prompt_tokens = prompt_tokens + $13::bigint,"                           \
    " completion_tokens = completion_tokens + $14::bigint,"                   \
    " cached_tokens = cached_tokens + $15::bigint,"                           \
    " history_bytes = history_bytes + $16::bigint,"                           \
    " run_id = CASE WHEN $17::int = 1 THEN NULL ELSE run_id END,"             \
    " run_pid = CASE WHEN $17::int = 1 THEN NULL ELSE run_pid END,"           \
    " run_host = CASE WHEN $17::int = 1 THEN NULL ELSE run_host END,"         \
    " run_expires = CASE WHEN $17::int = 1 THEN NULL ELSE $12::bigint END"    \
    " WHERE id = $1 AND run_id = $2"                                          \
    " AND ($19::bigint = 0 OR run_gen = $19::bigint) RETURNING 1),"           \
    " m AS (INSERT INTO messages (session_id, seq, role, content,"            \
    " tool_calls, tool_call_id, name, images, metadata, created_at)"          \
    " SELECT $1, x.seq, x.role, x.content, x.tool_calls, x.tool_call_id,"     \
    " x.name, x.images, x.metadata, $10 FROM u,"                              \
    " json_to_recordset($18::json) AS x(" NGX_HTTP_AGENT_PG_MSG_COLS ")),"    \
    " c AS (INSERT INTO checkpoints (id, session_id, parent_id, step, node,"  \
    " next, msg_count, channels, created_at" ns ") SELECT $3, $1, $4,"        \
    " $5::bigint, $6, $7, $8::bigint, $9, $10" nsv " FROM u)"                 \
    " SELECT EXISTS (SELECT 1 FROM u)"


const char  *ngx_http_agent_pg_sql[] = {

    /* NGX_HTTP_AGENT_PG_SESSION_INSERT */
    "INSERT INTO sessions (id, title, metadata, created_at, updated_at,"
    " owner) VALUES ($1, $2, $3, $4, $4, $5)",

    /* NGX_HTTP_AGENT_PG_SESSION_GET */
    "SELECT " NGX_HTTP_AGENT_PG_SESSION_COLS " FROM sessions WHERE id = $1",

    /* NGX_HTTP_AGENT_PG_SESSION_LIST */
    "SELECT " NGX_HTTP_AGENT_PG_SESSION_COLS " FROM sessions"
    " WHERE ($3::text IS NULL OR owner = $3)"
    " AND ($4::text IS NULL"
    " OR COALESCE(metadata, '{}')::jsonb @> $4::jsonb)"
    " ORDER BY CASE WHEN $5::int = 1 THEN created_at END,"
    " CASE WHEN $5::int = 1 THEN n END, created_at DESC, n DESC"
    " LIMIT $1::bigint OFFSET $2::bigint",

    /* NGX_HTTP_AGENT_PG_SESSION_COUNT */
    "SELECT count(*) FROM sessions WHERE ($1::text IS NULL OR owner = $1)"
    " AND ($2::text IS NULL"
    " OR COALESCE(metadata, '{}')::jsonb @> $2::jsonb)",

    /* NGX_HTTP_AGENT_PG_SESSION_DELETE */
    "SELECT agent_session_delete($1)",

    /* NGX_HTTP_AGENT_PG_SESSION_SET_MODEL */
    "UPDATE sessions SET model = $2 WHERE id = $1",

    /* NGX_HTTP_AGENT_PG_SESSION_SET_DATABASE */
    "UPDATE sessions SET database = $2 WHERE id = $1",

    /* NGX_HTTP_AGENT_PG_SESSION_SET_METADATA */
    "UPDATE sessions SET metadata = $2 WHERE id = $1",

    /* NGX_HTTP_AGENT_PG_LOCK */
    "SELECT status, o_run, o_pid, o_host FROM agent_lock($1, $2,"
    " $3::bigint, $4::bigint, $5::bigint, $6, $7::bigint)",

    /* NGX_HTTP_AGENT_PG_LOCK_STEAL */
    "UPDATE sessions SET run_id = $2, run_pid = $3::bigint,"
    " run_expires = $5::bigint, run_host = $6, run_gen = $7::bigint"
    " WHERE id = $1 AND run_id = $4",

    /* NGX_HTTP_AGENT_PG_UNLOCK */
    "UPDATE sessions SET run_id = NULL, run_pid = NULL, run_expires = NULL,"
    " run_host = NULL WHERE id = $1 AND run_id = $2"
    " AND ($3::bigint = 0 OR run_gen = $3::bigint)",

    /* NGX_HTTP_AGENT_PG_RENEW */
    "UPDATE sessions SET run_expires = $3::bigint"
    " WHERE id = $1 AND run_id = $2"
    " AND ($4::bigint = 0 OR run_gen = $4::bigint)",

    /* NGX_HTTP_AGENT_PG_LEASES_RENEW: store_leases.c's array */
    "UPDATE sessions s SET run_expires = j.e"
    " FROM json_to_recordset($1::json) AS j(id text, r text, e bigint,"
    " g bigint) WHERE s.id = j.id AND s.run_id = j.r"
    " AND (j.g = 0 OR s.run_gen = j.g) RETURNING s.run_id",

    /* NGX_HTTP_AGENT_PG_MESSAGES */
    "WITH t(keep) AS (SELECT CASE WHEN $3::bigint < 0 THEN -1"
    " WHEN $3::bigint = 0 THEN $2::bigint"
    " ELSE COALESCE((SELECT seq FROM messages WHERE session_id = $1"
    " AND role = 'user' AND seq < $2::bigint ORDER BY seq DESC LIMIT 1"
    " OFFSET $3::bigint - 1), -1) END)"
    " SELECT id, role,"
    " CASE WHEN images IS NOT NULL AND seq < keep"
    "  THEN COALESCE(content, '') || ' [' || json_array_length(images::json)"
    "  || ' attachment(s) shown earlier in the conversation]'"
    "  ELSE content END,"
    " tool_calls, tool_call_id, name,"
    " CASE WHEN seq < keep THEN NULL ELSE images END,"
    " metadata, created_at FROM messages, t"
    " WHERE session_id = $1 AND seq < $2::bigint ORDER BY seq",

    /* NGX_HTTP_AGENT_PG_MESSAGES_PAGE: the oldest seq left out, the page */
    "WITH f AS (SELECT seq FROM (SELECT seq, count(*) OVER w AS n,"
    " sum(octet_length(content) + COALESCE(octet_length(tool_calls), 0)"
    " + CASE WHEN $5::int = 1 THEN COALESCE(octet_length(images), 0)"
    " ELSE 0 END) OVER w AS bytes"
    " FROM messages WHERE session_id = $1 AND id < $2::bigint"
    NGX_HTTP_AGENT_PG_SHOWN
    " WINDOW w AS (ORDER BY seq DESC)) x"
    " WHERE n > $3::bigint OR (n > 1 AND bytes > $6::bigint)"
    " ORDER BY seq DESC LIMIT 1)"
    " SELECT id, role, content, tool_calls, tool_call_id, name,"
    " CASE WHEN $5::int = 1 OR images IS NULL THEN images ELSE"
    "  (SELECT json_agg(json_build_object("
    "   'mime_type', e->>'mime_type',"
    "   'size', length(e->>'data') * 3 / 4))::text"
    "   FROM json_array_elements(images::json) e) END,"
    " metadata, created_at, (SELECT count(*) FROM f)"
    " FROM messages WHERE session_id = $1 AND id < $2::bigint"
    " AND seq > COALESCE((SELECT seq FROM f), -1)"
    NGX_HTTP_AGENT_PG_SHOWN
    " ORDER BY seq",

    /* NGX_HTTP_AGENT_PG_CHECKPOINT_GET: by id, any namespace's; the latest */
    "SELECT " NGX_HTTP_AGENT_PG_CHECKPOINT_COLS " FROM checkpoints c"
    " WHERE session_id = $1"
    " AND CASE WHEN $2::text IS NULL THEN ns = '' ELSE id = $2 END"
    " ORDER BY n DESC LIMIT 1",

    /* NGX_HTTP_AGENT_PG_CHECKPOINT_LIST: the thread's, or a namespace's */
    "SELECT " NGX_HTTP_AGENT_PG_CHECKPOINT_COLS " FROM checkpoints c"
    " WHERE session_id = $1 AND ns = $2 ORDER BY n DESC LIMIT 1000",

    /*
     * NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE: a step, one statement rather than
     * a function of four (a turn writes five): its rows only while the run
     * holds the session, false otherwise; the last step lets the session go
     */
    NGX_HTTP_AGENT_PG_WRITE_SQL("", ""),

    /* NGX_HTTP_AGENT_PG_FORK_LATER */
    "SELECT id, msg_count, channels FROM checkpoints WHERE session_id = $1"
    " AND msg_count > 0 AND n > (SELECT n FROM checkpoints"
    " WHERE session_id = $1 AND id = $2)",

    /* NGX_HTTP_AGENT_PG_FORK_KEEP */
    "UPDATE checkpoints SET channels = $2, msg_count = 0"
    " WHERE session_id = $3 AND id = $1",

    /* NGX_HTTP_AGENT_PG_FORK_CUT */
    "SELECT agent_fork_cut($1, $2::bigint)",

    /* NGX_HTTP_AGENT_PG_RESOURCE_INSERT: the file's bytes once by hash */
    "WITH s AS (SELECT 1 FROM sessions WHERE id = $2),"
    " b AS (INSERT INTO blobs (hash, data) SELECT $10, $11::bytea FROM s"
    " ON CONFLICT (hash) DO NOTHING)"
    " INSERT INTO resources (id, session_id, name, table_name, columns,"
    " row_count, size_bytes, path, created_at, blob)"
    " SELECT $1, $2, $3, $4, $5, $6::bigint, $7::bigint, $8, $9, $10"
    " FROM s",

    /* NGX_HTTP_AGENT_PG_RESOURCE_LIST */
    "SELECT id, name, table_name, columns, row_count, size_bytes, path,"
    " created_at, blob FROM resources WHERE session_id = $1"
    " ORDER BY created_at, n",

    /* NGX_HTTP_AGENT_PG_BLOB_GET */
    "SELECT data FROM blobs WHERE hash = $1",

    /*
     * NGX_HTTP_AGENT_PG_RUN_INSERT: and the kept events of runs that ended
     * before $11, 64 at a time (a host that takes them skips them)
     */
    "WITH o AS (SELECT run_id FROM runs WHERE $11::text IS NOT NULL"
    " AND events = 1 AND status NOT IN ('pending', 'running')"
    " AND updated_at < $11 LIMIT 64 FOR UPDATE SKIP LOCKED),"
    " d AS (DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM o)),"
    " u AS (UPDATE runs SET events = 0 WHERE run_id IN"
    " (SELECT run_id FROM o))"
    " INSERT INTO runs (run_id, thread_id, assistant_id, status, metadata,"
    " kwargs, multitask_strategy, created_at, updated_at, events,"
    " checkpoint, origin, limit_keys, secret)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9::int, $10, $12, $13,"
    " $14)",

    /*
     * NGX_HTTP_AGENT_PG_RUN_STATUS: at its end, its pending writes and its
     * secret go, and its thread if it holds it still, in the statement
     */
    "WITH w AS (DELETE FROM run_events WHERE run_id = $1 AND seq < 0 AND"
    " $2 NOT IN ('pending', 'running') AND ($4::bigint = 0 OR EXISTS"
    " (SELECT 1 FROM runs WHERE run_id = $1 AND attempts = $4::bigint - 1))),"
    " l AS (UPDATE sessions SET run_id = NULL, run_pid = NULL,"
    " run_expires = NULL, run_host = NULL WHERE id = (SELECT thread_id"
    " FROM runs WHERE run_id = $1) AND run_id = $1"
    " AND $2 NOT IN ('pending', 'running')"
    " AND ($4::bigint = 0 OR run_gen = $4::bigint))"
    " UPDATE runs SET status ="
    " CASE WHEN status = 'interrupted' AND cancel = 'interrupt'"
    " THEN status ELSE $2 END, updated_at = $3,"
    " events = CASE WHEN $2 = 'error' THEN 1 ELSE events END,"
    " secret = CASE WHEN $2 IN ('pending', 'running') THEN secret END"
    " WHERE run_id = $1 AND ($2 <> 'running' OR status = 'pending')"
    " AND ($4::bigint = 0 OR attempts = $4::bigint - 1)",

    /* NGX_HTTP_AGENT_PG_RUN_GET */
    "SELECT " NGX_HTTP_AGENT_PG_RUN_COLS " FROM runs"
    " WHERE run_id = $1 AND ($2::text IS NULL OR thread_id = $2)",

    /* NGX_HTTP_AGENT_PG_RUN_LIST */
    "SELECT " NGX_HTTP_AGENT_PG_RUN_COLS " FROM runs WHERE thread_id = $1"
    " AND ($4::text IS NULL OR status = $4)"
    " ORDER BY created_at DESC, n DESC LIMIT $2::bigint OFFSET $3::bigint",

    /* NGX_HTTP_AGENT_PG_RUN_CANCEL: now ($3): its row says so now */
    "UPDATE runs SET cancel = $2,"
    " status = CASE WHEN $2 = 'interrupt'"
    " AND ($3::int = 2 OR $3::int = 1 AND status = 'pending')"
    " THEN 'interrupted' ELSE status END,"
    " updated_at = CASE WHEN $2 = 'interrupt' AND $3::int = 2"
    " THEN $4 ELSE updated_at END"
    " WHERE run_id = $1 AND status IN ('pending', 'running')",

    /* NGX_HTTP_AGENT_PG_RUN_CANCELLED */
    "SELECT cancel FROM runs WHERE run_id = $1",

    /* NGX_HTTP_AGENT_PG_RUN_EVENT */
    "INSERT INTO run_events (run_id, seq, event, data)"
    " SELECT $1, $2::bigint, $3, $4 WHERE $5::bigint = 0 OR EXISTS"
    " (SELECT 1 FROM runs WHERE run_id = $1 AND attempts = $5::bigint - 1)"
    " ON CONFLICT (run_id, seq) DO UPDATE"
    " SET event = EXCLUDED.event, data = EXCLUDED.data WHERE $2::bigint < 0",

    /* NGX_HTTP_AGENT_PG_RUN_EVENTS */
    "SELECT seq, event, data FROM run_events"
    " WHERE run_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3::bigint",

    /* NGX_HTTP_AGENT_PG_RUN_ROLLBACK */
    "SELECT agent_run_rollback($1, $2, $3)",

    /* NGX_HTTP_AGENT_PG_RUN_DELETE */
    "WITH d AS (DELETE FROM run_events WHERE run_id = $1)"
    " DELETE FROM runs WHERE run_id = $1",

    /* NGX_HTTP_AGENT_PG_THREAD_BUSY */
    "SELECT run_id FROM sessions WHERE id = $1 AND run_expires >= $2::bigint",

    /*
     * NGX_HTTP_AGENT_PG_RUN_LOST: the leases that ran out, the oldest
     * first (sessions_lease), then this host's distinct holders, a step
     * of sessions_holder each, as rows of no run (pg_redrive.c)
     */
    "WITH RECURSIVE p(pid) AS (SELECT (SELECT run_pid FROM sessions"
    " WHERE run_host = $2 AND run_id IS NOT NULL ORDER BY run_pid LIMIT 1)"
    " UNION ALL SELECT (SELECT run_pid FROM sessions WHERE run_host = $2"
    " AND run_id IS NOT NULL AND run_pid > p.pid ORDER BY run_pid LIMIT 1)"
    " FROM p WHERE p.pid IS NOT NULL)"
    " (SELECT r.run_id, r.thread_id, s.run_host, s.run_pid, s.run_expires,"
    " r.origin FROM sessions s JOIN runs r ON r.run_id = s.run_id"
    " AND r.thread_id = s.id WHERE s.run_expires < $1::bigint"
    " AND s.run_id IS NOT NULL AND r.status = 'running'"
    " ORDER BY s.run_expires LIMIT 8)"
    " UNION ALL (SELECT NULL, NULL, NULL, pid, NULL, NULL FROM p"
    " WHERE pid IS NOT NULL LIMIT 64)",

    /* NGX_HTTP_AGENT_PG_RUN_HELD: the leases of this host's gone holders */
    "SELECT r.run_id, r.thread_id, s.run_host, s.run_pid, s.run_expires,"
    " r.origin FROM sessions s JOIN runs r ON r.run_id = s.run_id"
    " AND r.thread_id = s.id WHERE s.run_host = $1"
    " AND s.run_pid = ANY($2::bigint[]) AND s.run_id IS NOT NULL"
    " AND r.status = 'running' ORDER BY s.run_expires LIMIT 8",

    /*
     * NGX_HTTP_AGENT_PG_RUN_ORPHANS: a slice of the running runs, and
     * whether each holds its thread
     */
    "SELECT r.run_id, r.thread_id,"
    " (s.run_id IS NOT DISTINCT FROM r.run_id)::int"
    " FROM runs r JOIN sessions s ON s.id = r.thread_id"
    " WHERE r.status = 'running' AND r.thread_id > $1"
    " ORDER BY r.thread_id LIMIT 256",

    /*
     * NGX_HTTP_AGENT_PG_RUN_CLAIM: the lease taken from the holder and the
     * expiry read, or nothing; the attempt counted; the kept events after
     * the last step's values go (its max(seq) is read before: the run's
     * new events follow it)
     */
    "WITH l AS (UPDATE sessions SET run_pid = $3::bigint, run_host = $4,"
    " run_expires = $5::bigint,"
    " run_gen = (SELECT attempts + 2 FROM runs WHERE run_id = $1)"
    " WHERE id = $2 AND run_id = $1"
    " AND run_pid = $6::bigint AND run_expires = $7::bigint"
    " RETURNING owner),"
    " u AS (UPDATE runs SET attempts = attempts + 1 WHERE run_id = $1"
    " AND status = 'running' AND EXISTS (SELECT 1 FROM l) RETURNING *),"
    /* the kept events of the step that runs again (docs/runs.md) */
    " c AS (DELETE FROM run_events WHERE run_id = $1"
    " AND EXISTS (SELECT 1 FROM u) AND seq > (SELECT COALESCE(max(seq), 1)"
    " FROM run_events WHERE run_id = $1"
    " AND event IN ('values', 'updates', 'checkpoints')))"
    " SELECT u.run_id, u.thread_id, u.assistant_id, u.status, u.metadata,"
    " u.kwargs, u.multitask_strategy, u.created_at, u.updated_at,"
    " u.origin, u.checkpoint, (SELECT owner FROM l), u.attempts,"
    " (SELECT max(seq) FROM run_events WHERE run_id = $1 AND seq >= 0),"
    " u.limit_keys, u.secret FROM u",

    /*
     * NGX_HTTP_AGENT_PG_OPEN: a turn's start in one statement: the session
     * ($8: its owner, or any), the lease (status 0 taken, 1 held, 2 no such
     * session, 3 the row changed while the lease was asked for: ask again),
     * the latest checkpoint (k 1), its messages (k 2), the files (k 3).
     *
     * The statement's reads see the session as it was when it started: the
     * lease is taken only from that version of the row (its ctid), so that
     * a step written meanwhile, say the last of a turn letting the session
     * go, is never missed by the state read here.
     */
    "WITH o AS (SELECT ctid AS t, run_id, run_pid, run_host, run_expires, "
    NGX_HTTP_AGENT_PG_SESSION_COLS " FROM sessions"
    " WHERE id = $1 AND ($8::text IS NULL OR owner = $8)),"
    " l AS (UPDATE sessions SET run_id = $2, run_pid = $3::bigint,"
    " run_expires = $4::bigint, run_host = $6, run_gen = $9::bigint"
    " WHERE id = $1"
    " AND ctid = (SELECT t FROM o)"
    " AND (run_id IS NULL OR run_expires < $5::bigint OR (run_id = $2"
    " AND run_pid = $3::bigint AND run_host = $6)) RETURNING 1),"
    " s AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM l) THEN 0"
    " WHEN NOT EXISTS (SELECT 1 FROM o) THEN 2"
    " WHEN EXISTS (SELECT 1 FROM o WHERE run_id IS NOT NULL"
    " AND run_expires >= $5::bigint) THEN 1 ELSE 3 END AS st),"
    " c AS (SELECT x.id, x.parent_id, x.step, x.node, x.next, x.msg_count,"
    " x.channels, x.created_at,"
    " " NGX_HTTP_AGENT_PG_CHECKPOINT_SUB("x", "channels") " AS sub,"
    " " NGX_HTTP_AGENT_PG_CHECKPOINT_SUB("x", "id") " AS sub_id"
    " FROM checkpoints x, s WHERE s.st = 0"
    " AND x.session_id = $1 AND x.ns = '' ORDER BY x.n DESC LIMIT 1),"

    /*
     * the rows from the one the worker kept last ($7 its seq, $10 its id)
     * if it is still there, else all (store_history.c): worked out once
     * (MATERIALIZED), not once a message
     */
    " tk AS MATERIALIZED (SELECT c.msg_count AS mc,"
    " CASE WHEN EXISTS (SELECT 1 FROM messages y WHERE y.session_id = $1"
    " AND y.seq = $7::bigint AND y.id = $10::bigint"
    " AND y.seq < c.msg_count) THEN $7::bigint ELSE -1 END AS since FROM c)"

    " SELECT 0 AS k, CASE WHEN st <> 0 THEN run_id END AS c1,"
    " CASE WHEN st <> 0 THEN run_host END AS c2, NULL::text AS c3,"
    " NULL::text AS c4, NULL::text AS c5, NULL::text AS c6,"
    " NULL::text AS c7, NULL::text AS c8, st::bigint AS n1,"
    " CASE WHEN st <> 0 THEN run_pid END AS n2, "
    NGX_HTTP_AGENT_PG_SESSION_COLS " FROM s LEFT JOIN o ON true"

    " UNION ALL SELECT 1, c.id, c.parent_id, c.node, c.next, c.channels,"
    " c.created_at, c.sub, c.sub_id, c.step, c.msg_count"
    NGX_HTTP_AGENT_PG_NO_SESSION " FROM c"

    /* as stored, with the content once its images are no longer sent */
    " UNION ALL (SELECT 2, m.role, m.content, m.tool_calls, m.tool_call_id,"
    " m.name, m.images, m.metadata, m.created_at, m.id, m.seq,"
    " CASE WHEN m.images IS NOT NULL THEN COALESCE(m.content, '') || ' ['"
    " || json_array_length(m.images::json) || ' attachment(s) shown earlier"
    " in the conversation]' END,"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
    " FROM messages m, tk WHERE m.session_id = $1 AND m.seq < tk.mc"
    " AND m.seq >= tk.since ORDER BY m.seq)"

    " UNION ALL (SELECT 3, x.id, x.name, x.table_name, x.columns, x.path,"
    " x.created_at, x.blob, NULL, x.row_count, x.size_bytes"
    NGX_HTTP_AGENT_PG_NO_SESSION " FROM resources x, s WHERE s.st = 0"
    " AND x.session_id = $1 ORDER BY x.created_at, x.n)",

    /*
     * NGX_HTTP_AGENT_PG_CHECKPOINT_PAIR: two steps of one run asked for in
     * one pass of the event loop (ngx_http_agent_pg_next), in one statement:
     * the first's parameters of CHECKPOINT_WRITE, then the second's from
     * its third on ($19-$34); the rows in order, the counters summed (the
     * first never lets the session go: the run goes on from it)
     */
    "WITH u AS (UPDATE sessions SET updated_at = $27,"
    " message_count = message_count + $11::bigint + $28::bigint,"
    " prompt_tokens = prompt_tokens + $13::bigint + $30::bigint,"
    " completion_tokens = completion_tokens + $14::bigint + $31::bigint,"
    " cached_tokens = cached_tokens + $15::bigint + $32::bigint,"
    " history_bytes = history_bytes + $16::bigint + $33::bigint,"
    " run_id = CASE WHEN $34::int = 1 THEN NULL ELSE run_id END,"
    " run_pid = CASE WHEN $34::int = 1 THEN NULL ELSE run_pid END,"
    " run_host = CASE WHEN $34::int = 1 THEN NULL ELSE run_host END,"
    " run_expires = CASE WHEN $34::int = 1 THEN NULL"
    " ELSE GREATEST($12::bigint, $29::bigint) END"
    " WHERE id = $1 AND run_id = $2 AND $17::int = 0"
    " AND ($19::bigint = 0 OR run_gen = $19::bigint)"
    " AND $36::bigint IS NOT NULL RETURNING 1),"
    " m AS (INSERT INTO messages (session_id, seq, role, content,"
    " tool_calls, tool_call_id, name, images, metadata, created_at)"
    " SELECT $1, x.seq, x.role, x.content, x.tool_calls, x.tool_call_id,"
    " x.name, x.images, x.metadata, x.at FROM u, (SELECT y.*, $10 AS at"
    " FROM json_to_recordset($18::json) AS y(" NGX_HTTP_AGENT_PG_MSG_COLS ")"
    " UNION ALL SELECT z.*, $27 FROM json_to_recordset($35::json) AS z("
    NGX_HTTP_AGENT_PG_MSG_COLS ")) x),"
    " c AS (INSERT INTO checkpoints (id, session_id, parent_id, step, node,"
    " next, msg_count, channels, created_at) SELECT $3, $1, $4, $5::bigint,"
    " $6, $7, $8::bigint, $9, $10 FROM u UNION ALL SELECT $20, $1, $21,"
    " $22::bigint, $23, $24, $25::bigint, $26, $27 FROM u)"
    " SELECT EXISTS (SELECT 1 FROM u)",

    /* NGX_HTTP_AGENT_PG_ASSISTANT_CREATE: NGX_DECLINED, the id is taken */
    "WITH a AS (INSERT INTO assistants (assistant_id, owner, graph_id,"
    " latest, versions, created_at, updated_at) VALUES ($1, $2::text, $3,"
    " 1, 1, $5, $5) ON CONFLICT DO NOTHING RETURNING 1)"
    " INSERT INTO assistant_versions (assistant_id, version, graph_id, doc,"
    " created_at) SELECT $1::text, 1, $3::text, $4::text, $5::text FROM a",

    /* NGX_HTTP_AGENT_PG_ASSISTANT_BUMP: version $6 after the highest */
    "WITH a AS (UPDATE assistants SET latest = $6::bigint,"
    " versions = $6::bigint, graph_id = $3, updated_at = $5"
    " WHERE assistant_id = $1 AND owner IS NOT DISTINCT FROM $2::text"
    " AND versions = $6::bigint - 1 RETURNING 1)"
    " INSERT INTO assistant_versions (assistant_id, version, graph_id, doc,"
    " created_at) SELECT $1::text, $6::bigint, $3::text, $4::text,"
    " $5::text FROM a",

    /* NGX_HTTP_AGENT_PG_ASSISTANT_GET: $3 the version, 0 the latest */
    "SELECT " NGX_HTTP_AGENT_PG_ASSISTANT_COLS " FROM assistants a"
    " JOIN assistant_versions v ON v.assistant_id = a.assistant_id"
    " AND v.version = CASE WHEN $3::bigint > 0 THEN $3::bigint"
    " ELSE a.latest END"
    " WHERE a.assistant_id = $1 AND a.owner IS NOT DISTINCT FROM $2::text",

    /* NGX_HTTP_AGENT_PG_ASSISTANT_LIST: $3 one's versions, or all latest */
    "SELECT " NGX_HTTP_AGENT_PG_ASSISTANT_COLS " FROM assistants a"
    " JOIN assistant_versions v ON v.assistant_id = a.assistant_id"
    " AND ($3::text IS NOT NULL OR v.version = a.latest)"
    " WHERE a.owner IS NOT DISTINCT FROM $1::text"
    " AND ($2::text IS NULL OR v.graph_id = $2::text)"
    " AND ($3::text IS NULL OR a.assistant_id = $3::text)"
    " ORDER BY a.created_at DESC, a.assistant_id, v.version DESC",

    /* NGX_HTTP_AGENT_PG_ASSISTANT_LATEST */
    "UPDATE assistants SET latest = $3::bigint, updated_at = $4"
    " WHERE assistant_id = $1 AND owner IS NOT DISTINCT FROM $2::text"
    " AND EXISTS (SELECT 1 FROM assistant_versions WHERE assistant_id = $1"
    " AND version = $3::bigint)",

    /* NGX_HTTP_AGENT_PG_ASSISTANT_DELETE */
    "WITH a AS (DELETE FROM assistants WHERE assistant_id = $1"
    " AND owner IS NOT DISTINCT FROM $2::text RETURNING assistant_id)"
    " DELETE FROM assistant_versions WHERE assistant_id IN"
    " (SELECT assistant_id FROM a)",

    /*
     * NGX_HTTP_AGENT_PG_ITEM_PUT: and up to 64 expired items, the one put
     * aside (a row written twice in one statement is an error): one that
     * expired is made anew, its created_at too
     */
    "WITH x AS (DELETE FROM items WHERE ctid IN (SELECT ctid FROM items"
    " WHERE expires <= $8::bigint AND NOT (owner = COALESCE($1::text, '')"
    " AND ns = $2 AND key = $3) LIMIT 64 FOR UPDATE SKIP LOCKED))"
    " INSERT INTO items (owner, ns, key, value, text, created_at,"
    " updated_at, expires, embedding) SELECT COALESCE($1::text, ''), $2,"
    " $3, $4, NULLIF($5::text, ''), $6, $6, NULLIF($7::bigint, 0),"
    " $11::bytea"
    " WHERE $9::bigint < 0 OR (SELECT count(*) < $9::bigint"
    " AND COALESCE(sum(octet_length(value)), 0) + octet_length($4::text)"
    " <= $10::bigint FROM items WHERE owner = COALESCE($1::text, '')"
    " AND NOT (ns = $2 AND key = $3))"
    " ON CONFLICT (owner, ns, key) DO UPDATE SET value = excluded.value,"
    " text = excluded.text, updated_at = excluded.updated_at,"
    " expires = excluded.expires, embedding = excluded.embedding,"
    " created_at = CASE"
    " WHEN items.expires <= $8::bigint THEN excluded.created_at"
    " ELSE items.created_at END",

    /* NGX_HTTP_AGENT_PG_ITEM_GET */
    "SELECT " NGX_HTTP_AGENT_PG_ITEM_COLS ", 0 FROM items"
    " WHERE owner = COALESCE($1::text, '') AND ns = $2 AND key = $3"
    " AND (expires IS NULL OR expires > $4::bigint)",

    /* NGX_HTTP_AGENT_PG_ITEM_DELETE */
    "DELETE FROM items WHERE owner = COALESCE($1::text, '') AND ns = $2"
    " AND key = $3",

    /* NGX_HTTP_AGENT_PG_ITEM_SEARCH: the latest updated first */
    "SELECT " NGX_HTTP_AGENT_PG_ITEM_COLS ", 0 FROM items"
    " WHERE" NGX_HTTP_AGENT_PG_ITEM_WHERE
    " ORDER BY updated_at DESC, n DESC LIMIT $5::bigint OFFSET $6::bigint",

    /*
     * NGX_HTTP_AGENT_PG_ITEM_QUERY: the text having any word of $7, best
     * first.  The words are the parser's (plainto_tsquery: no syntax of
     * the client's is read), its AND made OR; none (punctuation only) is
     * no match, without the notice the cast of an empty query would log
     */
    "WITH t AS (SELECT CASE WHEN length(to_tsvector('simple', $7::text)) > 0"
    " THEN replace(plainto_tsquery('simple', $7::text)::text,"
    " ' & ', ' | ')::tsquery END AS q)"
    " SELECT " NGX_HTTP_AGENT_PG_ITEM_COLS ","
    " ts_rank(to_tsvector('simple', text), t.q) AS r FROM items, t"
    " WHERE to_tsvector('simple', text) @@ t.q AND"
    NGX_HTTP_AGENT_PG_ITEM_WHERE
    " ORDER BY r DESC, n DESC LIMIT $5::bigint OFFSET $6::bigint",

    /* NGX_HTTP_AGENT_PG_ITEM_NAMESPACES: in the order of their bytes */
    "SELECT ns FROM items WHERE owner = COALESCE($1::text, '')"
    " AND ($2::text IS NULL OR ns = $2 OR starts_with(ns, $2 || '.'))"
    " AND (expires IS NULL OR expires > $3::bigint)"
    " AND ($4::text IS NULL OR ns = $4"
    " OR right(ns, length($4) + 1) = '.' || $4)"
    " GROUP BY ns ORDER BY ns COLLATE \"C\" LIMIT $5::bigint",

    /*
     * NGX_HTTP_AGENT_PG_ITEM_NEAR: a page of the vectors of the items a
     * search by meaning scores (pg_near.c), the newest first, before row
     * $5; NGX_HTTP_AGENT_PG_ITEM_ROWS: the best of them read whole
     */
    "SELECT n, embedding FROM items WHERE" NGX_HTTP_AGENT_PG_ITEM_WHERE
    " AND embedding IS NOT NULL AND n < $5::bigint"
    " ORDER BY n DESC LIMIT $6::bigint",
    "SELECT " NGX_HTTP_AGENT_PG_ITEM_COLS ", n FROM items"
    " WHERE owner = COALESCE($2::text, '') AND embedding IS NOT NULL"
    " AND n = ANY($1::bigint[])",

    /*
     * NGX_HTTP_AGENT_PG_SESSION_COPY: session $1 copied as $2 at $3 with
     * its rows, as the SQLite store's COPY statements; one row when the
     * copy was made, none when there is no $1 or $2 is taken
     */
    "WITH s AS (INSERT INTO sessions (id, title, metadata, created_at,"
    " updated_at, message_count, model, database, owner, history_bytes,"
    " prompt_tokens, completion_tokens, cached_tokens) SELECT $2::text,"
    " title, metadata, $3::text, $3::text, message_count, model, database,"
    " owner, history_bytes, prompt_tokens, completion_tokens, cached_tokens"
    " FROM sessions WHERE id = $1::text ON CONFLICT (id) DO NOTHING"
    " RETURNING 1),"
    " m AS (INSERT INTO messages (session_id, seq, role, content,"
    " tool_calls, tool_call_id, name, images, metadata, created_at)"
    " SELECT $2::text, x.seq, x.role, x.content, x.tool_calls,"
    " x.tool_call_id, x.name, x.images, " NGX_HTTP_AGENT_PG_COPY_META ","
    " x.created_at FROM messages x WHERE x.session_id = $1::text"
    " AND EXISTS (SELECT 1 FROM s) ORDER BY x.seq),"
    " c AS (INSERT INTO checkpoints (id, session_id, parent_id, step, node,"
    " next, msg_count, channels, created_at, ns) SELECT x.id, $2::text,"
    " x.parent_id, x.step, x.node, x.next,"
    " x.msg_count, x.channels, x.created_at, x.ns FROM checkpoints x"
    " WHERE x.session_id = $1::text AND EXISTS (SELECT 1 FROM s)"
    " ORDER BY x.n),"
    " r AS (INSERT INTO runs (run_id, thread_id, assistant_id, status,"
    " metadata, kwargs, multitask_strategy, created_at, updated_at, events,"
    " checkpoint) SELECT " NGX_HTTP_AGENT_PG_COPY_ID("x.run_id") ","
    " $2::text, x.assistant_id, x.status, x.metadata, x.kwargs,"
    " x.multitask_strategy, x.created_at, x.updated_at, 0,"
    " x.checkpoint FROM runs x"
    " WHERE x.thread_id = $1::text AND EXISTS (SELECT 1 FROM s)"
    " ORDER BY x.created_at, x.n)"
    " SELECT 1 FROM s",

    /* NGX_HTTP_AGENT_PG_CRON_PUT */
    "INSERT INTO crons (cron_id, owner, assistant_id, thread_id, origin,"
    " doc, next_run, enabled, created_at, updated_at, limit_keys)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7::bigint, $8::int, $9, $10, $11)"
    " ON CONFLICT (cron_id) DO UPDATE SET assistant_id = $3,"
    " thread_id = $4, origin = $5, doc = $6, next_run = $7::bigint,"
    " enabled = $8::int, updated_at = $10, limit_keys = $11",

    /* NGX_HTTP_AGENT_PG_CRON_GET */
    "SELECT " NGX_HTTP_AGENT_PG_CRON_COLS " FROM crons"
    " WHERE cron_id = $1 AND owner IS NOT DISTINCT FROM $2::text",

    /* NGX_HTTP_AGENT_PG_CRON_LIST */
    "SELECT " NGX_HTTP_AGENT_PG_CRON_COLS " FROM crons"
    " WHERE owner IS NOT DISTINCT FROM $1::text ORDER BY created_at, cron_id",

    /* NGX_HTTP_AGENT_PG_CRON_DELETE */
    "DELETE FROM crons"
    " WHERE cron_id = $1 AND owner IS NOT DISTINCT FROM $2::text",

    /* NGX_HTTP_AGENT_PG_CRON_DUE */
    "SELECT " NGX_HTTP_AGENT_PG_CRON_COLS " FROM crons"
    " WHERE enabled = 1 AND next_run > 0 AND next_run <= $1::bigint"
    " ORDER BY next_run LIMIT 8",

    /*
     * NGX_HTTP_AGENT_PG_CRON_CLAIM: a tick another host is claiming is
     * skipped, not waited for; of those that read it due, one moves it
     */
    "UPDATE crons SET next_run = $3::bigint WHERE cron_id = (SELECT cron_id"
    " FROM crons WHERE cron_id = $1 AND next_run = $2::bigint"
    " AND enabled = 1 FOR UPDATE SKIP LOCKED)",

    /* NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE_NS: a subgraph's step */
    NGX_HTTP_AGENT_PG_WRITE_SQL(", ns", ", $20"),

    /*
     * NGX_HTTP_AGENT_PG_CHECKPOINT_PRUNE (agent_checkpoint_keep): $2 the
     * count kept (0: none), $3 the oldest time kept (NULL: none), $4 the
     * pass's rows, $5 the run that ends; the latest, all after it, and
     * those another run that has not ended started from stay
     * (sqlite_prune.c says why)
     */
    "DELETE FROM checkpoints WHERE n IN (SELECT n FROM checkpoints"
    " WHERE session_id = $1"
    " AND n < (SELECT max(n) FROM checkpoints"
    " WHERE session_id = $1 AND ns = '')"
    " AND ($2::bigint = 0 OR n < (SELECT n FROM checkpoints"
    " WHERE session_id = $1 ORDER BY n DESC LIMIT 1"
    " OFFSET greatest($2::bigint - 1, 0)))"
    " AND ($3::text IS NULL OR created_at < $3::text)"
    " AND id NOT IN (SELECT checkpoint FROM runs WHERE thread_id = $1"
    " AND status IN ('pending', 'running') AND checkpoint IS NOT NULL"
    " AND run_id IS DISTINCT FROM $5)"
    " ORDER BY n LIMIT $4::bigint)",

    /*
     * NGX_HTTP_AGENT_PG_THREAD_STORAGE: a first row of totals (no name),
     * then one for each channel of the thread's checkpoints
     */
    "SELECT NULL::text,"
    " (SELECT count(*) FROM checkpoints WHERE session_id = $1),"
    " (SELECT coalesce(sum(octet_length(channels) + octet_length(id)"
    " + octet_length(node) + octet_length(created_at) + octet_length(ns)"
    " + coalesce(octet_length(parent_id), 0)"
    " + coalesce(octet_length(next), 0)), 0)::bigint"
    " FROM checkpoints WHERE session_id = $1),"
    " (SELECT count(*) FROM messages WHERE session_id = $1),"
    " (SELECT coalesce(sum(coalesce(octet_length(content), 0)"
    " + coalesce(octet_length(tool_calls), 0)"
    " + coalesce(octet_length(images), 0)"
    " + coalesce(octet_length(metadata), 0)), 0)::bigint"
    " FROM messages WHERE session_id = $1),"
    " (SELECT count(*) FROM run_events WHERE seq < 0 AND run_id IN"
    " (SELECT run_id FROM runs WHERE thread_id = $1)),"
    " (SELECT coalesce(sum(octet_length(data)), 0)::bigint FROM run_events"
    " WHERE seq < 0 AND run_id IN"
    " (SELECT run_id FROM runs WHERE thread_id = $1))"
    " UNION ALL"
    " SELECT j.key, count(*), sum(octet_length(j.value::text))::bigint,"
    " 0, 0, 0, 0 FROM checkpoints c, json_each(c.channels::json) j"
    " WHERE c.session_id = $1 AND left(c.channels, 1) = '{'"
    " GROUP BY j.key",

    /* NGX_HTTP_AGENT_PG_CACHE_GET */
    "SELECT value FROM cache WHERE key = $1 AND expires > $2::bigint",

    /*
     * NGX_HTTP_AGENT_PG_CACHE_PUT: room made first, the expired and, when
     * this one would pass a bound ($6 entries, $7 bytes), the oldest past
     * what a full cache keeps of it ($8, $9), in the same statement
     */
    "WITH o AS (SELECT key, expires, row_number() OVER w AS k,"
    " sum(bytes) OVER w AS b, count(*) OVER () AS n,"
    " sum(bytes) OVER () AS t FROM cache WHERE key <> $1"
    " WINDOW w AS (ORDER BY created DESC, key DESC)),"
    " d AS (DELETE FROM cache WHERE key IN (SELECT key FROM o"
    " WHERE expires <= $4::bigint OR (n >= $6::bigint AND k >= $8::bigint)"
    " OR (t + $3::bigint > $7::bigint AND b + $3::bigint > $9::bigint)))"
    " INSERT INTO cache (key, value, bytes, created, expires)"
    " VALUES ($1, $2, $3::bigint, $4::bigint, $5::bigint)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value,"
    " bytes = excluded.bytes, created = excluded.created,"
    " expires = excluded.expires",

    /* NGX_HTTP_AGENT_PG_BEGIN, _COMMIT, _ROLLBACK: ngx_http_agent_pg_begin */
    "BEGIN",
    "COMMIT",
    "ROLLBACK"
};
