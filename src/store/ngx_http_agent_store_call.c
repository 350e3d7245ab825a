
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_store_run.h"


/*
 * Which store runs, chosen here only, by agent_checkpoint_db: a path is a
 * SQLite file, a postgresql:// URL a PostgreSQL server.  Everything above
 * the store calls it through ngx_http_agent_store and its calls, and tells
 * the back ends apart by their flags (ngx_http_agent_store_has) alone.
 */


#define NGX_HTTP_AGENT_STORE_UNLOCKS  64
/* a run's end tried again each second for a minute, then left to its lease */
#define NGX_HTTP_AGENT_STORE_END_TRIES  60


typedef struct {
    ngx_str_t                        id;
    ngx_str_t                        run_id;
    int64_t                          gen;      /* the lease's: a later
                                                  holder's is not let go */
    ngx_http_agent_store_unlock_pt   send;
    const char                      *status;   /* the run's end to write
                                                  (it lets the thread go),
                                                  or NULL: the unlock */
    ngx_uint_t                       tries;
    ngx_pool_t                      *pool;     /* the end's answers */
    ngx_http_agent_store_call_t      sc;       /* ... and its call */
    unsigned                         asked:1;  /* its answer to come */
    u_char                           id_data[128];  /* a scoped one */
    u_char                           run_data[64];
} ngx_http_agent_store_unlock_t;


static ngx_http_agent_store_unlock_t *ngx_http_agent_store_later(
    ngx_str_t *id, ngx_str_t *run_id, int64_t gen);
static void ngx_http_agent_store_later_timer(void);
static void ngx_http_agent_store_unlock_retry(ngx_event_t *ev);
static void ngx_http_agent_store_end_ask(ngx_http_agent_store_unlock_t *u);
static void ngx_http_agent_store_end_heard(ngx_http_agent_store_call_t *sc);
static void ngx_http_agent_store_end_answer(ngx_http_agent_store_unlock_t *u,
    ngx_int_t rc);
static uint32_t ngx_http_agent_store_key(ngx_str_t *k1, ngx_str_t *k2);


static ngx_event_t               ngx_http_agent_store_unlock_timer;
static ngx_http_agent_store_unlock_t
    ngx_http_agent_store_unlocks[NGX_HTTP_AGENT_STORE_UNLOCKS];

/*
 * the back end chosen (store_backends.c, as an event module sets nginx's
 * ngx_event_actions): here, below the back ends, which call this file;
 * NULL without agent_checkpoint_db, when no store call is made
 */
ngx_http_agent_store_backend_t  *ngx_http_agent_store;

ngx_uint_t                       ngx_http_agent_store_defer;


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


/*
 * The answer kept for this place of the pass, or NULL: none yet, the
 * operation asks for it (the next kept answer is op's on k1 and k2).  A
 * pass makes the same calls in the same order as the one that asked; one
 * that does not (a bug above the store) would be handed another
 * operation's answer, another thread's row: it is refused, loudly, and
 * the caller answers its error.
 */

static ngx_http_agent_store_answer_t  ngx_http_agent_store_astray = {
    NGX_ERROR, NULL, 0, 0
};


ngx_http_agent_store_answer_t *
ngx_http_agent_store_answered(ngx_http_agent_store_call_t *sc, ngx_uint_t op,
    ngx_str_t *k1, ngx_str_t *k2)
{
    uint32_t                        key;
    ngx_http_agent_store_answer_t  *a;

    key = ngx_http_agent_store_key(k1, k2);

    if (sc->answers == NULL || sc->n >= sc->answers->nelts) {
        sc->op = op;
        sc->op_key = key;
        return NULL;
    }

    a = (ngx_http_agent_store_answer_t *) sc->answers->elts + sc->n++;

    if (ngx_http_agent_store_defer == NGX_HTTP_AGENT_STORE_ASTRAY) {
        key++;
    }

    if (a->op == op && a->key == key) {
        return a;
    }

    ngx_log_error(NGX_LOG_ALERT, sc->log, 0,
                  "agent: a store call's pass asked for operation %ui "
                  "(key %08xD) where its answer %ui was kept for operation "
                  "%ui (key %08xD): refused", op, key, sc->n - 1, a->op,
                  a->key);

    return &ngx_http_agent_store_astray;
}


/* a place for the next answer, named as ngx_http_agent_store_answered did */

