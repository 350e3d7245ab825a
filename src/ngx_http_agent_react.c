
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_react.h"
#include "ngx_http_agent_json.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_prompt.h"


/*
 * The built-in "react" graph (seed 000):
 *
 *     load_csv_metadata -> model -> (tool calls, rounds left?) tools -> model
 *                                 \-> END
 *
 * The node kinds know the LLM client and the SQL tools, not HTTP: events go
 * out through ctx->emit.
 */


static ngx_int_t ngx_http_agent_react_load_csv(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_react_model(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_react_route(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_react_tools(ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_react_tools_next(ngx_http_agent_run_t *run);
static void ngx_http_agent_react_tool_done(void *data, ngx_str_t *result);
static ngx_int_t ngx_http_agent_react_tool_result(ngx_http_agent_run_t *run,
    ngx_str_t *result);
static ngx_int_t ngx_http_agent_react_chunk(void *data, ngx_str_t *text);
static void ngx_http_agent_react_model_done(void *data, ngx_int_t rc);
static void ngx_http_agent_react_cancel(ngx_http_agent_run_t *run);
static void ngx_http_agent_react_call_end(ngx_http_agent_react_t *ctx);
static void ngx_http_agent_react_call_cleanup(void *data);
static ngx_int_t ngx_http_agent_react_system(ngx_http_agent_run_t *run,
    ngx_pool_t *pool, ngx_str_t *out);
static ngx_http_agent_json_t *ngx_http_agent_react_scratch(
    ngx_http_agent_run_t *run);
static ngx_int_t ngx_http_agent_react_tool_event(ngx_http_agent_run_t *run,
    const char *type, ngx_str_t *id, ngx_str_t *name, const char *field,
    ngx_str_t *json, yajl_val value);


static ngx_http_agent_channel_t  ngx_http_agent_react_channels[] = {
    { ngx_string("messages"), NGX_HTTP_AGENT_CHANNEL_MESSAGES },
    { ngx_string("model_calls"), NGX_HTTP_AGENT_CHANNEL_COUNTER },
    { ngx_string("prompt_tokens"), NGX_HTTP_AGENT_CHANNEL_COUNTER },
    { ngx_string("completion_tokens"), NGX_HTTP_AGENT_CHANNEL_COUNTER },
    { ngx_string("session_id"), NGX_HTTP_AGENT_CHANNEL_VALUE },
    { ngx_string("current_query"), NGX_HTTP_AGENT_CHANNEL_VALUE },
    { ngx_string("csv_resources"), NGX_HTTP_AGENT_CHANNEL_VALUE },
    { ngx_string("db_schema"), NGX_HTTP_AGENT_CHANNEL_VALUE }
};


static ngx_http_agent_node_t  ngx_http_agent_react_nodes[] = {
    { ngx_string("load_csv_metadata"), ngx_http_agent_react_load_csv,
      NGX_HTTP_AGENT_REACT_MODEL, NULL },
    { ngx_string("model"), ngx_http_agent_react_model,
      NGX_HTTP_AGENT_END, ngx_http_agent_react_route },
    { ngx_string("tools"), ngx_http_agent_react_tools,
      NGX_HTTP_AGENT_REACT_MODEL, NULL }
};


ngx_http_agent_graph_t  ngx_http_agent_react_graph = {
    ngx_string("react"),
    ngx_http_agent_react_channels,
    sizeof(ngx_http_agent_react_channels)
        / sizeof(ngx_http_agent_channel_t),
    ngx_http_agent_react_nodes,
    sizeof(ngx_http_agent_react_nodes) / sizeof(ngx_http_agent_node_t),
    NGX_HTTP_AGENT_REACT_LOAD_CSV_METADATA
};


static ngx_int_t
ngx_http_agent_react_load_csv(ngx_http_agent_run_t *run)
{
    ngx_http_agent_react_t *ctx = run->data;

    ngx_str_t                   json;
    ngx_uint_t                  i;
    ngx_array_t                *resources;
    ngx_http_agent_json_t      *j;
    ngx_http_agent_resource_t  *res;

    resources = ngx_array_create(run->pool, 4,
                                 sizeof(ngx_http_agent_resource_t));
    if (resources == NULL) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_store_resource_list(run->pool, &ctx->session_id,
                                           resources)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "store_error", "the session's "
                                         "CSV files could not be listed");
    }

    ctx->sql.resources = resources;

    j = ngx_http_agent_json_create(run->pool);
    if (j == NULL) {
        return NGX_ERROR;
    }

    res = resources->elts;

    ngx_http_agent_json_arr(j);

    for (i = 0; i < resources->nelts; i++) {
        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "id");
        ngx_http_agent_json_str(j, &res[i].id);
        ngx_http_agent_json_key(j, "name");
        ngx_http_agent_json_str(j, &res[i].name);
        ngx_http_agent_json_key(j, "table");
        ngx_http_agent_json_str(j, &res[i].table);
        ngx_http_agent_json_key(j, "columns");
        ngx_http_agent_json_raw(j, &res[i].columns);
        ngx_http_agent_json_key(j, "row_count");
        ngx_http_agent_json_int(j, res[i].row_count);
        ngx_http_agent_json_key(j, "size_bytes");
        ngx_http_agent_json_int(j, res[i].size_bytes);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    if (ngx_http_agent_json_done(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ngx_http_agent_graph_write_value(run->update,
                                        NGX_HTTP_AGENT_REACT_CSV_RESOURCES,
                                        &json);
}


static ngx_int_t
ngx_http_agent_react_model(ngx_http_agent_run_t *run)
{
    ngx_http_agent_react_t *ctx = run->data;

    int64_t                     rounds;
    ngx_str_t                   system, body, *tools;
    ngx_pool_t                 *pool;
    ngx_pool_cleanup_t         *cln;
    ngx_http_agent_loc_conf_t  *alcf;

    alcf = ctx->alcf;

    rounds = run->state[NGX_HTTP_AGENT_REACT_MODEL_CALLS].counter
             - ctx->calls_at_start;

    /* the last call a turn may make gets no tools: it must answer */
    ctx->tools_bound = (rounds + 1 < (int64_t) alcf->max_tool_rounds);
    tools = ctx->tools_bound ? &ngx_http_agent_sql_tools : NULL;

    /*
     * the prompt, the request, the transfer and the parser's buffers live
     * in a pool of the call: what the call leaves is copied to the run, the
     * rest goes when the call ends, so open streams stay small
     */

    if (!ctx->call_cleanup) {
        cln = ngx_pool_cleanup_add(run->pool, 0);
        if (cln == NULL) {
            return NGX_ERROR;
        }

        cln->handler = ngx_http_agent_react_call_cleanup;
        cln->data = ctx;
        ctx->call_cleanup = 1;
    }

    pool = ngx_create_pool(4096, run->log);
    if (pool == NULL) {
        return NGX_ERROR;
    }

    ctx->call_pool = pool;

    if (ngx_http_agent_react_system(run, pool, &system) != NGX_OK) {
        return NGX_ERROR;
    }

    if (ngx_http_agent_llm_build(pool, &ctx->model->model, &system,
                   run->state[NGX_HTTP_AGENT_REACT_MESSAGES].messages,
                   tools, &body)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "internal", "the request to "
                                         "the model could not be built");
    }

    ctx->llm = ngx_http_agent_llm_create(pool, run->log);
    if (ctx->llm == NULL) {
        return NGX_ERROR;
    }

    ctx->llm->on_chunk = ngx_http_agent_react_chunk;
    ctx->llm->on_done = ngx_http_agent_react_model_done;
    ctx->llm->data = run;

    if (ngx_http_agent_llm_start(ctx->llm, &ctx->model->url, &ctx->api_key,
                                 &body, alcf->llm_connect_timeout,
                                 alcf->llm_idle_timeout, alcf->llm_timeout)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "llm_error", "the request to "
                                         "the model could not be started");
    }

    run->cancel = ngx_http_agent_react_cancel;

    return NGX_AGAIN;
}


static void
ngx_http_agent_react_call_end(ngx_http_agent_react_t *ctx)
{
    if (ctx->call_pool) {
        /* its cleanup removes the transfer, if any is left */
        ngx_destroy_pool(ctx->call_pool);
        ctx->call_pool = NULL;
        ctx->llm = NULL;
    }
}


static void
ngx_http_agent_react_call_cleanup(void *data)
{
    ngx_http_agent_react_call_end(data);
}


static ngx_int_t
ngx_http_agent_react_system(ngx_http_agent_run_t *run, ngx_pool_t *pool,
    ngx_str_t *out)
{
    ngx_http_agent_react_t *ctx = run->data;

    u_char                       *p;
    size_t                        size;
    ngx_str_t                    *schema;
    ngx_uint_t                    i;
    ngx_http_agent_resource_t    *res;
    ngx_http_agent_prompt_var_t   vars[2];

    ngx_str_set(&vars[0].name, "csv_metadata");
    ngx_str_set(&vars[1].name, "db_schema");

    res = ctx->sql.resources ? ctx->sql.resources->elts : NULL;
    size = 64;

    for (i = 0; res && i < ctx->sql.resources->nelts; i++) {
        size += res[i].name.len + res[i].table.len + res[i].columns.len + 96;
    }

    p = ngx_pnalloc(pool, size);
    if (p == NULL) {
        return NGX_ERROR;
    }

    vars[0].value.data = p;

    if (res == NULL || ctx->sql.resources->nelts == 0) {
        p = ngx_sprintf(p, "(none uploaded)");
    }

    for (i = 0; res && i < ctx->sql.resources->nelts; i++) {
        p = ngx_sprintf(p, "- table %V%s (file %V, %L rows), columns: %V\n",
                        &res[i].table, i == 0 ? " (also csv_data)" : "",
                        &res[i].name, res[i].row_count, &res[i].columns);
    }

    vars[0].value.len = p - vars[0].value.data;

    schema = &run->state[NGX_HTTP_AGENT_REACT_DB_SCHEMA].json;

    if (schema->len) {
        vars[1].value = *schema;

    } else if (ctx->sql.database) {
        vars[1].value = ctx->sql.database->name;

    } else {
        ngx_str_set(&vars[1].value, "(none)");
    }

    return ngx_http_agent_prompt_render(pool, ctx->system_prompt, vars, 2,
                                        out);
}


static ngx_int_t
ngx_http_agent_react_chunk(void *data, ngx_str_t *text)
{
    ngx_http_agent_run_t *run = data;

    u_char                  *p;
    size_t                   cap;
    ngx_str_t                json;
    ngx_http_agent_json_t   *j;
    ngx_http_agent_react_t  *ctx;

    ctx = run->data;

    if (ctx->text_len + text->len > ctx->text_cap) {
        cap = ngx_max(ctx->text_cap * 2, ctx->text_len + text->len + 256);

        p = ngx_pnalloc(run->pool, cap);
        if (p == NULL) {
            return NGX_ERROR;
        }

        if (ctx->text_len) {
            ngx_memcpy(p, ctx->text, ctx->text_len);
        }

        ctx->text = p;
        ctx->text_cap = cap;
    }

    ngx_memcpy(ctx->text + ctx->text_len, text->data, text->len);
    ctx->text_len += text->len;

    j = ngx_http_agent_react_scratch(run);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, "chunk");
    ngx_http_agent_json_key(j, "content");
    ngx_http_agent_json_str(j, text);
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_scratch(j, &json) != NGX_OK) {
        return NGX_ERROR;
    }

    return ctx->emit(ctx->emit_data, &json);
}


