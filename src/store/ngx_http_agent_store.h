
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  title;
    ngx_str_t                  metadata;
    ngx_str_t                  created_at;
    ngx_str_t                  updated_at;
    ngx_str_t                  model;
    ngx_str_t                  database;
    ngx_str_t                  owner;
    int64_t                    message_count;
    int64_t                    prompt_tokens;
    int64_t                    completion_tokens;
    int64_t                    cached_tokens;
    int64_t                    history_bytes;
} ngx_http_agent_session_t;


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  parent_id;
    ngx_str_t                  node;
    ngx_str_t                  next;
    ngx_str_t                  channels;
    ngx_str_t                  created_at;
    int64_t                    step;
    int64_t                    msg_count;

    /*
     * a subgraph's checkpoint: its namespace, "NODE:ID" ("|" between the
     * levels), ID the checkpoint its node's step started from; "" (none):
     * the thread's own
     */
    ngx_str_t                  ns;
    ngx_str_t                  waiting;  /* read: the subgraph's wait
                                            merged in, its id */

    /* the run that holds the session, and the lease a write renews */
    ngx_str_t                  run_id;
    ngx_msec_t                 lease;
    ngx_uint_t                 release;  /* the last: the lease let go */

    /*
     * the run that saved it: its metadata (a JSON object), written, and
     * its id, read back; kept in the channels as "__run__"
     */
    ngx_str_t                  metadata;
    ngx_str_t                  saved_by;

    /*
     * steps were not saved before this one (agent_durability exit): the
     * message count they started at; their messages are this one's rows
     */
    ngx_uint_t                 skipped;
    int64_t                    since;

    /* tokens spent since the last checkpoint: the session's totals */
    int64_t                    prompt_tokens;
    int64_t                    completion_tokens;
    int64_t                    cached_tokens;
} ngx_http_agent_checkpoint_t;


typedef struct {
    ngx_str_t                  id;
    ngx_str_t                  name;
    ngx_str_t                  table;
    ngx_str_t                  columns;      /* JSON array */
    ngx_str_t                  path;
    ngx_str_t                  created_at;
    ngx_str_t                  blob;         /* its bytes in a shared
                                                store: their SHA-1 */
    ngx_str_t                  bytes;        /* read for such a store
                                                by resource_prepare */
    int64_t                    row_count;
    int64_t                    size_bytes;
} ngx_http_agent_resource_t;


/* a run of the LangGraph API, as the runs table keeps it */
typedef struct {
    ngx_str_t                  run_id;
    ngx_str_t                  thread_id;
    ngx_str_t                  assistant_id;
    ngx_str_t                  status;
    ngx_str_t                  metadata;     /* JSON object, or empty */
    ngx_str_t                  kwargs;       /* JSON object, or empty */
    ngx_str_t                  secret;       /* what no API shows (an A2A
                                                push's header line): only
                                                run_insert writes it, only
                                                run_claim reads it, the
                                                run's end empties it */
    ngx_str_t                  multitask_strategy;
    ngx_str_t                  created_at;
    ngx_str_t                  updated_at;
    ngx_str_t                  checkpoint;   /* the one it started from */
    ngx_str_t                  expire;       /* run_insert: the kept events
                                                of runs that ended before
                                                this time are let go */
    ngx_str_t                  origin;       /* the location that runs it
                                                (its name): where a re-drive
                                                runs it again */
    ngx_str_t                  limit_keys;   /* its agent_limit keys, as
                                                its client's request had
                                                them (JSON), or empty */

    /* run_claim's: the run taken over from a worker that is gone */
    ngx_str_t                  owner;        /* its thread's */
    int64_t                    attempts;     /* re-drives, this one too */
    int64_t                    last_event;   /* its last kept event, or 0 */
    ngx_array_t               *writes;       /* its cut step's pending
                                                writes (turn_writes.c) */
} ngx_http_agent_run_row_t;


/* a tool call's claim or result, kept while its step ran (turn_writes.c) */
typedef struct {
    ngx_str_t                  checkpoint;   /* where its step started */
    ngx_str_t                  id;           /* the call's */
    ngx_str_t                  result;
} ngx_http_agent_run_write_t;


/* a run that holds its thread and whose worker may be gone (run_lost) */
typedef struct {
    ngx_str_t                  run_id;
    ngx_str_t                  thread_id;
    ngx_str_t                  host;         /* its holder's */
    ngx_pid_t                  pid;
    int64_t                    expires;      /* its lease's end, ms */
    ngx_str_t                  origin;       /* the location it ran on */
} ngx_http_agent_run_lost_t;