ngx_http_agent_store_answer_t *
ngx_http_agent_store_answer_add(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_store_answer_t  *a;

    if (sc->answers == NULL) {
        sc->answers = ngx_array_create(sc->pool, 4,
                                       sizeof(ngx_http_agent_store_answer_t));
        if (sc->answers == NULL) {
            return NULL;
        }
    }

    a = ngx_array_push(sc->answers);
    if (a == NULL) {
        return NULL;
    }

    a->rc = NGX_AGAIN;
    a->value = NULL;
    a->op = sc->op;
    a->key = sc->op_key;
    sc->n++;

    return a;
}


static uint32_t
ngx_http_agent_store_key(ngx_str_t *k1, ngx_str_t *k2)
{
    uint32_t  crc;

    ngx_crc32_init(crc);

    if (k1 && k1->data) {
        ngx_crc32_update(&crc, k1->data, k1->len);
    }

    /* "a" "bc" is not "ab" "c" */
    ngx_crc32_update(&crc, (u_char *) "", 1);

    if (k2 && k2->data) {
        ngx_crc32_update(&crc, k2->data, k2->len);
    }

    ngx_crc32_final(crc);

    return crc;
}


/*
 * What a search finds an item by: its value's first
 * NGX_HTTP_AGENT_ITEM_TEXT_MAX bytes, cut where a character starts.
 * PostgreSQL indexes the text as one tsvector, at most 1 MB, and a
 * tsvector is up to three times its text: a value of many distinct words
 * over about 350 KB would fail its put.  SQLite's FTS5 is given the same,
 * so both stores find the same items.
 */

void
ngx_http_agent_store_item_text(ngx_http_agent_item_t *item)
{
    size_t  len;

    len = item->value.len;

    if (len > NGX_HTTP_AGENT_ITEM_TEXT_MAX) {
        len = NGX_HTTP_AGENT_ITEM_TEXT_MAX;

        while (len && (item->value.data[len] & 0xc0) == 0x80) {
            len--;
        }
    }

    item->text.data = item->value.data;
    item->text.len = len;
}


/* now, in ms since the epoch */

int64_t
ngx_http_agent_store_ms(void)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    return (int64_t) tp->sec * 1000 + tp->msec;
}


/* 24 bytes, "2026-01-31T12:00:00.000Z" */

u_char *
ngx_http_agent_store_now(u_char *buf)
{
    return ngx_http_agent_store_ago(buf, 0);
}


/* a new row's id (a UUID, unless given) and its time, now */

ngx_int_t
ngx_http_agent_store_made(ngx_pool_t *pool, ngx_str_t *given, ngx_str_t *id,
    ngx_str_t *at)
{
    u_char  *p;

    p = ngx_pnalloc(pool, 36 + 24);
    if (p == NULL) {
        return NGX_ERROR;
    }

    if (given && given->len) {
        *id = *given;

    } else {
        ngx_http_agent_id_uuid(p);
        id->data = p;
        id->len = 36;
    }

    at->data = p + 36;
    at->len = ngx_http_agent_store_now(at->data) - at->data;

    return NGX_OK;
}


/* the same, ago ms before now */

u_char *
ngx_http_agent_store_ago(u_char *buf, ngx_msec_t ago)
{
    time_t       sec;
    ngx_tm_t     tm;
    ngx_msec_t   msec;
    ngx_time_t  *tp;

    tp = ngx_timeofday();
    msec = (ngx_msec_t) tp->sec * 1000 + tp->msec - ago;
    sec = (time_t) (msec / 1000);

    ngx_gmtime(sec, &tm);

    return ngx_sprintf(buf, "%4d-%02d-%02dT%02d:%02d:%02d.%03MZ",
                       tm.ngx_tm_year, tm.ngx_tm_mon, tm.ngx_tm_mday,
                       tm.ngx_tm_hour, tm.ngx_tm_min, tm.ngx_tm_sec,
                       msec % 1000);
}


/*
 * An unlock that failed (SQLite: the file busy past the busy time, a full
 * disk; PostgreSQL: the server down) is tried again by send from a timer
 * of the worker's each second, so that the session is free once the store
 * is back rather than when its lease runs out; the lease is the last
 * resort (more than NGX_HTTP_AGENT_STORE_UNLOCKS of them, the worker gone).
 * The turn and its request may be gone by then: the ids are copied here.
 */

void
ngx_http_agent_store_unlock_later(ngx_str_t *id, ngx_str_t *run_id,
    int64_t gen, ngx_http_agent_store_unlock_pt send, ngx_log_t *log)
{
    ngx_http_agent_store_unlock_t  *u;

    u = ngx_http_agent_store_later(id, run_id, gen);

    if (u) {
        u->send = send;
    }

    ngx_log_error(NGX_LOG_ERR, log, 0,
                  "agent: session \"%V\" could not be unlocked, %s", id,
                  u ? "trying again each second" : "its lease will free it");

    if (u) {
        ngx_http_agent_store_later_timer();
    }
}


