
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include <dlfcn.h>

#include "ngx_http_agent_sql.h"


/*
 * What a statement written by the model may do.  The handles are opened
 * read-only; an authorizer allows reading only; sqlite3_limit() bounds
 * strings, statements, expressions and columns, so that printf, zeroblob
 * or randomblob bombs fail at once; a progress handler every 100 opcodes
 * stops a statement at its deadline (the event loop also interrupts it,
 * see ngx_http_agent_sql.c); and an allocator with a budget per statement
 * caps the memory it can take, temp b-trees in memory included.
 */


/* the statement being run on this thread, if any: its memory budget */
typedef struct {
    sqlite3_int64                used;
    sqlite3_int64                max;
    ngx_uint_t                   active;
} ngx_http_agent_sql_budget_t;


static void *ngx_http_agent_sql_malloc(int n);
static void ngx_http_agent_sql_free(void *p);
static void *ngx_http_agent_sql_realloc(void *p, int n);
static int ngx_http_agent_sql_size(void *p);
static int ngx_http_agent_sql_roundup(int n);
static int ngx_http_agent_sql_mem_init(void *data);
static void ngx_http_agent_sql_mem_shutdown(void *data);
static int ngx_http_agent_sql_authorize(void *data, int action,
    const char *a1, const char *a2, const char *db, const char *trigger);
static int ngx_http_agent_sql_progress(void *data);


static sqlite3_mem_methods  ngx_http_agent_sql_mem;

static __thread ngx_http_agent_sql_budget_t  ngx_http_agent_sql_budget;

/* how many statements run with a budget now: when none, no TLS lookup */
static ngx_atomic_t  ngx_http_agent_sql_budgets;

/* read-only pragmas a model may use to learn a table's shape */
static const char  *ngx_http_agent_sql_pragmas[] = {
    "table_info", "table_xinfo", "index_list", "index_info",
    "index_xinfo", "foreign_key_list", NULL
};


/*
 * SQLite's allocator, wrapped: outside a statement of the model (the
 * checkpoint store, CSV imports) nothing changes.  Must run before SQLite
 * is first used, in the master.
 */

void
ngx_http_agent_sql_sandbox_init(ngx_log_t *log)
{
    int                   rc;
    Dl_info               info;
    sqlite3_mem_methods   orig;

    if (ngx_http_agent_sql_mem.xMalloc) {
        return;
    }

    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &orig) != SQLITE_OK) {
        goto failed;
    }

    ngx_http_agent_sql_mem = orig;

    orig.xMalloc = ngx_http_agent_sql_malloc;
    orig.xFree = ngx_http_agent_sql_free;
    orig.xRealloc = ngx_http_agent_sql_realloc;
    orig.xSize = ngx_http_agent_sql_size;
    orig.xRoundup = ngx_http_agent_sql_roundup;
    orig.xInit = ngx_http_agent_sql_mem_init;
    orig.xShutdown = ngx_http_agent_sql_mem_shutdown;
    orig.pAppData = NULL;

    rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &orig);
    if (rc == SQLITE_OK) {
        /*
         * SQLite keeps these functions for the life of the process, and
         * is set up once: this copy of the module stays loaded even when
         * a reload loads another one (a package upgrade), so they never
         * point into unmapped code
         */
        if (dladdr((void *) ngx_http_agent_sql_malloc, &info)
            && info.dli_fname)
        {
            (void) dlopen(info.dli_fname,
                          RTLD_NOW|RTLD_NOLOAD|RTLD_NODELETE);
        }

        return;
    }

failed:

    ngx_memzero(&ngx_http_agent_sql_mem, sizeof(sqlite3_mem_methods));

    ngx_log_error(NGX_LOG_WARN, log, 0, "agent: sqlite was initialized "
                  "before the module: SQL statements run without a memory "
                  "budget");
}


static int
ngx_http_agent_sql_mem_init(void *data)
{
    return ngx_http_agent_sql_mem.xInit(ngx_http_agent_sql_mem.pAppData);
}


static void
ngx_http_agent_sql_mem_shutdown(void *data)
{
    ngx_http_agent_sql_mem.xShutdown(ngx_http_agent_sql_mem.pAppData);
}


static void *
ngx_http_agent_sql_malloc(int n)
{
    void                         *p;
    ngx_http_agent_sql_budget_t  *b;

    if (ngx_http_agent_sql_budgets == 0) {
        return ngx_http_agent_sql_mem.xMalloc(n);
    }

    b = &ngx_http_agent_sql_budget;

    if (b->active && b->used + n > b->max) {
        return NULL;
    }

    p = ngx_http_agent_sql_mem.xMalloc(n);

    if (p && b->active) {
        b->used += ngx_http_agent_sql_mem.xSize(p);
    }

    return p;
}


static void
ngx_http_agent_sql_free(void *p)
{
    ngx_http_agent_sql_budget_t  *b;

    if (ngx_http_agent_sql_budgets == 0) {
        ngx_http_agent_sql_mem.xFree(p);
        return;
    }

    b = &ngx_http_agent_sql_budget;

    /* what was taken before the budget began only makes room */
    if (p && b->active) {
        b->used -= ngx_http_agent_sql_mem.xSize(p);
    }

    ngx_http_agent_sql_mem.xFree(p);
}