/* a cron of the LangGraph API (lg_crons.c) */
typedef struct {
    ngx_str_t                  cron_id;
    ngx_str_t                  owner;        /* empty: no owner */
    ngx_str_t                  assistant_id;
    ngx_str_t                  thread_id;    /* empty: a thread of its own
                                                for each run */
    ngx_str_t                  origin;       /* the location it runs on */
    ngx_str_t                  limit_keys;   /* its runs' agent_limit keys,
                                                as the request that made it
                                                had them (JSON), or empty */
    ngx_str_t                  doc;          /* the rest: a JSON object */
    int64_t                    next_run;     /* UTC seconds; 0: none */
    ngx_uint_t                 enabled;
    ngx_str_t                  created_at;
    ngx_str_t                  updated_at;
} ngx_http_agent_cron_row_t;


/* what a page of sessions holds */
typedef struct {
    ngx_int_t                  limit;
    ngx_int_t                  offset;
    ngx_str_t                 *owner;        /* NULL: anyone's */
    ngx_str_t                 *metadata;     /* a JSON object within
                                                theirs, or NULL */
    ngx_uint_t                 asc;          /* oldest first */
} ngx_http_agent_session_query_t;


/*
 * An assistant of the LangGraph API (a configuration of a declared
 * graph), at one of its versions
 */
typedef struct {
    ngx_str_t                  assistant_id;
    ngx_str_t                  owner;        /* empty: none */
    ngx_str_t                  graph_id;
    int64_t                    version;      /* this row's */
    int64_t                    latest;       /* the assistant's own */
    int64_t                    versions;     /* its highest */
    ngx_str_t                  doc;          /* the version's name,
                                                description, config,
                                                context and metadata: a
                                                JSON object we wrote */
    ngx_str_t                  created_at;   /* the assistant's */
    ngx_str_t                  updated_at;   /* the version's */
} ngx_http_agent_assistant_row_t;


/*
 * An item of the LangGraph store (long-term memory across threads): a JSON
 * object under a namespace and a key, an owner's.  The namespace is its
 * labels joined by "." (a label holds none, as LangGraph's).
 */
typedef struct {
    ngx_str_t                  owner;        /* empty: none */
    ngx_str_t                  ns;           /* "a.b.c" */
    ngx_str_t                  key;
    ngx_str_t                  value;        /* a JSON object we wrote */
    ngx_str_t                  text;         /* what a query's words find
                                                (put only); empty: none */
    ngx_str_t                  vector;       /* float32s (put only) */
    int64_t                    expires;      /* unix seconds; 0: never */
    ngx_str_t                  created_at;
    ngx_str_t                  updated_at;   /* put: now, both times */
    double                     score;        /* a query's rank, higher
                                                better; 0 without one */
} ngx_http_agent_item_t;


/* the most of an item's value a search finds it by (store_item_text) */
#define NGX_HTTP_AGENT_ITEM_TEXT_MAX  (256 * 1024)


/* a search of the items, or of their namespaces */
typedef struct {
    ngx_str_t                  owner;        /* empty: none */
    ngx_str_t                  prefix;       /* a namespace prefix ("a.b"
                                                holds "a.b" and "a.b.c",
                                                not "a.bc"); empty: all */
    ngx_str_t                  suffix;       /* namespaces: one that ends
                                                so ("b.c": "a.b.c") */
    ngx_str_t                  filter;       /* items: a JSON object the
                                                value holds (@>), or empty */
    ngx_str_t                  query;        /* items: words the text has
                                                (any; ranked), or empty */
    ngx_str_t                  vector;       /* items: by meaning (near) */
    ngx_uint_t                 limit;
    ngx_uint_t                 offset;
    int64_t                    now;          /* unix seconds: what expired
                                                before is not there */
} ngx_http_agent_item_query_t;


/* an event of a resumable run, its strings valid until the next one */
typedef ngx_int_t (*ngx_http_agent_store_event_pt)(void *data, int64_t seq,
    ngx_str_t *event, ngx_str_t *json);


/* a row of a page of messages, its strings valid until the next one */
typedef ngx_int_t (*ngx_http_agent_store_message_pt)(void *data,
    ngx_http_agent_msg_t *m);


/*
 * A call of the store.  The store is asynchronous: an operation answers at
 * once (SQLite) or returns NGX_AGAIN and wakes its caller when its answer
 * is there (PostgreSQL).  A woken caller makes the same calls again from
 * the start of its pass (n back to 0): the answers kept in the call are
 * given back in order, no operation runs twice, and code above the store
 * reads the same whichever store runs.  A call with no wake handler wants
 * no answer: its writes are sent in order and their errors logged.
 */

