
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_pg.h"


/*
 * The PostgreSQL store's schema: the SQLite store's, table for table and
 * column for column.  It is set up by the first connection of each
 * worker: one DO statement under an advisory lock, so that hosts and
 * workers starting at once wait for each other, and that does nothing
 * once the version is there.  A later version adds its steps after the
 * last.
 */


#define NGX_HTTP_AGENT_PG_BYTES(t)                                            \
    "COALESCE(SUM(octet_length(" t "content) + COALESCE(octet_length("        \
    t "tool_calls), 0) + COALESCE(octet_length(" t "images), 0)), 0)"


const char  *ngx_http_agent_pg_schema =
    "DO $agent$ BEGIN"
    " PERFORM pg_advisory_xact_lock(72318931);"
    " IF to_regclass('agent_schema') IS NOT NULL THEN"
    "  IF EXISTS (SELECT 1 FROM agent_schema WHERE version >= 12) THEN"
    "   RETURN;"
    "  END IF;"
    " END IF;"

    " CREATE TABLE IF NOT EXISTS agent_schema (version int PRIMARY KEY);"

    " CREATE TABLE IF NOT EXISTS sessions ("
    "  n bigserial, id text PRIMARY KEY, title text NOT NULL DEFAULT '',"
    "  metadata text, created_at text NOT NULL, updated_at text NOT NULL,"
    "  message_count bigint NOT NULL DEFAULT 0, model text, database text,"
    "  run_id text, run_pid bigint, run_expires bigint, owner text,"
    "  run_host text, history_bytes bigint NOT NULL DEFAULT 0,"
    "  prompt_tokens bigint NOT NULL DEFAULT 0,"
    "  completion_tokens bigint NOT NULL DEFAULT 0,"
    "  cached_tokens bigint NOT NULL DEFAULT 0);"
    " CREATE INDEX IF NOT EXISTS sessions_created"
    "  ON sessions (created_at, n);"

    " CREATE TABLE IF NOT EXISTS messages ("
    "  id bigserial PRIMARY KEY, session_id text NOT NULL,"
    "  seq bigint NOT NULL, role text NOT NULL, content text,"
    "  tool_calls text, tool_call_id text, name text, images text,"
    "  metadata text, created_at text NOT NULL);"
    " CREATE UNIQUE INDEX IF NOT EXISTS messages_seq"
    "  ON messages (session_id, seq);"

    /* large values stored as they are: SQLite does not compress either,
       and pglz on a tool's large result costs a turn milliseconds */
    " ALTER TABLE messages ALTER COLUMN content SET STORAGE EXTERNAL,"
    "  ALTER COLUMN tool_calls SET STORAGE EXTERNAL,"
    "  ALTER COLUMN images SET STORAGE EXTERNAL;"

    " CREATE TABLE IF NOT EXISTS checkpoints ("
    "  n bigserial PRIMARY KEY, id text NOT NULL,"
    "  session_id text NOT NULL, parent_id text, step bigint NOT NULL,"
    "  node text NOT NULL, next text, msg_count bigint NOT NULL,"
    "  channels text NOT NULL, created_at text NOT NULL);"
    " CREATE INDEX IF NOT EXISTS checkpoints_session"
    "  ON checkpoints (session_id, n);"
    " ALTER TABLE checkpoints ALTER COLUMN channels SET STORAGE EXTERNAL;"

    /*
     * version 4: a checkpoint's id is its thread's (a copied thread keeps
     * the original's, as LangGraph's copy does)
     */
    " ALTER TABLE checkpoints DROP CONSTRAINT IF EXISTS checkpoints_id_key;"
    " CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_id"
    "  ON checkpoints (session_id, id);"

    " CREATE TABLE IF NOT EXISTS resources ("
    "  n bigserial, id text PRIMARY KEY, session_id text NOT NULL,"
    "  name text NOT NULL, table_name text NOT NULL, columns text NOT NULL,"
    "  row_count bigint NOT NULL, size_bytes bigint NOT NULL,"
    "  path text NOT NULL, created_at text NOT NULL, blob text);"
    " CREATE TABLE IF NOT EXISTS blobs ("
    "  hash text PRIMARY KEY, data bytea NOT NULL);"
    " CREATE INDEX IF NOT EXISTS resources_session"
    "  ON resources (session_id, created_at);"

    " CREATE TABLE IF NOT EXISTS runs ("
    "  n bigserial, run_id text PRIMARY KEY, thread_id text NOT NULL,"
    "  assistant_id text NOT NULL, status text NOT NULL, metadata text,"
    "  kwargs text, multitask_strategy text, created_at text NOT NULL,"
    "  updated_at text NOT NULL, cancel text, events int NOT NULL,"
    "  checkpoint text);"
    " CREATE INDEX IF NOT EXISTS runs_thread ON runs (thread_id, created_at);"
    " CREATE INDEX IF NOT EXISTS runs_expire ON runs (events, updated_at);"

    " CREATE TABLE IF NOT EXISTS run_events ("
    "  run_id text NOT NULL, seq bigint NOT NULL, event text NOT NULL,"
    "  data text NOT NULL, PRIMARY KEY (run_id, seq));"

    /* the counters of a session from its rows, after a cut */

    " CREATE OR REPLACE FUNCTION agent_recount(s text) RETURNS void AS $f$"
    "  UPDATE sessions SET message_count ="
    "   (SELECT count(*) FROM messages WHERE session_id = s),"
    "   history_bytes = (SELECT " NGX_HTTP_AGENT_PG_BYTES("")
    "   FROM messages WHERE session_id = s) WHERE id = s"
    " $f$ LANGUAGE sql;"

    /* the lease: 0 taken, 1 held (and by whom), 2 no such session */

    " CREATE OR REPLACE FUNCTION agent_lock(i text, r text, p bigint,"
    "  e bigint, t bigint, h text, OUT status int, OUT o_run text,"
    "  OUT o_pid bigint, OUT o_host text) AS $f$ BEGIN"
    "  UPDATE sessions SET run_id = r, run_pid = p, run_expires = e,"
    "   run_host = h WHERE id = i AND (run_id IS NULL OR run_expires < t"
    "   OR (run_id = r AND run_pid = p AND run_host = h));"
    "  IF FOUND THEN status := 0; RETURN; END IF;"
    "  SELECT run_id, run_pid, run_host INTO o_run, o_pid, o_host"
    "   FROM sessions WHERE id = i;"
    "  status := CASE WHEN FOUND THEN 1 ELSE 2 END;"
    " END $f$ LANGUAGE plpgsql;"

    /* a session and all of its rows: '' first, then its files' paths */

    " CREATE OR REPLACE FUNCTION agent_session_delete(i text)"
    "  RETURNS SETOF text AS $f$ DECLARE p text[]; BEGIN"
    "  SELECT array_agg(path) INTO p FROM resources WHERE session_id = i;"
    "  DELETE FROM sessions WHERE id = i;"
    "  IF NOT FOUND THEN RETURN; END IF;"
    "  DELETE FROM messages WHERE session_id = i;"
    "  DELETE FROM checkpoints WHERE session_id = i;"
    "  DELETE FROM blobs WHERE hash IN (SELECT blob FROM resources"
    "   WHERE session_id = i) AND NOT EXISTS (SELECT 1 FROM resources r"
    "   WHERE r.blob = blobs.hash AND r.session_id <> i);"
    "  DELETE FROM resources WHERE session_id = i;"
    "  DELETE FROM run_events WHERE run_id IN"
    "   (SELECT run_id FROM runs WHERE thread_id = i);"
    "  DELETE FROM runs WHERE thread_id = i;"
    "  DELETE FROM crons WHERE thread_id = i;"
    "  RETURN NEXT '';"
    "  RETURN QUERY SELECT unnest(COALESCE(p, '{}'));"
    " END $f$ LANGUAGE plpgsql;"

    /*
     * a copied message's metadata with its id (NGX_HTTP_AGENT_PG_COPY_META):
     * one that is no JSON object is kept as it is
     */

    " CREATE OR REPLACE FUNCTION agent_meta_id(m text, id text)"
    "  RETURNS text AS $f$ BEGIN"
    "  IF m IS NULL THEN RETURN json_build_object('id', id)::text; END IF;"
    "  IF jsonb_typeof(m::jsonb) = 'object' AND NOT m::jsonb ? 'id' THEN"
    "   RETURN (m::jsonb || jsonb_build_object('id', id))::text;"
    "  END IF;"
    "  RETURN m;"
    " EXCEPTION WHEN others THEN RETURN m;"
    " END $f$ LANGUAGE plpgsql;"

    /* a run undone: the thread as before it, the run forgotten */

    " CREATE OR REPLACE FUNCTION agent_run_rollback(t text, r text, b text)"
    "  RETURNS void AS $f$ BEGIN"
    "  DELETE FROM messages WHERE session_id = t AND seq >= COALESCE("
    "   (SELECT msg_count FROM checkpoints WHERE session_id = t"
    "    AND id = b), 0);"
    "  DELETE FROM checkpoints WHERE session_id = t AND n > COALESCE("
    "   (SELECT n FROM checkpoints WHERE session_id = t AND id = b), 0);"
    "  PERFORM agent_recount(t);"
    "  DELETE FROM run_events WHERE run_id = r;"
    "  DELETE FROM runs WHERE run_id = r;"
    " END $f$ LANGUAGE plpgsql;"

    " CREATE OR REPLACE FUNCTION agent_fork_cut(t text, c bigint)"
    "  RETURNS void AS $f$ BEGIN"
    "  DELETE FROM messages WHERE session_id = t AND seq >= c;"
    "  PERFORM agent_recount(t);"
    " END $f$ LANGUAGE plpgsql;"

    /* version 2: the LangGraph API's assistants */

    " CREATE TABLE IF NOT EXISTS assistants ("
    "  assistant_id text PRIMARY KEY, owner text, graph_id text NOT NULL,"
    "  latest bigint NOT NULL, versions bigint NOT NULL,"
    "  created_at text NOT NULL, updated_at text NOT NULL);"
    " CREATE TABLE IF NOT EXISTS assistant_versions ("
    "  assistant_id text NOT NULL, version bigint NOT NULL,"
    "  graph_id text NOT NULL, doc text NOT NULL, created_at text NOT NULL,"
    "  PRIMARY KEY (assistant_id, version));"

    /*
     * version 3: the LangGraph store's items; '' is no owner, so that the
     * three are a key; n orders the rows of one updated_at as SQLite's
     */

    " CREATE TABLE IF NOT EXISTS items ("
    "  n bigserial, owner text NOT NULL DEFAULT '', ns text NOT NULL,"
    "  key text NOT NULL, value text NOT NULL, text text,"
    "  created_at text NOT NULL, updated_at text NOT NULL, expires bigint,"
    "  PRIMARY KEY (owner, ns, key));"
    " CREATE INDEX IF NOT EXISTS items_text"
    "  ON items USING gin (to_tsvector('simple', text));"
    " CREATE INDEX IF NOT EXISTS items_expires ON items (expires)"
    "  WHERE expires IS NOT NULL;"

    /*
     * version 5: runs taken over from a worker that died (turn_redrive.c):
     * where they ran, how often they were taken over; the running ones
     * found at once
     */
    " ALTER TABLE runs ADD COLUMN IF NOT EXISTS attempts int NOT NULL"
    "  DEFAULT 0;"
    " ALTER TABLE runs ADD COLUMN IF NOT EXISTS origin text;"
    " CREATE INDEX IF NOT EXISTS runs_running ON runs (thread_id)"
    "  WHERE status = 'running';"

    /* version 6: the LangGraph API's crons (lg_crons.c) */
    " CREATE TABLE IF NOT EXISTS crons ("
    "  cron_id text PRIMARY KEY, owner text, assistant_id text NOT NULL,"
    "  thread_id text, origin text, doc text NOT NULL,"
    "  next_run bigint NOT NULL DEFAULT 0, enabled int NOT NULL DEFAULT 1,"
    "  created_at text NOT NULL, updated_at text NOT NULL);"
    " CREATE INDEX IF NOT EXISTS crons_due ON crons (next_run)"
    "  WHERE enabled = 1 AND next_run > 0;"
    " CREATE INDEX IF NOT EXISTS crons_owner ON crons (owner, created_at);"

    /* version 7: subgraphs' checkpoints, in their namespaces */
    " ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS ns text NOT NULL"
    "  DEFAULT '';"
    " CREATE INDEX IF NOT EXISTS checkpoints_subgraph"
    "  ON checkpoints (session_id, ns, n) WHERE ns <> '';"

    /* version 8: an assistant keeps its last versions */
    " CREATE OR REPLACE FUNCTION agent_versions_kept() RETURNS trigger"
    "  AS $f$ BEGIN"
    "  DELETE FROM assistant_versions WHERE assistant_id = NEW.assistant_id"
    "   AND version <= NEW.version - " NGX_HTTP_AGENT_STORE_VERSIONS ";"
    "  RETURN NULL;"
    " END $f$ LANGUAGE plpgsql;"
    " CREATE OR REPLACE TRIGGER assistant_versions_kept AFTER INSERT"
    "  ON assistant_versions FOR EACH ROW"
    "  EXECUTE FUNCTION agent_versions_kept();"
    /*
     * and the agent_limit keys of the client's request that made a run or
     * a cron, for its runs without a client (limit.c)
     */
    " ALTER TABLE runs ADD COLUMN IF NOT EXISTS limit_keys text;"
    " ALTER TABLE crons ADD COLUMN IF NOT EXISTS limit_keys text;"
    /* and a run's secret (an A2A push's header line), in no API */
    " ALTER TABLE runs ADD COLUMN IF NOT EXISTS secret text;"

    /*
     * version 9: the take-over check's (turn_redrive.c): the holders of
     * leases by worker, their leases by expiry; only held sessions
     */
    " CREATE INDEX IF NOT EXISTS sessions_holder"
    "  ON sessions (run_host, run_pid) WHERE run_id IS NOT NULL;"
    " CREATE INDEX IF NOT EXISTS sessions_lease"
    "  ON sessions (run_expires) WHERE run_id IS NOT NULL;"

    /*
     * version 10: fencing (turn_fence.c): the lease's generation, its run's
     * claims plus one; the lease taken sets it, a turn's writes match it
     */
    " ALTER TABLE sessions ADD COLUMN IF NOT EXISTS run_gen bigint NOT NULL"
    "  DEFAULT 0;"
    " CREATE OR REPLACE FUNCTION agent_lock(i text, r text, p bigint,"
    "  e bigint, t bigint, h text, g bigint, OUT status int,"
    "  OUT o_run text, OUT o_pid bigint, OUT o_host text) AS $f$ BEGIN"
    "  UPDATE sessions SET run_id = r, run_pid = p, run_expires = e,"
    "   run_host = h, run_gen = g WHERE id = i AND (run_id IS NULL"
    "   OR run_expires < t OR (run_id = r AND run_pid = p AND run_host = h));"
    "  IF FOUND THEN status := 0; RETURN; END IF;"
    "  SELECT run_id, run_pid, run_host INTO o_run, o_pid, o_host"
    "   FROM sessions WHERE id = i;"
    "  status := CASE WHEN FOUND THEN 1 ELSE 2 END;"
    " END $f$ LANGUAGE plpgsql;"

    /*
     * version 11: an item's embedding, float32s (store_near.c); an
     * owner's items that have one, newest first, the pages' order
     */
    " ALTER TABLE items ADD COLUMN IF NOT EXISTS embedding bytea;"
    " CREATE INDEX IF NOT EXISTS items_vectors ON items (owner, n)"
    "  WHERE embedding IS NOT NULL;"

    /* version 12: cached nodes' updates and model answers (pg_cache.c) */
    " CREATE TABLE IF NOT EXISTS cache ("
    "  key text PRIMARY KEY, value text NOT NULL, bytes bigint NOT NULL,"
    "  created bigint NOT NULL, expires bigint NOT NULL);"

    " INSERT INTO agent_schema VALUES (1), (2), (3), (4), (5), (6), (7), (8),"
    "  (9), (10), (11), (12) ON CONFLICT DO NOTHING;"
    " END $agent$";
