
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_tools.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_engine.h"
#include "ngx_http_agent_tools_int.h"


extern ngx_http_agent_tool_t  ngx_http_agent_tool_execute_sql_query;


/*
 * The tools of seed 004, each a model call of its own with the session's
 * model:
 *
 * ask_database {"query"}: the model writes one SQLite SELECT from the
 * question and db_schema; it runs read-only against the session's data
 * (the SQL layer of execute_sql_query); the result is the tool's answer
 * and goes to the sql_result channel, when the graph has one.
 *
 * ask_analyst {"query"}: the model writes a Vega-Lite spec from the
 * question and sql_result; checked as a JSON object, fixed by the model at
 * most three times; the answer is {"type": "vega_lite_spec", "spec": ...}.
 */


#define NGX_HTTP_AGENT_ANALYST_FIXES  3


typedef struct {
    ngx_http_agent_tool_call_t    *call;
    ngx_http_agent_tool_call_t     sql;
    ngx_http_agent_ask_t          *ask;
    ngx_str_t                      question;
    ngx_str_t                      system;
    ngx_uint_t                     fixes;
    unsigned                       analyst:1;
} ngx_http_agent_tool_ask_t;


static ngx_int_t ngx_http_agent_tool_ask_run(ngx_http_agent_tool_call_t *call);
static void ngx_http_agent_tool_ask_answer(void *data, ngx_int_t rc,
    ngx_str_t *text);
static void ngx_http_agent_tool_ask_sql_done(
    ngx_http_agent_tool_call_t *sql);
static void ngx_http_agent_tool_ask_finish(ngx_http_agent_tool_ask_t *ta,
    const char *error, ngx_str_t *detail);
static void ngx_http_agent_tool_ask_cancel(ngx_http_agent_tool_call_t *call);


ngx_http_agent_tool_t  ngx_http_agent_tool_ask_database = {
    ngx_string("ask_database"),
    ngx_string("{\"type\":\"function\",\"function\":{\"name\":"
    "\"ask_database\",\"description\":\"Answer a question from the "
    "connected database: SQL is written for it and run read-only; the rows "
    "come back.\",\"parameters\":{\"type\":\"object\",\"properties\":"
    "{\"query\":{\"type\":\"string\",\"description\":\"the question, in "
    "plain words\"}},\"required\":[\"query\"]}}}"),
    ngx_http_agent_tool_ask_run,
    1,
    ngx_string("ask_database.md"),
    ngx_null_string,
    NULL,
    0,
    0,
    0,
    NULL
};


ngx_http_agent_tool_t  ngx_http_agent_tool_ask_analyst = {
    ngx_string("ask_analyst"),
    ngx_string("{\"type\":\"function\",\"function\":{\"name\":"
    "\"ask_analyst\",\"description\":\"Draw a chart of the last database "
    "result: a Vega-Lite specification comes back and is shown to the "
    "user.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"query\":"
    "{\"type\":\"string\",\"description\":\"what the chart should show\"}},"
    "\"required\":[\"query\"]}}}"),
    ngx_http_agent_tool_ask_run,
    0,
    ngx_string("ask_analyst.md"),
    ngx_string("json_fixer.md"),
    NULL,
    0,
    0,
    0,
    NULL
};