typedef struct ngx_http_agent_store_call_s  ngx_http_agent_store_call_t;
/* a thread's bytes and counts (ngx_http_agent_store_run.h) */
typedef struct ngx_http_agent_storage_s     ngx_http_agent_storage_t;

typedef void (*ngx_http_agent_store_wake_pt)(ngx_http_agent_store_call_t *sc);

/*
 * An answer kept in a call, by position: rc NGX_AGAIN while it is to
 * come.  It names what asked for it (the operation, ngx_http_agent_store_op,
 * and a hash of its arguments): a pass that asks differently at its place
 * is refused it (ngx_http_agent_store_answered), never given another's row.
 */
typedef struct {
    ngx_int_t                      rc;
    void                          *value;
    ngx_uint_t                     op;
    uint32_t                       key;
} ngx_http_agent_store_answer_t;

struct ngx_http_agent_store_call_s {
    ngx_pool_t                    *pool;     /* the answers' */
    ngx_log_t                     *log;
    ngx_http_agent_store_wake_pt   wake;
    void                          *data;
    ngx_str_t                      key;      /* its session: the calls of
                                                one session keep order */

    ngx_uint_t                     n;        /* calls made in this pass */
    ngx_array_t                   *answers;  /* kept answers, by call
                                                (store_answer_t) */
    ngx_uint_t                     op;       /* the operation and key of */
    uint32_t                       op_key;   /* the answer to be kept next */
    void                          *conn;     /* the store's own */
    ngx_uint_t                     tx;       /* its unit of writes open */
    ngx_uint_t                     waiting;  /* answers not yet there */
    ngx_int_t                      rc;       /* the last answer's */
    ngx_int_t                      failed;   /* the first failed write of
                                                those that want no answer */
    void                          *thread_pool; /* file work off the event
                                                   loop, where there is one */
    unsigned                       once:1;   /* its wake reads the answer
                                                in rc, makes no pass again */
    unsigned                       stored:1; /* its commit is answered */
    ngx_str_t                      refused;  /* a write over the store's
                                                bounds: why (bounds.c) */
    ngx_str_t                     *refusal;  /* where that is said, if not
                                                in refused: the request's
                                                own for a turn's calls */
    int64_t                        gen;      /* the lease's, 0: none */
};


/*
 * A back end of the store, a closed interface as nginx's event modules'
 * (ngx_event_actions_t): one table each, its operations static in its own
 * folder (store/sqlite, store/pg), the one in use chosen once by
 * ngx_http_agent_store_select(); code above the store tells the back ends
 * apart by their flags alone.
 */

/* begin .. commit is one transaction: all of its writes, or none */
#define NGX_HTTP_AGENT_STORE_TX      0x01
/*
 * writes answer later (over a connection): a run may go on while its
 * step is written behind it.  A store that answers at once gains nothing
 * by it, and waits out a busy file only for a caller that waits
 */
#define NGX_HTTP_AGENT_STORE_BEHIND  0x02

/*
 * run_cancel's now: the row marked only (its worker's poll ends it), a
 * pending run "interrupted" at once, or a running one too (a cancel
 * answered as done: any worker's read after it says so)
 */
#define NGX_HTTP_AGENT_STORE_CANCEL_ASK      0
#define NGX_HTTP_AGENT_STORE_CANCEL_PENDING  1
#define NGX_HTTP_AGENT_STORE_CANCEL_NOW      2


