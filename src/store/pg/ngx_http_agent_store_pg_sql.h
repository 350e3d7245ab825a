
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_STORE_PG_SQL_H_INCLUDED_
#define _NGX_HTTP_AGENT_STORE_PG_SQL_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>

#include <libpq-fe.h>

#include "ngx_http_agent_store.h"


/*
 * The PostgreSQL store's schema and statements (store_pg_sql.c), at the
 * bottom of the back end: they call nothing of it.  Hidden, as all of the
 * back end's declarations: it is reached from outside only through its
 * table (ngx_http_agent_store_pg.c).
 */
#pragma GCC visibility push(hidden)


/* the statements (ngx_http_agent_store_pg_sql.c), prepared once each */
enum {
    NGX_HTTP_AGENT_PG_SESSION_INSERT = 0,
    NGX_HTTP_AGENT_PG_SESSION_GET,
    NGX_HTTP_AGENT_PG_SESSION_LIST,
    NGX_HTTP_AGENT_PG_SESSION_COUNT,
    NGX_HTTP_AGENT_PG_SESSION_DELETE,
    NGX_HTTP_AGENT_PG_SESSION_SET_MODEL,
    NGX_HTTP_AGENT_PG_SESSION_SET_DATABASE,
    NGX_HTTP_AGENT_PG_SESSION_SET_METADATA,
    NGX_HTTP_AGENT_PG_LOCK,
    NGX_HTTP_AGENT_PG_LOCK_STEAL,
    NGX_HTTP_AGENT_PG_UNLOCK,
    NGX_HTTP_AGENT_PG_RENEW,
    NGX_HTTP_AGENT_PG_MESSAGES,
    NGX_HTTP_AGENT_PG_MESSAGES_PAGE,
    NGX_HTTP_AGENT_PG_CHECKPOINT_GET,
    NGX_HTTP_AGENT_PG_CHECKPOINT_LIST,
    NGX_HTTP_AGENT_PG_CHECKPOINT_WRITE,
    NGX_HTTP_AGENT_PG_FORK_LATER,
    NGX_HTTP_AGENT_PG_FORK_KEEP,
    NGX_HTTP_AGENT_PG_FORK_CUT,
    NGX_HTTP_AGENT_PG_RESOURCE_INSERT,
    NGX_HTTP_AGENT_PG_RESOURCE_LIST,
    NGX_HTTP_AGENT_PG_BLOB_GET,
    NGX_HTTP_AGENT_PG_RUN_INSERT,
    NGX_HTTP_AGENT_PG_RUN_STATUS,
    NGX_HTTP_AGENT_PG_RUN_GET,
    NGX_HTTP_AGENT_PG_RUN_LIST,
    NGX_HTTP_AGENT_PG_RUN_CANCEL,
    NGX_HTTP_AGENT_PG_RUN_CANCELLED,
    NGX_HTTP_AGENT_PG_RUN_EVENT,
    NGX_HTTP_AGENT_PG_RUN_EVENTS,
    NGX_HTTP_AGENT_PG_RUN_ROLLBACK,
    NGX_HTTP_AGENT_PG_THREAD_BUSY,
    NGX_HTTP_AGENT_PG_OPEN,
    NGX_HTTP_AGENT_PG_CHECKPOINT_PAIR,
    NGX_HTTP_AGENT_PG_ASSISTANT_CREATE,
    NGX_HTTP_AGENT_PG_ASSISTANT_BUMP,
    NGX_HTTP_AGENT_PG_ASSISTANT_GET,
    NGX_HTTP_AGENT_PG_ASSISTANT_LIST,
    NGX_HTTP_AGENT_PG_ASSISTANT_LATEST,
    NGX_HTTP_AGENT_PG_ASSISTANT_DELETE,
    NGX_HTTP_AGENT_PG_BEGIN,
    NGX_HTTP_AGENT_PG_COMMIT,
    NGX_HTTP_AGENT_PG_ROLLBACK,
    NGX_HTTP_AGENT_PG_LAST
};


extern const char                     *ngx_http_agent_pg_schema;
extern const char                     *ngx_http_agent_pg_sql[];


#pragma GCC visibility pop


#endif /* _NGX_HTTP_AGENT_STORE_PG_SQL_H_INCLUDED_ */