static void
ngx_http_agent_react_model_done(void *data, ngx_int_t rc)
{
    ngx_http_agent_run_t *run = data;

    ngx_http_agent_msg_t     msg;
    ngx_http_agent_llm_t    *llm;
    ngx_http_agent_react_t  *ctx;

    ctx = run->data;
    llm = ctx->llm;

    if (rc != NGX_OK) {
        if (llm->error.len) {
            ngx_http_agent_graph_fail(run, "llm_error", "%V", &llm->error);

        } else {
            ngx_http_agent_graph_fail(run, "client_gone", "the client went "
                                      "away");
        }

        ngx_http_agent_react_call_end(ctx);
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    /* the message is copied into the run: the call's pool goes now */

    rc = ngx_http_agent_llm_message(llm, run->pool, &msg);

    if (rc == NGX_OK && !ctx->tools_bound && msg.tool_calls.len) {
        /* no tools were offered; calls now would have no answers */
        ngx_str_null(&msg.tool_calls);
    }

    if (rc != NGX_OK
        || ngx_http_agent_graph_write_message(run, run->update,
                                           NGX_HTTP_AGENT_REACT_MESSAGES,
                                           &msg)
           != NGX_OK
        || ngx_http_agent_graph_write_counter(run->update,
                                           NGX_HTTP_AGENT_REACT_MODEL_CALLS,
                                           1)
           != NGX_OK
        || ngx_http_agent_graph_write_counter(run->update,
                                        NGX_HTTP_AGENT_REACT_PROMPT_TOKENS,
                                        llm->prompt_tokens)
           != NGX_OK
        || ngx_http_agent_graph_write_counter(run->update,
                                    NGX_HTTP_AGENT_REACT_COMPLETION_TOKENS,
                                    llm->completion_tokens)
           != NGX_OK)
    {
        ngx_http_agent_react_call_end(ctx);
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    ngx_http_agent_react_call_end(ctx);
    ngx_http_agent_graph_node_done(run, NGX_OK);
}


static void
ngx_http_agent_react_cancel(ngx_http_agent_run_t *run)
{
    ngx_http_agent_react_t *ctx = run->data;

    if (ctx->llm) {
        ngx_http_agent_llm_cancel(ctx->llm);
    }

    if (ctx->job) {
        ngx_http_agent_sql_job_cancel(ctx->job);
        ctx->job = NULL;
    }
}


static ngx_int_t
ngx_http_agent_react_route(ngx_http_agent_run_t *run)
{
    ngx_http_agent_msg_t  *m;

    m = ngx_http_agent_graph_last_message(run, NGX_HTTP_AGENT_REACT_MESSAGES);

    if (m && m->role.data[0] == 'a' && m->tool_calls.len) {
        return NGX_HTTP_AGENT_REACT_TOOLS;
    }

    return NGX_HTTP_AGENT_END;
}


/*
 * Every call of the last AI message, in order; a failing tool answers with
 * an error result.  With a thread pool each call runs there and the node
 * goes on from the job's completion.
 */

static ngx_int_t
ngx_http_agent_react_tools(ngx_http_agent_run_t *run)
{
    ngx_http_agent_react_t *ctx = run->data;

    yajl_val               calls;
    ngx_http_agent_msg_t  *last;

    last = ngx_http_agent_graph_last_message(run,
                                             NGX_HTTP_AGENT_REACT_MESSAGES);
    if (last == NULL || last->tool_calls.len == 0) {
        return NGX_OK;
    }

    calls = ngx_http_agent_json_parse(run->pool, last->tool_calls.data,
                                      last->tool_calls.len, NULL);
    if (calls == NULL || !YAJL_IS_ARRAY(calls)) {
        return ngx_http_agent_graph_fail(run, "internal", "the tool calls "
                                         "of the model could not be read");
    }

    ctx->calls = calls;
    ctx->call = 0;

    return ngx_http_agent_react_tools_next(run);
}


static ngx_int_t
ngx_http_agent_react_tools_next(ngx_http_agent_run_t *run)
{
    ngx_http_agent_react_t *ctx = run->data;

    yajl_val    calls, call, fn, args;
    ngx_str_t   arguments, input, result;

    calls = ctx->calls;

    for ( /* void */ ; ctx->call < calls->u.array.len; ctx->call++) {
        call = calls->u.array.values[ctx->call];
        fn = ngx_http_agent_json_get(call, "function");

        if (ngx_http_agent_json_get_str(call, "id", &ctx->call_id) != NGX_OK
            || ngx_http_agent_json_get_str(fn, "name", &ctx->call_name)
               != NGX_OK)
        {
            continue;
        }

        if (ngx_http_agent_json_get_str(fn, "arguments", &arguments)
            != NGX_OK)
        {
            ngx_str_null(&arguments);
        }

        /*
         * the event carries the arguments as parsed and written anew by
         * our generator, never the model's text: that may hold comments,
         * newlines and "data:" lines.  Text that does not parse is shown
         * as a JSON string; the tool itself answers it with an error.
         */
        args = arguments.len
               ? ngx_http_agent_json_parse(run->pool, arguments.data,
                                           arguments.len, NULL)
               : NULL;

        if (args == NULL) {
            if (arguments.len == 0) {
                ngx_str_set(&input, "{}");

            } else if (ngx_http_agent_json_quote(run->pool, &arguments,
                                                 &input)
                       != NGX_OK)
            {
                return NGX_ERROR;
            }
        }

        if (ngx_http_agent_react_tool_event(run, "tool_start", &ctx->call_id,
                                            &ctx->call_name, "input",
                                            args ? NULL : &input, args)
            != NGX_OK)
        {
            return ngx_http_agent_graph_fail(run, "client_gone", "the "
                                             "client went away");
        }

        if (ctx->sql.thread_pool) {
            ctx->job = ngx_http_agent_sql_job_post(&ctx->sql, run->log,
                                               &ctx->call_name, &arguments,
                                               ngx_http_agent_react_tool_done,
                                               run);
            if (ctx->job) {
                run->cancel = ngx_http_agent_react_cancel;
                return NGX_AGAIN;
            }

            ngx_log_error(NGX_LOG_WARN, run->log, 0, "agent: the thread "
                          "pool took no task, the tool runs inline");
        }

        if (ngx_http_agent_sql_tool(run->pool, run->log, &ctx->sql,
                                    &ctx->call_name, &arguments, &result)
            != NGX_OK)
        {
            return ngx_http_agent_graph_fail(run, "tool_error", "the tool "
                                             "\"%V\" failed",
                                             &ctx->call_name);
        }

        if (ngx_http_agent_react_tool_result(run, &result) != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


static void
ngx_http_agent_react_tool_done(void *data, ngx_str_t *result)
{
    ngx_http_agent_run_t *run = data;

    ngx_int_t                rc;
    ngx_str_t                copy;
    ngx_http_agent_react_t  *ctx;

    ctx = run->data;
    ctx->job = NULL;
    run->cancel = NULL;

    copy.len = result->len;
    copy.data = ngx_pstrdup(run->pool, result);

    if (copy.data == NULL
        || ngx_http_agent_react_tool_result(run, &copy) != NGX_OK)
    {
        ngx_http_agent_graph_node_done(run, NGX_ERROR);
        return;
    }

    ctx->call++;

    rc = ngx_http_agent_react_tools_next(run);

    if (rc != NGX_AGAIN) {
        ngx_http_agent_graph_node_done(run, rc);
    }
}


static ngx_int_t
ngx_http_agent_react_tool_result(ngx_http_agent_run_t *run,
    ngx_str_t *result)
{
    ngx_http_agent_react_t *ctx = run->data;

    ngx_http_agent_msg_t  msg;

    if (ngx_http_agent_react_tool_event(run, "tool_result", &ctx->call_id,
                                        &ctx->call_name, "content", result,
                                        NULL)
        != NGX_OK)
    {
        return ngx_http_agent_graph_fail(run, "client_gone", "the client "
                                         "went away");
    }

    ngx_memzero(&msg, sizeof(ngx_http_agent_msg_t));
    ngx_str_set(&msg.role, "tool");
    msg.content = *result;
    msg.tool_call_id = ctx->call_id;
    msg.name = ctx->call_name;

    return ngx_http_agent_graph_write_message(run, run->update,
                                              NGX_HTTP_AGENT_REACT_MESSAGES,
                                              &msg);
}


static ngx_int_t
ngx_http_agent_react_tool_event(ngx_http_agent_run_t *run, const char *type,
    ngx_str_t *id, ngx_str_t *name, const char *field, ngx_str_t *json,
    yajl_val value)
{
    ngx_http_agent_react_t *ctx = run->data;

    ngx_str_t               out;
    ngx_http_agent_json_t  *j;

    j = ngx_http_agent_react_scratch(run);
    if (j == NULL) {
        return NGX_ERROR;
    }

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "type");
    ngx_http_agent_json_cstr(j, type);
    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, id);
    ngx_http_agent_json_key(j, "name");
    ngx_http_agent_json_str(j, name);
    ngx_http_agent_json_cstr(j, field);

    /* json: our own tool result; value: what was parsed from the model */
    if (json) {
        ngx_http_agent_json_raw(j, json);

    } else {
        ngx_http_agent_json_val(j, value);
    }
    ngx_http_agent_json_end(j);

    if (ngx_http_agent_json_scratch(j, &out) != NGX_OK) {
        return NGX_ERROR;
    }

    return ctx->emit(ctx->emit_data, &out);
}


/* events are written, sent and forgotten: one generator serves them all */

static ngx_http_agent_json_t *
ngx_http_agent_react_scratch(ngx_http_agent_run_t *run)
{
    if (run->scratch == NULL) {
        run->scratch = ngx_http_agent_json_create(run->pool);
    }

    return run->scratch;
}