typedef struct {
    /* its name in the logs: "sqlite", "postgresql" */
    ngx_str_t    name;
    /* NGX_HTTP_AGENT_STORE_TX, NGX_HTTP_AGENT_STORE_BEHIND */
    ngx_uint_t   flags;

    /* agent_checkpoint_db's value (and parameters) read, in the conf */
    char      *(*conf)(ngx_conf_t *cf, ngx_str_t *db);
    /* in the master before the workers start: the schema, the folders */
    ngx_int_t  (*init)(ngx_cycle_t *cycle, ngx_str_t *path,
                       ngx_str_t *resources_dir, ngx_uid_t user,
                       ngx_gid_t group);
    /*
     * in each worker: the file opened, or the connections started;
     * thread_pool (or NULL) takes the back end's own file work
     */
    ngx_int_t  (*open)(ngx_cycle_t *cycle, ngx_str_t *path,
                       void *thread_pool);
    /* the worker's end */
    void       (*close)(ngx_cycle_t *cycle);

    /*
     * a unit of writes of one pass (NGX_HTTP_AGENT_STORE_TX); begin is the
     * first call of its pass: NGX_AGAIN, the caller is woken to make the
     * pass again (a SQLite file another process writes)
     */
    ngx_int_t  (*begin)(ngx_http_agent_store_call_t *sc);
    /* the unit's writes kept (answered later: on their way, or sc->stored) */
    ngx_int_t  (*commit)(ngx_http_agent_store_call_t *sc);
    /* the unit's writes undone */
    void       (*rollback)(ngx_http_agent_store_call_t *sc);

    /* the caller is gone: answers still to come are dropped */
    void       (*cancel)(ngx_http_agent_store_call_t *sc);

    /* a new session; s its row */
    ngx_int_t  (*session_create)(ngx_http_agent_store_call_t *sc,
                                 ngx_str_t *id, ngx_str_t *title,
                                 ngx_str_t *metadata, ngx_str_t *owner,
                                 ngx_http_agent_session_t *s);
    /* a session's row: NGX_DECLINED, none */
    ngx_int_t  (*session_get)(ngx_http_agent_store_call_t *sc,
                              ngx_str_t *id, ngx_http_agent_session_t *s);
    /* a page of sessions, newest first unless q->asc */
    ngx_int_t  (*session_list)(ngx_http_agent_store_call_t *sc,
                               ngx_http_agent_session_query_t *q,
                               ngx_array_t *sessions);
    /* how many sessions q holds (its owner, its metadata; no page) */
    ngx_int_t  (*session_count)(ngx_http_agent_store_call_t *sc,
                                ngx_http_agent_session_query_t *q,
                                int64_t *count);
    /* a session and all it has */
    ngx_int_t  (*session_delete)(ngx_http_agent_store_call_t *sc,
                                 ngx_str_t *id);
    /* a session's field (NGX_HTTP_AGENT_STORE_MODEL, _DATABASE, _METADATA) */
    ngx_int_t  (*session_set)(ngx_http_agent_store_call_t *sc,
                              ngx_str_t *id, ngx_uint_t field,
                              ngx_str_t *value);

    /* the lease taken for run_id: NGX_BUSY, held; NGX_DECLINED, no session */
    ngx_int_t  (*lock)(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
                       ngx_str_t *run_id, ngx_msec_t lease);
    /* the lease renewed, for another lease ms */
    ngx_int_t  (*lock_renew)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *id, ngx_str_t *run_id,
                             ngx_msec_t lease);
    /* leases of many sessions in one statement (store_run.h) */
    ngx_int_t  (*leases_renew)(ngx_http_agent_store_call_t *sc,
                               ngx_array_t *leases);
    /*
     * the lease let go: NGX_AGAIN, a call with a wake handler is answered
     * when it is (a store that answers later); otherwise NGX_OK, done or
     * on its way (sent again until it goes through)
     */
    ngx_int_t  (*unlock)(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
                         ngx_str_t *run_id);

    /*
     * a turn's start: with s, the session's row first (NGX_DECLINED: none,
     * or another owner's when owner is given); the lease taken, then the
     * latest checkpoint (cp untouched without one), its messages and the
     * session's files; NGX_ABORT: taken over from a process that is gone,
     * nothing more read
     */
    ngx_int_t  (*session_open)(ngx_http_agent_store_call_t *sc,
                               ngx_str_t *id, ngx_str_t *owner,
                               ngx_http_agent_session_t *s,
                               ngx_str_t *run_id, ngx_msec_t lease,
                               ngx_int_t images_keep,
                               ngx_http_agent_checkpoint_t *cp,
                               ngx_array_t *messages,
                               ngx_array_t *resources);

    /* a session's messages up to a count, the last images_keep images */
    ngx_int_t  (*messages)(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
                           int64_t upto, ngx_int_t images_keep,
                           ngx_array_t *messages);
    /* a page of messages before a place, each to handler */
    ngx_int_t  (*messages_page)(ngx_http_agent_store_call_t *sc,
                                ngx_str_t *id, int64_t before,
                                ngx_uint_t limit, ngx_uint_t all,
                                ngx_uint_t images, ngx_uint_t *more,
                                ngx_http_agent_store_message_pt handler,
                                void *data);
    /* a checkpoint by id, the latest without one: NGX_DECLINED, none */
    ngx_int_t  (*checkpoint_get)(ngx_http_agent_store_call_t *sc,
                                 ngx_str_t *id, ngx_str_t *checkpoint_id,
                                 ngx_http_agent_checkpoint_t *cp);
    /* a session's checkpoints (or a namespace's: ns), the latest first */
    ngx_int_t  (*checkpoint_list)(ngx_http_agent_store_call_t *sc,
                                  ngx_str_t *id, ngx_str_t *ns,
                                  ngx_array_t *checkpoints);
    /* a step: its checkpoint and added messages, the lease renewed */
    ngx_int_t  (*checkpoint_write)(ngx_http_agent_store_call_t *sc,
                                   ngx_str_t *session_id,
                                   ngx_http_agent_checkpoint_t *cp,
                                   ngx_array_t *added);
    /* a fork: the checkpoints after the one it starts from */
    ngx_int_t  (*fork_later)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *id, ngx_str_t *from,
                             ngx_array_t *later);
    /* a fork: the checkpoint kept, its channels rewritten */
    ngx_int_t  (*fork_keep)(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
                            ngx_str_t *checkpoint_id, ngx_str_t *channels);
    /* a fork: the messages past msg_count dropped */
    ngx_int_t  (*fork_cut)(ngx_http_agent_store_call_t *sc, ngx_str_t *id,
                           int64_t msg_count);

    /* an uploaded file's row (and, for a shared store, its bytes) */
    ngx_int_t  (*resource_add)(ngx_http_agent_store_call_t *sc,
                               ngx_str_t *session_id,
                               ngx_http_agent_resource_t *res);

    /*
     * an upload's file, on nginx's thread pool before resource_add: what
     * a store that keeps files reads of it (NULL: nothing); any thread,
     * the pool given only
     */
    ngx_int_t  (*resource_prepare)(ngx_pool_t *pool, ngx_log_t *log,
                                   ngx_http_agent_resource_t *res);
    /* a session's files */
    ngx_int_t  (*resource_list)(ngx_http_agent_store_call_t *sc,
                                ngx_str_t *session_id,
                                ngx_array_t *resources);

    /* the file of a resource on this host: fetched from the store first */
    ngx_int_t  (*resource_fetch)(ngx_http_agent_store_call_t *sc,
                                 ngx_http_agent_resource_t *res);

    /* a run's row; events: its events kept for a stream joined later */
    ngx_int_t  (*run_insert)(ngx_http_agent_store_call_t *sc,
                             ngx_http_agent_run_row_t *row,
                             ngx_uint_t events);
    /*
     * a run's status set ("running" only over "pending"); an end's lets
     * the run's thread go if the run holds it still, with it
     */
    ngx_int_t  (*run_status)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *run_id, const char *status);
    /* a run's row, of the thread (any when NULL): NGX_DECLINED, none */
    ngx_int_t  (*run_get)(ngx_http_agent_store_call_t *sc,
                          ngx_str_t *thread_id, ngx_str_t *run_id,
                          ngx_http_agent_run_row_t *row);
    /* a page of a thread's runs, of a status when given */
    ngx_int_t  (*run_list)(ngx_http_agent_store_call_t *sc,
                           ngx_str_t *thread_id, ngx_str_t *status,
                           ngx_int_t limit, ngx_int_t offset,
                           ngx_array_t *rows);
    /*
     * a run asked to stop (action: "interrupt", "rollback"); now
     * (NGX_HTTP_AGENT_STORE_CANCEL_*): which runs its row calls
     * "interrupted" at once, not at its worker's poll
     */
    ngx_int_t  (*run_cancel)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *run_id, ngx_str_t *action,
                             ngx_uint_t now);
    /* whether a run was asked to stop: NGX_OK and its action, or not */
    ngx_int_t  (*run_cancelled)(ngx_http_agent_store_call_t *sc,
                                ngx_str_t *run_id, ngx_str_t *action);
    /* an event of a run kept */
    ngx_int_t  (*run_event)(ngx_http_agent_store_call_t *sc,
                            ngx_str_t *run_id, int64_t seq,
                            ngx_str_t *event, ngx_str_t *json);
    /* a run's kept events after seq, each to handler */
    ngx_int_t  (*run_events)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *run_id, int64_t after,
                             ngx_uint_t limit,
                             ngx_http_agent_store_event_pt handler,
                             void *data);
    /* a run undone: its messages and checkpoints after before, its row */
    ngx_int_t  (*run_rollback)(ngx_http_agent_store_call_t *sc,
                               ngx_str_t *thread_id, ngx_str_t *run_id,
                               ngx_str_t *before);
    /* a run forgotten: its row and its kept events */
    ngx_int_t  (*run_delete)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *run_id);
    /* a run holds the thread: NGX_OK and its id; NGX_DECLINED, none */
    ngx_int_t  (*thread_busy)(ngx_http_agent_store_call_t *sc,
                              ngx_str_t *thread_id, ngx_str_t *run_id);
    /*
     * runs still running whose worker is gone: their lease ran out, or
     * their holder was a process of this host that is no more; the oldest
     * lease first, a few (ngx_http_agent_run_lost_t)
     */
    ngx_int_t  (*run_lost)(ngx_http_agent_store_call_t *sc,
                           ngx_array_t *lost);
    /*
     * runs still running whose thread another turn holds, or nobody: a
     * few (ngx_http_agent_run_lost_t, run_id and thread_id)
     */
    ngx_int_t  (*run_orphans)(ngx_http_agent_store_call_t *sc,
                              ngx_array_t *orphans);
    /*
     * a lost run claimed, in the caller's unit of writes: its lease this
     * process's for hold ms (unless another took it first: NGX_DECLINED),
     * its attempts counted, its row read
     */
    ngx_int_t  (*run_claim)(ngx_http_agent_store_call_t *sc,
                            ngx_http_agent_run_lost_t *lost, ngx_msec_t hold,
                            ngx_http_agent_run_row_t *row);

    /* a cron written, made or replaced whole */
    ngx_int_t  (*cron_put)(ngx_http_agent_store_call_t *sc,
                           ngx_http_agent_cron_row_t *row);
    /* an owner's cron (NGX_DECLINED: none) */
    ngx_int_t  (*cron_get)(ngx_http_agent_store_call_t *sc,
                           ngx_str_t *owner, ngx_str_t *id,
                           ngx_http_agent_cron_row_t *row);
    /* an owner's crons, oldest first (ngx_http_agent_cron_row_t) */
    ngx_int_t  (*cron_list)(ngx_http_agent_store_call_t *sc,
                            ngx_str_t *owner, ngx_array_t *rows);
    /* an owner's cron gone (NGX_DECLINED: none) */
    ngx_int_t  (*cron_delete)(ngx_http_agent_store_call_t *sc,
                              ngx_str_t *owner, ngx_str_t *id);
    /* enabled crons due at now (seconds), the earliest first, a few */
    ngx_int_t  (*cron_due)(ngx_http_agent_store_call_t *sc, int64_t now,
                           ngx_array_t *rows);
    /*
     * a due cron's tick claimed: its next run moved from was to next
     * unless another moved it first (NGX_DECLINED), which one statement
     * decides for every worker of every host
     */
    ngx_int_t  (*cron_claim)(ngx_http_agent_store_call_t *sc,
                             ngx_str_t *id, int64_t was, int64_t next);

    /*
     * an assistant's version written: version 1 creates it (NGX_DECLINED:
     * the id is taken), a later one follows its highest and becomes its
     * latest (NGX_DECLINED: another was written first, or no such one)
     */
    ngx_int_t  (*assistant_put)(ngx_http_agent_store_call_t *sc,
                                ngx_http_agent_assistant_row_t *row);
    /* an owner's assistant at its latest version (0) or at version */
    ngx_int_t  (*assistant_get)(ngx_http_agent_store_call_t *sc,
                                ngx_str_t *owner, ngx_str_t *id,
                                int64_t version,
                                ngx_http_agent_assistant_row_t *row);
    /*
     * an owner's assistants at their latest versions, newest first (of
     * graph_id when given); with id, every version of that one, newest
     * first
     */
    ngx_int_t  (*assistant_list)(ngx_http_agent_store_call_t *sc,
                                 ngx_str_t *owner, ngx_str_t *graph_id,
                                 ngx_str_t *id, ngx_array_t *rows);
    /* version made the latest: NGX_DECLINED, no such version */
    ngx_int_t  (*assistant_latest)(ngx_http_agent_store_call_t *sc,
                                   ngx_str_t *owner, ngx_str_t *id,
                                   int64_t version, ngx_str_t *now);
    /* an assistant and its versions gone: NGX_DECLINED, no such one */
    ngx_int_t  (*assistant_delete)(ngx_http_agent_store_call_t *sc,
                                   ngx_str_t *owner, ngx_str_t *id);

    /*
     * an item written (made, or its value, text and expiry replaced: its
     * created_at kept); items that expired before now go, a few at a time.
     * NGX_BUSY: its owner's other items and it would be more than
     * quota_items or quota_size bytes (0: no such bound), nothing written
     */
    ngx_int_t  (*item_put)(ngx_http_agent_store_call_t *sc,
                           ngx_http_agent_item_t *item, int64_t now,
                           ngx_uint_t quota_items, size_t quota_size);
    /* an owner's item: NGX_DECLINED, none (or it expired before now) */
    ngx_int_t  (*item_get)(ngx_http_agent_store_call_t *sc,
                           ngx_str_t *owner, ngx_str_t *ns, ngx_str_t *key,
                           int64_t now, ngx_http_agent_item_t *item);
    /* an owner's item gone: NGX_DECLINED, there was none */
    ngx_int_t  (*item_delete)(ngx_http_agent_store_call_t *sc,
                              ngx_str_t *owner, ngx_str_t *ns,
                              ngx_str_t *key);
    /*
     * a page of an owner's items (ngx_http_agent_item_t): under q->prefix,
     * holding q->filter, matching q->query (best first), else the latest
     * updated first
     */
    ngx_int_t  (*item_search)(ngx_http_agent_store_call_t *sc,
                              ngx_http_agent_item_query_t *q,
                              ngx_array_t *items);
    /*
     * the namespaces of an owner's items (ngx_str_t, each once, in order),
     * under q->prefix and ending with q->suffix; no page: at most q->limit
     */
    ngx_int_t  (*item_namespaces)(ngx_http_agent_store_call_t *sc,
                                  ngx_http_agent_item_query_t *q,
                                  ngx_array_t *namespaces);

    /*
     * a session copied as to, at now: its row (free, not leased), its
     * messages, its checkpoints and its runs, in one transaction; the
     * checkpoints' and runs' ids are new, the same function of the old id
     * and to everywhere (md5 of old || to, written as a uuid), so parents
     * stay parents; its files are not copied.  NGX_DECLINED: no session
     * from, or to is taken
     */
    ngx_int_t  (*session_copy)(ngx_http_agent_store_call_t *sc,
                               ngx_str_t *from, ngx_str_t *to,
                               ngx_str_t *now);

    /* agent_checkpoint_keep: a thread's old checkpoints let go, a pass */
    ngx_int_t  (*checkpoint_prune)(ngx_http_agent_store_call_t *sc,
                                   ngx_str_t *id, ngx_str_t *run_id,
                                   ngx_uint_t keep, ngx_msec_t age);
    ngx_int_t  (*thread_storage)(ngx_http_agent_store_call_t *sc,
                                 ngx_str_t *id, ngx_http_agent_storage_t *st);

    /*
     * a cache entry (store_bounds.c): NGX_DECLINED, none or expired at
     * now (ms); a put makes room first, see there
     */
    ngx_int_t  (*cache_get)(ngx_http_agent_store_call_t *sc, ngx_str_t *key,
                            int64_t now, ngx_str_t *value);
    ngx_int_t  (*cache_put)(ngx_http_agent_store_call_t *sc, ngx_str_t *key,
                            ngx_str_t *value, int64_t now, int64_t expires,
                            ngx_uint_t items, size_t size);
} ngx_http_agent_store_backend_t;

