
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_responses_int.h"
#include "ngx_http_agent_responses.h"
#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn.h"
#include "ngx_http_agent_store.h"
#include "ngx_http_agent_store_run.h"


/*
 * A kept response: the turn's record (turn_record.c), on any worker of
 * any host that shares the store.  GET {location}responses/{id} reads
 * it, DELETE forgets it (the conversation keeps its messages), POST
 * {location}responses/{id}/cancel stops one in progress, GET
 * {location}responses/{id}/input_items lists what its request gave.
 * Another owner's response is not found.
 */


static ngx_int_t ngx_http_agent_responses_kept(ngx_http_request_t *r,
    ngx_str_t *id, ngx_http_agent_turn_outcome_t *out);
static ngx_int_t ngx_http_agent_responses_items(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out);


ngx_int_t
ngx_http_agent_responses_stored(ngx_http_request_t *r, ngx_str_t *path)
{
    ngx_int_t                       rc;
    ngx_str_t                       id, run, thread, holder;
    ngx_uint_t                      cancel, live, items;
    ngx_http_agent_json_t          *j;
    ngx_http_agent_session_t        s;
    ngx_http_agent_turn_outcome_t  *kept;

    id = *path;
    cancel = 0;
    items = 0;

    if (id.len > 12
        && ngx_strncmp(id.data + id.len - 12, "/input_items", 12) == 0)
    {
        id.len -= 12;
        items = 1;
    }

    if (id.len > 7
        && ngx_strncmp(id.data + id.len - 7, "/cancel", 7) == 0)
    {
        id.len -= 7;
        cancel = 1;
    }

    if (ngx_http_agent_responses_thread(&id, &thread) != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Response with id '%V' not found.",
                                          &id);
    }

    run.data = id.data + sizeof("resp_") - 1;
    run.len = NGX_HTTP_AGENT_RESPONSES_RUN_LEN;

    kept = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_turn_outcome_t));
    if (kept == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = ngx_http_agent_turn_record_read(ngx_http_agent_reply_sc(r), &run,
                                         kept);

    if (rc == NGX_OK
        && (kept->row.thread_id.len != thread.len
            || ngx_strncmp(kept->row.thread_id.data, thread.data, thread.len)
               != 0))
    {
        /* an id made up of one run and another's conversation */
        rc = NGX_DECLINED;
    }

    if (rc == NGX_OK) {
        rc = ngx_http_agent_reply_rpc_thread(r, &thread, 0, &s);
    }

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_NOT_FOUND,
                                          "Response with id '%V' not found.",
                                          &id);
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the response could not be read");
    }

    if (items) {
        return ngx_http_agent_responses_items(r, kept);
    }

    if (r->method == NGX_HTTP_GET && !cancel
        && ngx_http_arg(r, (u_char *) "stream", 6, &holder) == NGX_OK
        && holder.len == 4 && ngx_strncmp(holder.data, "true", 4) == 0)
    {
        /* its kept events, then those that follow until it ends */
        return ngx_http_agent_responses_replay(r, &run, &thread);
    }

    live = ngx_http_agent_run_live(ngx_http_agent_turn_record_state(kept));

    if (cancel) {
        if (live) {
            /* heard at once here, at its worker's next poll elsewhere */
            rc = ngx_http_agent_turn_record_cancel(ngx_http_agent_reply_sc(r),
                                                   &run, 0);

            /* ended meanwhile (by this cancel here, or not): as it ended */
            if (rc == NGX_DECLINED) {
                rc = ngx_http_agent_turn_record_read(
                                      ngx_http_agent_reply_sc(r), &run, kept);

                live = (rc == NGX_OK
                        && ngx_http_agent_turn_record_state(kept)
                           == NGX_HTTP_AGENT_RUN_CANCELLED);
            }

            if (rc == NGX_AGAIN) {
                return NGX_AGAIN;
            }

            if (rc == NGX_ERROR) {
                return ngx_http_agent_reply_error(r,
                                              NGX_HTTP_INTERNAL_SERVER_ERROR,
                                              "the cancel could not be "
                                              "saved");
            }
        }

        if (!live) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "Cannot cancel a response "
                                              "that is not in progress.");
        }

        /* stopped, as the record will say: no interrupt, "interrupted" */
        ngx_str_set(&kept->row.status, "interrupted");
        ngx_str_null(&kept->interrupt);

        return ngx_http_agent_responses_kept(r, &id, kept);
    }

    if (r->method != NGX_HTTP_DELETE) {
        return ngx_http_agent_responses_kept(r, &id, kept);
    }

    if (live) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "Cannot delete a response in "
                                          "progress: cancel it first.");
    }

    /*
     * cancelled, its run may still be stopping on its worker, which holds
     * the conversation until then: what it writes meanwhile would outlive
     * the row
     */

    rc = ngx_http_agent_store_thread_busy(ngx_http_agent_reply_sc(r), &thread,
                                          &holder);
    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc == NGX_OK && holder.len == run.len
        && ngx_strncmp(holder.data, run.data, run.len) == 0)
    {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "Cannot delete a response whose "
                                          "run is still stopping: try "
                                          "again.");
    }

    if (rc == NGX_ERROR) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the response could not be "
                                          "deleted");
    }

    rc = ngx_http_agent_store_run_delete(ngx_http_agent_reply_sc(r), &run);

    if (rc == NGX_AGAIN) {
        return NGX_AGAIN;
    }

    if (rc != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_INTERNAL_SERVER_ERROR,
                                          "the response could not be "
                                          "deleted");
    }

    j = ngx_http_agent_json_create_obj(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_key(j, "id");
    ngx_http_agent_json_str(j, &id);
    ngx_http_agent_json_key(j, "object");
    ngx_http_agent_json_cstr(j, "response");
    ngx_http_agent_json_key(j, "deleted");
    ngx_http_agent_json_bool(j, 1);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}