static void *
ngx_http_agent_sql_realloc(void *p, int n)
{
    int                           old;
    void                         *np;
    ngx_http_agent_sql_budget_t  *b;

    if (ngx_http_agent_sql_budgets == 0) {
        return ngx_http_agent_sql_mem.xRealloc(p, n);
    }

    b = &ngx_http_agent_sql_budget;

    old = p ? ngx_http_agent_sql_mem.xSize(p) : 0;

    if (b->active && n > old && b->used + (n - old) > b->max) {
        return NULL;
    }

    np = ngx_http_agent_sql_mem.xRealloc(p, n);

    if (np && b->active) {
        b->used += ngx_http_agent_sql_mem.xSize(np) - old;
    }

    return np;
}


static int
ngx_http_agent_sql_size(void *p)
{
    return ngx_http_agent_sql_mem.xSize(p);
}


static int
ngx_http_agent_sql_roundup(int n)
{
    return ngx_http_agent_sql_mem.xRoundup(n);
}


sqlite3 *
ngx_http_agent_sql_sandbox_open(ngx_log_t *log, char *path)
{
    int       rc;
    sqlite3  *db;

    rc = sqlite3_open_v2(path, &db,
                         SQLITE_OPEN_READONLY|SQLITE_OPEN_URI
                         |SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: cannot open database \"%s\": %s", path,
                      sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }

    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 1, NULL);

    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, NGX_HTTP_AGENT_SQL_MAX_LENGTH);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 100000);
    sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 1000);
    sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 100);
    sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 50);
    sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 25000);
    sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 32);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, NGX_HTTP_AGENT_SQL_MAX_ATTACHED);
    sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000);
    sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 100);
    sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
    sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, 0);

    /*
     * Sorts and temp b-trees stay in memory up to the cache size, within
     * the statement's budget, and spill to SQLite's temp files beyond it
     * (unlinked at once, bounded by the time cap).  temp_store=MEMORY
     * would keep them in memory throughout, but SQLite's sorter then
     * mallocs every record: a GROUP BY over 10,000 rows cost 30% of the
     * bench's throughput.
     */
    if (sqlite3_exec(db, "PRAGMA cache_size=-2048", NULL, NULL, NULL)
        != SQLITE_OK)
    {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "agent: cannot set up database \"%s\": %s", path,
                      sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }

    sqlite3_set_authorizer(db, ngx_http_agent_sql_authorize, NULL);

    return db;
}


/* the module's own statements (ATTACH of the session's files) */

void
ngx_http_agent_sql_sandbox_allow(sqlite3 *db, ngx_uint_t all)
{
    sqlite3_set_authorizer(db, all ? NULL : ngx_http_agent_sql_authorize,
                           NULL);
}


void
ngx_http_agent_sql_sandbox_start(sqlite3 *db,
    ngx_http_agent_sql_clock_t *clock, ngx_msec_t timeout)
{
    clock_gettime(CLOCK_MONOTONIC, &clock->deadline);
    clock->deadline.tv_sec += timeout / 1000;
    clock->deadline.tv_nsec += (timeout % 1000) * 1000000;

    if (clock->deadline.tv_nsec >= 1000000000) {
        clock->deadline.tv_sec++;
        clock->deadline.tv_nsec -= 1000000000;
    }

    clock->expired = 0;

    sqlite3_progress_handler(db, 100, ngx_http_agent_sql_progress, clock);

    ngx_http_agent_sql_budget.used = 0;
    ngx_http_agent_sql_budget.max = NGX_HTTP_AGENT_SQL_MAX_MEMORY;
    ngx_http_agent_sql_budget.active = 1;
    (void) ngx_atomic_fetch_add(&ngx_http_agent_sql_budgets, 1);
}


void
ngx_http_agent_sql_sandbox_stop(sqlite3 *db)
{
    ngx_http_agent_sql_budget.active = 0;
    (void) ngx_atomic_fetch_add(&ngx_http_agent_sql_budgets, -1);
    sqlite3_progress_handler(db, 0, NULL, NULL);
}


static int
ngx_http_agent_sql_authorize(void *data, int action, const char *a1,
    const char *a2, const char *db, const char *trigger)
{
    ngx_uint_t  i;

    switch (action) {

    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;

    case SQLITE_UPDATE:
        /*
         * table-valued functions (json_each, pragma_table_info) declare
         * their table when first used; the handle itself is read-only
         */
        if (a1 && ngx_strcmp(a1, "sqlite_master") == 0 && trigger == NULL) {
            return SQLITE_OK;
        }

        return SQLITE_DENY;

    case SQLITE_FUNCTION:
        if (a2 && (ngx_strcasecmp((u_char *) a2,
                                  (u_char *) "load_extension") == 0
                   || ngx_strncasecmp((u_char *) a2, (u_char *) "fts3_", 5)
                      == 0))
        {
            return SQLITE_DENY;
        }

        return SQLITE_OK;

    case SQLITE_PRAGMA:
        /* reading a table's shape is harmless; setting anything is not */
        for (i = 0; a1 && ngx_http_agent_sql_pragmas[i]; i++) {
            if (ngx_strcasecmp((u_char *) a1,
                               (u_char *) ngx_http_agent_sql_pragmas[i])
                == 0)
            {
                return SQLITE_OK;
            }
        }

        return SQLITE_DENY;

    default:
        return SQLITE_DENY;
    }
}


static int
ngx_http_agent_sql_progress(void *data)
{
    ngx_http_agent_sql_clock_t *clock = data;

    struct timespec  now;

    clock_gettime(CLOCK_MONOTONIC, &now);

    if (now.tv_sec > clock->deadline.tv_sec
        || (now.tv_sec == clock->deadline.tv_sec
            && now.tv_nsec >= clock->deadline.tv_nsec))
    {
        clock->expired = 1;
        return 1;
    }

    return 0;
}