/* what a full cache keeps of a bound n: a 64th of it freed at once */
#define NGX_HTTP_AGENT_STORE_CACHE_KEEP(n)  ((int64_t) (n) - (int64_t) (n) / 64)


/* an operation of the store, as a kept answer names it */
#define ngx_http_agent_store_op(name)                                         \
    offsetof(ngx_http_agent_store_backend_t, name)

/* NGX_AGENT_STORE_DEFER (docs/testing.md): a test's knob, never set else */
#define NGX_HTTP_AGENT_STORE_DEFER   1    /* SQLite answers later too */
#define NGX_HTTP_AGENT_STORE_ASTRAY  2    /* and a replay asks differently */


/* the back ends, and the one chosen (ngx_http_agent_store_select) */
extern ngx_http_agent_store_backend_t  *ngx_http_agent_store;
extern ngx_http_agent_store_backend_t   ngx_http_agent_store_sqlite;
extern ngx_http_agent_store_backend_t   ngx_http_agent_store_pg;
extern ngx_str_t                        ngx_http_agent_store_host;
extern ngx_uint_t                       ngx_http_agent_store_defer;


/* a capability of the chosen back end: NGX_HTTP_AGENT_STORE_TX, ... */
#define ngx_http_agent_store_has(flag)                                        \
    (ngx_http_agent_store->flags & (flag))