/* the response object, as its record and its kept kwargs tell it */

static ngx_int_t
ngx_http_agent_responses_kept(ngx_http_request_t *r, ngx_str_t *id,
    ngx_http_agent_turn_outcome_t *out)
{
    yajl_val                         v, x;
    ngx_str_t                        json;
    ngx_http_agent_responses_out_t   o;

    ngx_memzero(&o, sizeof(ngx_http_agent_responses_out_t));

    o.id = *id;
    o.model = out->row.assistant_id;

    /* what the response's request was: our generator's JSON, read back */

    v = out->row.kwargs.len
        ? ngx_http_agent_json_parse(r->pool, out->row.kwargs.data,
                                    out->row.kwargs.len, NULL)
        : NULL;

    if (v && YAJL_IS_OBJECT(v)) {
        x = ngx_http_agent_json_get(v, "created_at");

        if (x && YAJL_IS_INTEGER(x)) {
            o.created = (time_t) YAJL_GET_INTEGER(x);
        }

        (void) ngx_http_agent_json_get_str(v, "previous_response_id",
                                           &o.previous);
        (void) ngx_http_agent_json_get_str(v, "instructions",
                                           &o.instructions);
    }

    if (ngx_http_agent_responses_stored_object(r->pool, &o, out, &json)
        != NGX_OK)
    {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return ngx_http_agent_reply_send(r, NGX_HTTP_OK, &json);
}


/*
 * its input items, as the request's were read (the user's message, or
 * the outputs of the client's calls): a list of one page, newest first
 * unless order=asc
 */

static ngx_int_t
ngx_http_agent_responses_items(ngx_http_request_t *r,
    ngx_http_agent_turn_outcome_t *out)
{
    size_t                  i, n;
    yajl_val                v, input, item;
    ngx_str_t               order, id, first, last;
    ngx_uint_t              asc;
    ngx_http_agent_json_t  *j;

    asc = (ngx_http_arg(r, (u_char *) "order", 5, &order) == NGX_OK
           && order.len == 3 && ngx_strncmp(order.data, "asc", 3) == 0);

    v = out->row.kwargs.len
        ? ngx_http_agent_json_parse(r->pool, out->row.kwargs.data,
                                    out->row.kwargs.len, NULL)
        : NULL;

    input = v ? ngx_http_agent_json_get(v, "input") : NULL;
    n = (input && YAJL_IS_ARRAY(input)) ? input->u.array.len : 0;

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_str_null(&first);
    ngx_str_null(&last);

    ngx_http_agent_json_obj(j);
    ngx_http_agent_json_key(j, "object");
    ngx_http_agent_json_cstr(j, "list");
    ngx_http_agent_json_key(j, "data");
    ngx_http_agent_json_arr(j);

    for (i = 0; i < n; i++) {
        item = input->u.array.values[asc ? i : n - 1 - i];

        /* our generator's JSON, read back: written anew as it is */
        ngx_http_agent_json_val(j, item);

        if (ngx_http_agent_json_get_str(item, "id", &id) == NGX_OK) {
            if (first.len == 0) {
                first = id;
            }

            last = id;
        }
    }

    ngx_http_agent_json_arr_end(j);
    ngx_http_agent_json_key(j, "first_id");

    if (first.len) {
        ngx_http_agent_json_str(j, &first);
        ngx_http_agent_json_key(j, "last_id");
        ngx_http_agent_json_str(j, &last);

    } else {
        ngx_http_agent_json_null(j);
        ngx_http_agent_json_key(j, "last_id");
        ngx_http_agent_json_null(j);
    }

    ngx_http_agent_json_key(j, "has_more");
    ngx_http_agent_json_bool(j, 0);
    ngx_http_agent_json_end(j);

    return ngx_http_agent_reply_json(r, NGX_HTTP_OK, j);
}