static ngx_int_t
ngx_http_agent_tool_ask_run(ngx_http_agent_tool_call_t *call)
{
    u_char                     *p;
    ngx_str_t                  *prompt, err;
    ngx_http_agent_env_t       *env;
    ngx_http_agent_run_t       *run;
    ngx_http_agent_tool_ask_t  *ta;

    run = call->run;

    ta = ngx_pcalloc(run->pool, sizeof(ngx_http_agent_tool_ask_t));
    if (ta == NULL) {
        return NGX_ERROR;
    }

    ta->call = call;
    ta->analyst = (call->tool == &ngx_http_agent_tool_ask_analyst);

    if (call->args == NULL
        || ngx_http_agent_json_get_str(call->args, "query", &ta->question)
           != NGX_OK
        || ta->question.len == 0)
    {
        ngx_str_set(&err, "\"query\" must be a non-empty string");
        return ngx_http_agent_json_error(run->pool, &err, &call->result);
    }

    /* the tool's prompt file, rendered over the run's channels */

    env = run->data;
    prompt = ngx_http_agent_tools_prompt(env->services.tool_prompts,
                                         &call->tool->prompt);

    if (prompt == NULL) {
        p = ngx_pnalloc(run->pool, call->tool->prompt.len + 64);
        if (p == NULL) {
            return NGX_ERROR;
        }

        err.data = p;
        err.len = ngx_sprintf(p, "the prompt %V is not in agent_prompts",
                              &call->tool->prompt)
                  - p;

        return ngx_http_agent_json_error(run->pool, &err, &call->result);
    }

    if (ngx_http_agent_template_render(run, run->pool, prompt, &ta->system)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    ta->ask = ngx_http_agent_ask(run, &ta->system, &ta->question,
                                 ngx_http_agent_tool_ask_answer, ta);
    if (ta->ask == NULL) {
        return NGX_ERROR;
    }

    call->data = ta;
    call->cancel = ngx_http_agent_tool_ask_cancel;

    return NGX_AGAIN;
}


static void
ngx_http_agent_tool_ask_answer(void *data, ngx_int_t rc, ngx_str_t *text)
{
    ngx_http_agent_tool_ask_t *ta = data;

    u_char                  *p;
    yajl_val                 v;
    ngx_str_t                answer, err, user, name, *fixer;
    ngx_http_agent_env_t    *env;
    ngx_http_agent_run_t    *run;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_tool_t   *sql;

    run = ta->call->run;
    ta->ask = NULL;

    if (rc != NGX_OK) {
        ngx_str_set(&err, "the model could not be asked");
        ngx_http_agent_tool_ask_finish(ta, "error", &err);
        return;
    }

    answer = *text;
    (void) ngx_http_agent_ask_fenced(&answer);

    if (!ta->analyst) {

        /* the SQL goes through execute_sql_query's read-only layer */

        j = ngx_http_agent_json_create(run->pool);
        if (j == NULL) {
            ngx_http_agent_tool_ask_finish(ta, NULL, NULL);
            return;
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "query");
        ngx_http_agent_json_str(j, &answer);
        ngx_http_agent_json_end(j);

        /* the built-in SQL tool itself, not a lookup of the registry */
        sql = &ngx_http_agent_tool_execute_sql_query;
        name = sql->name;

        ta->sql.run = run;
        ta->sql.tool = sql;
        ta->sql.name = name;
        ta->sql.timeout = ta->call->timeout;
        ta->sql.done = ngx_http_agent_tool_ask_sql_done;
        ta->sql.owner = ta;

        if (ngx_http_agent_json_done(j, &ta->sql.arguments) != NGX_OK) {
            ngx_http_agent_tool_ask_finish(ta, NULL, NULL);
            return;
        }

        rc = sql->run(&ta->sql);

        if (rc == NGX_AGAIN) {
            return;
        }

        if (rc != NGX_OK) {
            ngx_str_set(&err, "the query could not be run");
            ngx_http_agent_tool_ask_finish(ta, "error", &err);
            return;
        }

        ngx_http_agent_tool_ask_sql_done(&ta->sql);
        return;
    }

    ngx_str_set(&err, "");

    v = answer.len ? ngx_http_agent_json_parse(run->pool, answer.data,
                                               answer.len, &err)
                   : NULL;

    if (v && YAJL_IS_OBJECT(v)) {

        /* the spec as the page may draw it (ngx_http_agent_vega.c) */

        j = ngx_http_agent_json_create(run->pool);
        if (j == NULL) {
            ngx_http_agent_tool_ask_finish(ta, NULL, NULL);
            return;
        }

        rc = ngx_http_agent_vega_clean(j, v, &err);

        if (rc == NGX_OK) {
            if (ngx_http_agent_json_done(j, &answer) != NGX_OK) {
                ngx_http_agent_tool_ask_finish(ta, NULL, NULL);
                return;
            }

            ngx_http_agent_tool_ask_finish(ta, "spec", &answer);
            return;
        }
    }

    if (ta->fixes++ >= NGX_HTTP_AGENT_ANALYST_FIXES) {
        if (v == NULL || !YAJL_IS_OBJECT(v)) {
            ngx_str_set(&err, "the chart specification was not valid JSON");
        }
        ngx_http_agent_tool_ask_finish(ta, "error", &err);
        return;
    }

    /* the JSON fixer: the broken text and the parse error, asked again */

    p = ngx_pnalloc(run->pool, answer.len + err.len + 128);
    if (p == NULL) {
        ngx_http_agent_tool_ask_finish(ta, NULL, NULL);
        return;
    }

    user.data = p;
    user.len = ngx_sprintf(p, "This is not a valid %s (%V). Fix it "
                           "and answer with the JSON object only:\n%V",
                           v && YAJL_IS_OBJECT(v) ? "chart specification"
                                                  : "JSON object",
                           &err, &answer)
               - p;

    /* json_fixer.md in the place of the tool's prompt, when it is there */

    env = run->data;
    fixer = ngx_http_agent_tools_prompt(env->services.tool_prompts,
                                        &ta->call->tool->fixer);

    ta->ask = ngx_http_agent_ask(run, fixer ? fixer : &ta->system, &user,
                                 ngx_http_agent_tool_ask_answer, ta);
    if (ta->ask == NULL) {
        ngx_str_set(&err, "the model could not be asked");
        ngx_http_agent_tool_ask_finish(ta, "error", &err);
    }
}


static void
ngx_http_agent_tool_ask_sql_done(ngx_http_agent_tool_call_t *sql)
{
    ngx_http_agent_tool_ask_t *ta = sql->owner;

    yajl_val               v, e;
    ngx_str_t              msg;
    ngx_http_agent_run_t  *run;

    run = ta->call->run;

    v = ngx_http_agent_json_parse(run->pool, sql->result.data,
                                  sql->result.len, NULL);
    e = v ? ngx_http_agent_json_get(v, "error") : NULL;

    if (v == NULL || e) {
        if (e && YAJL_IS_STRING(e)) {
            msg.data = (u_char *) YAJL_GET_STRING(e);
            msg.len = ngx_strlen(msg.data);

        } else {
            ngx_str_set(&msg, "the query failed");
        }

        ngx_http_agent_tool_ask_finish(ta, "error", &msg);
        return;
    }

    ngx_http_agent_tool_ask_finish(ta, "rows", &sql->result);
}


/* what: "rows" (SQL result), "spec" (chart), "error", NULL: out of memory */

static void
ngx_http_agent_tool_ask_finish(ngx_http_agent_tool_ask_t *ta,
    const char *what, ngx_str_t *detail)
{
    u_char                       *p;
    ngx_str_t                     text, channel;
    ngx_http_agent_run_t         *run;
    ngx_http_agent_json_t        *j;
    ngx_http_agent_write_t       *w;
    ngx_http_agent_tool_call_t   *call;

    call = ta->call;
    run = call->run;
    call->cancel = NULL;
    call->data = NULL;

    if (what == NULL) {
        ngx_str_set(&call->result, "{\"error\":\"out of memory\"}");
        call->done(call);
        return;
    }

    if (what[0] == 'r') {
        call->result = *detail;

        /* sql_result: for ask_analyst and the next prompts */

        ngx_str_set(&channel, "sql_result");

        if (ngx_http_agent_graph_channel(run->graph, &channel) != NGX_ERROR) {
            call->writes = ngx_array_create(run->pool, 1,
                                            sizeof(ngx_http_agent_write_t));
            w = call->writes ? ngx_array_push(call->writes) : NULL;

            if (w) {
                ngx_memzero(w, sizeof(ngx_http_agent_write_t));
                w->channel = ngx_http_agent_graph_channel(run->graph,
                                                          &channel);
                w->value.json = *detail;
            }
        }

        call->done(call);
        return;
    }

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        ngx_str_set(&call->result, "{\"error\":\"out of memory\"}");
        call->done(call);
        return;
    }

    ngx_http_agent_json_obj(j);

    if (what[0] == 's') {
        ngx_http_agent_json_key(j, "type");
        ngx_http_agent_json_cstr(j, "vega_lite_spec");
        ngx_http_agent_json_key(j, "spec");
        ngx_http_agent_json_val(j, ngx_http_agent_json_parse(run->pool,
                                                             detail->data,
                                                             detail->len,
                                                             NULL));

    } else {
        p = ngx_pnalloc(run->pool, detail->len + 32);
        if (p == NULL) {
            j->failed = 1;

        } else {
            text.data = p;
            text.len = ngx_sprintf(p, "%s failed: %V",
                                   ta->analyst ? "The chart" : "The query",
                                   detail)
                       - p;

            ngx_http_agent_json_key(j, "error");
            ngx_http_agent_json_str(j, &text);
        }
    }

    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_done(j, &call->result) != NGX_OK) {
        ngx_str_set(&call->result, "{\"error\":\"out of memory\"}");
    }

    call->done(call);
}


static void
ngx_http_agent_tool_ask_cancel(ngx_http_agent_tool_call_t *call)
{
    ngx_http_agent_tool_ask_t *ta = call->data;

    if (ta == NULL) {
        return;
    }

    if (ta->ask) {
        ngx_http_agent_ask_cancel(ta->ask);
        ta->ask = NULL;
    }

    if (ta->sql.cancel) {
        ta->sql.cancel(&ta->sql);
        ta->sql.cancel = NULL;
    }
}