#define ngx_http_agent_store_init         ngx_http_agent_store->init
#define ngx_http_agent_store_open         ngx_http_agent_store->open
#define ngx_http_agent_store_close        ngx_http_agent_store->close
#define ngx_http_agent_store_begin        ngx_http_agent_store->begin
#define ngx_http_agent_store_commit       ngx_http_agent_store->commit
#define ngx_http_agent_store_rollback     ngx_http_agent_store->rollback
#define ngx_http_agent_store_cancel       ngx_http_agent_store->cancel
#define ngx_http_agent_store_session_get  ngx_http_agent_store->session_get
#define ngx_http_agent_store_session_list ngx_http_agent_store->session_list
#define ngx_http_agent_store_session_count                                    \
    ngx_http_agent_store->session_count
#define ngx_http_agent_store_session_delete                                   \
    ngx_http_agent_store->session_delete
#define ngx_http_agent_store_session_copy ngx_http_agent_store->session_copy
#define ngx_http_agent_store_lock         ngx_http_agent_store->lock
#define ngx_http_agent_store_lock_renew   ngx_http_agent_store->lock_renew
#define ngx_http_agent_store_leases_renew ngx_http_agent_store->leases_renew
#define ngx_http_agent_store_unlock       ngx_http_agent_store->unlock
#define ngx_http_agent_store_session_open ngx_http_agent_store->session_open
#define ngx_http_agent_store_messages     ngx_http_agent_store->messages
#define ngx_http_agent_store_messages_page                                    \
    ngx_http_agent_store->messages_page