/*
 * A run's end (its status) that could not be written (the store
 * unreachable, its connection cut under the write) is tried again the
 * same way, by the worker that ran it, once the store is back: the
 * status lets the thread go in its own statement, so the run is never
 * seen "running" on a free thread and ended by another worker's look as
 * one whose worker was lost.  Fenced as the first try was: a run taken
 * over meanwhile is its claimant's.  After NGX_HTTP_AGENT_STORE_END_TRIES
 * the lease is the last resort, as for an unlock.
 */

void
ngx_http_agent_store_run_end_later(ngx_str_t *id, ngx_str_t *run_id,
    int64_t gen, const char *status, ngx_log_t *log)
{
    ngx_http_agent_store_unlock_t  *u;

    u = ngx_http_agent_store_later(id, run_id, gen);

    if (u) {
        u->pool = ngx_create_pool(1024, ngx_cycle->log);

        if (u->pool == NULL) {
            u->id.len = 0;
            u = NULL;

        } else {
            u->status = status;
        }
    }

    ngx_log_error(NGX_LOG_ERR, log, 0,
                  "agent: the end of run \"%V\" could not be saved, %s",
                  run_id, u ? "trying again each second"
                            : "its lease will free its thread");

    if (u) {
        ngx_http_agent_store_later_timer();
    }
}


/* a free entry with a copy of the ids, or NULL */

static ngx_http_agent_store_unlock_t *
ngx_http_agent_store_later(ngx_str_t *id, ngx_str_t *run_id, int64_t gen)
{
    ngx_uint_t                      i;
    ngx_http_agent_store_unlock_t  *u;

    if (id->len > sizeof(u->id_data) || run_id->len > sizeof(u->run_data)) {
        return NULL;
    }

    for (i = 0; i < NGX_HTTP_AGENT_STORE_UNLOCKS; i++) {
        u = &ngx_http_agent_store_unlocks[i];

        if (u->id.len == 0) {
            ngx_memzero(u, offsetof(ngx_http_agent_store_unlock_t, id_data));

            u->id.data = u->id_data;
            u->id.len = ngx_cpymem(u->id_data, id->data, id->len)
                        - u->id_data;
            u->run_id.data = u->run_data;
            u->run_id.len = ngx_cpymem(u->run_data, run_id->data,
                                       run_id->len)
                            - u->run_data;
            u->gen = gen;

            return u;
        }
    }

    return NULL;
}


/* the cycle's log: the caller's (a request's) is gone by the next try */

static void
ngx_http_agent_store_later_timer(void)
{
    if (!ngx_http_agent_store_unlock_timer.timer_set
        && !ngx_exiting && !ngx_terminate)
    {
        ngx_http_agent_store_unlock_timer.handler =
                                            ngx_http_agent_store_unlock_retry;
        ngx_http_agent_store_unlock_timer.log = ngx_cycle->log;
        ngx_http_agent_store_unlock_timer.cancelable = 1;
        ngx_add_timer(&ngx_http_agent_store_unlock_timer, 1000);
    }
}


static void
ngx_http_agent_store_unlock_retry(ngx_event_t *ev)
{
    ngx_uint_t                      i, left;
    ngx_http_agent_store_unlock_t  *u;

    left = 0;

    for (i = 0; i < NGX_HTTP_AGENT_STORE_UNLOCKS; i++) {
        u = &ngx_http_agent_store_unlocks[i];

        if (u->id.len == 0) {
            continue;
        }

        if (u->status) {
            if (!u->asked) {
                ngx_http_agent_store_end_ask(u);
            }

            left += (u->id.len != 0);
            continue;
        }

        if (u->send(&u->id, &u->run_id, u->gen) == NGX_OK) {
            ngx_log_error(NGX_LOG_NOTICE, ev->log, 0,
                          "agent: session \"%V\" unlocked on a later try",
                          &u->id);
            u->id.len = 0;
            continue;
        }

        left++;
    }

    if (left && !ngx_exiting && !ngx_terminate) {
        ngx_add_timer(ev, 1000);
    }
}


/* the end asked again, on a call of its own (its session's connection) */

static void
ngx_http_agent_store_end_ask(ngx_http_agent_store_unlock_t *u)
{
    ngx_int_t                     rc;
    ngx_http_agent_store_call_t  *sc;

    sc = &u->sc;

    ngx_http_agent_store_call_init(sc, u->pool, ngx_cycle->log,
                                   ngx_http_agent_store_end_heard, u);
    sc->key = u->id;
    sc->gen = u->gen;
    sc->once = 1;

    u->tries++;

    rc = ngx_http_agent_store_run_status(sc, &u->run_id, u->status);

    if (rc == NGX_AGAIN) {
        u->asked = 1;
        return;
    }

    ngx_http_agent_store_end_answer(u, rc);
}