#define ngx_http_agent_store_checkpoint_get                                   \
    ngx_http_agent_store->checkpoint_get
#define ngx_http_agent_store_checkpoint_latest(sc, id, cp)                    \
    ngx_http_agent_store->checkpoint_get(sc, id, NULL, cp)
#define ngx_http_agent_store_checkpoint_list                                  \
    ngx_http_agent_store->checkpoint_list
#define ngx_http_agent_store_fork_later   ngx_http_agent_store->fork_later
#define ngx_http_agent_store_fork_cut     ngx_http_agent_store->fork_cut
#define ngx_http_agent_store_resource_add ngx_http_agent_store->resource_add
#define ngx_http_agent_store_resource_list                                    \
    ngx_http_agent_store->resource_list
#define ngx_http_agent_store_resource_fetch                                   \
    ngx_http_agent_store->resource_fetch


/*
 * the store's bounds (ngx_http_agent_store_bounds.c): the writes of JSON
 * documents go through these, never through the back end's table
 */
ngx_int_t ngx_http_agent_store_session_create(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *title, ngx_str_t *metadata, ngx_str_t *owner,
    ngx_http_agent_session_t *s);
ngx_int_t ngx_http_agent_store_session_set(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_uint_t field, ngx_str_t *value);
ngx_int_t ngx_http_agent_store_checkpoint_write(
    ngx_http_agent_store_call_t *sc, ngx_str_t *session_id,
    ngx_http_agent_checkpoint_t *cp, ngx_array_t *added);
ngx_int_t ngx_http_agent_store_fork_keep(ngx_http_agent_store_call_t *sc,
    ngx_str_t *id, ngx_str_t *checkpoint_id, ngx_str_t *channels);
ngx_int_t ngx_http_agent_store_cache_get(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value);
ngx_int_t ngx_http_agent_store_cache_put(ngx_http_agent_store_call_t *sc,
    ngx_str_t *key, ngx_str_t *value, ngx_msec_t ttl);

/*
 * every list answer stops at ANSWER_MAX bytes, the first entry included:
 * no document is larger than DOCUMENT_MAX (agent_max_document_size's
 * ceiling), a list the store reads stops at LIST_MAX, the rest is the
 * answer's own JSON; an assistant keeps its last VERSIONS versions
 */
#define NGX_HTTP_AGENT_STORE_ANSWER_MAX    (8 * 1024 * 1024)
#define NGX_HTTP_AGENT_STORE_LIST_MAX      (7 * 1024 * 1024)
#define NGX_HTTP_AGENT_STORE_DOCUMENT_MAX  (2 * 1024 * 1024)
#define NGX_HTTP_AGENT_STORE_VERSIONS      "50"
#define NGX_HTTP_AGENT_STORE_REFUSED_LEN   160


char *ngx_http_agent_store_conf(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
void ngx_http_agent_store_select(ngx_str_t *db);
void ngx_http_agent_store_call_init(ngx_http_agent_store_call_t *sc,
    ngx_pool_t *pool, ngx_log_t *log, ngx_http_agent_store_wake_pt wake,
    void *data);
void ngx_http_agent_store_call_reset(ngx_http_agent_store_call_t *sc);
ngx_uint_t ngx_http_agent_store_owns(ngx_str_t *owner,
    ngx_http_agent_session_t *s);
size_t ngx_http_agent_store_id_shown(ngx_str_t *id);
ngx_uint_t ngx_http_agent_store_room(size_t *used, size_t size);

void ngx_http_agent_store_item_text(ngx_http_agent_item_t *item);
u_char *ngx_http_agent_store_now(u_char *buf);
u_char *ngx_http_agent_store_ago(u_char *buf, ngx_msec_t ago);

#define NGX_HTTP_AGENT_STORE_MODEL     0
#define NGX_HTTP_AGENT_STORE_DATABASE  1
#define NGX_HTTP_AGENT_STORE_METADATA  2


/* the store's own, store_call.c's: for the files of src/store/ only */
#include "ngx_http_agent_store_own.h"


#endif /* _NGX_HTTP_AGENT_STORE_H_INCLUDED_ */