static void
ngx_http_agent_store_end_heard(ngx_http_agent_store_call_t *sc)
{
    ngx_http_agent_store_unlock_t *u = sc->data;

    u->asked = 0;

    ngx_http_agent_store_end_answer(u, sc->rc);
}


static void
ngx_http_agent_store_end_answer(ngx_http_agent_store_unlock_t *u,
    ngx_int_t rc)
{
    ngx_log_t  *log;

    log = ngx_cycle->log;

    if (rc == NGX_ERROR && u->tries < NGX_HTTP_AGENT_STORE_END_TRIES) {
        /* the next second's try (the timer runs while an entry is left) */
        return;
    }

    if (rc == NGX_OK) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "agent: the end of run \"%V\" saved on a later try, "
                      "session \"%V\" unlocked", &u->run_id, &u->id);

    } else if (rc == NGX_DECLINED) {
        ngx_log_error(NGX_LOG_NOTICE, log, 0,
                      "agent: run \"%V\" was taken over before its end "
                      "could be saved: its end is its claimant's",
                      &u->run_id);

    } else {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: the end of run \"%V\" could not be saved in "
                      "%ui tries, its lease will free its thread",
                      &u->run_id, u->tries);
    }

    /* the call's answers in the pool: none is to come */
    ngx_destroy_pool(u->pool);
    u->pool = NULL;
    u->status = NULL;
    u->id.len = 0;
}


/* agent_owner: a session is its owner's alone (no owner named: anyone's) */

ngx_uint_t
ngx_http_agent_store_owns(ngx_str_t *owner, ngx_http_agent_session_t *s)
{
    return owner == NULL
           || (s->owner.len == owner->len
               && ngx_strncmp(s->owner.data, owner->data, owner->len) == 0);
}


/*
 * the length of the id its client gave: a scoped one's without its hash
 * (ngx_http_agent_reply_scope_id)
 */

size_t
ngx_http_agent_store_id_shown(ngx_str_t *id)
{
    u_char  *dot;

    dot = ngx_strlchr(id->data, id->data + id->len, '.');

    return dot ? (size_t) (dot - id->data) : id->len;
}


/* agent_resources_dir, made and given to the workers' user */

ngx_int_t
ngx_http_agent_store_resources_dir(ngx_cycle_t *cycle,
    ngx_str_t *resources_dir, ngx_uid_t user, ngx_gid_t group)
{
    u_char           *p, parent[NGX_MAX_PATH];
    ngx_file_info_t   fi;

    /* a master that is not root keeps the files as its own */
    if (geteuid() != 0) {
        user = geteuid();
        group = getegid();
    }

    if (resources_dir->len == 0 || resources_dir->len >= NGX_MAX_PATH) {
        return NGX_OK;
    }

    /* a folder made here for it is the workers' too (no database beside) */

    p = resources_dir->data + resources_dir->len;
    while (p > resources_dir->data && *--p != '/') { /* void */ }

    if (p > resources_dir->data) {
        ngx_cpystrn(parent, resources_dir->data, p - resources_dir->data + 1);

        if (ngx_file_info(parent, &fi) == NGX_FILE_ERROR) {
            if (ngx_create_full_path(resources_dir->data, 0700) != 0
                || ngx_http_agent_files_give(cycle->log, parent, user, group,
                                             1)
                   != NGX_OK)
            {
                ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                              "agent_resources_dir: cannot create \"%s\"",
                              parent);
                return NGX_ERROR;
            }
        }
    }

    if (ngx_create_full_path(resources_dir->data, 0700) != 0
        || (ngx_create_dir(resources_dir->data, 0700) == NGX_FILE_ERROR
            && ngx_errno != NGX_EEXIST))
    {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, ngx_errno,
                      "agent_resources_dir: cannot create \"%V\"",
                      resources_dir);
        return NGX_ERROR;
    }

    return ngx_http_agent_files_give(cycle->log, resources_dir->data, user,
                                     group, 1);
}


/*
 * A list answer's room for another entry of size bytes: the first always
 * (no document is larger than a fraction of the budget), the others while
 * the answer stays within it
 */

ngx_uint_t
ngx_http_agent_store_room(size_t *used, size_t size)
{
    if (*used && *used + size > NGX_HTTP_AGENT_STORE_LIST_MAX) {
        return 0;
    }

    *used += size;

    return 1;
}
