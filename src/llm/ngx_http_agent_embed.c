
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_module.h"
#include "ngx_http_agent_llm.h"
#include "ngx_http_agent_util.h"
#include "ngx_http_agent_ops.h"


/*
 * Embeddings of a request's texts (agent_embeddings): a model call of the
 * llm layer, so the same curl bridge, retries, fallback, timeouts, key
 * masking and metrics as a chat call, with texts in and float32 vectors
 * out.  A request's pass that needs a vector starts the call and waits
 * the way it waits on the store (sc->waiting): the call's end wakes the
 * pass, which runs again from its start and finds the vector (or the
 * error) kept here, by text, in this module's request context.
 *
 * The directive is this file's own module's, as agent_store_quota is
 * ngx_http_agent_store_module's.
 */


typedef struct {
    ngx_str_t                      text;
    ngx_uint_t                     query;
    ngx_int_t                      rc;        /* NGX_AGAIN while it runs */
    ngx_str_t                      vector;    /* float32s */
    ngx_str_t                      error;
    ngx_http_agent_llm_req_t       req;
    ngx_http_agent_llm_t          *llm;
    ngx_http_agent_store_call_t   *sc;
    ngx_http_agent_embed_watch_t  *watch;
    void                          *watch_data;
} ngx_http_agent_embed_job_t;


/* the request's: its calls, by text, and who pays for them */
typedef struct {
    ngx_array_t                    jobs;      /* embed_job_t *: a call
                                                 holds its job where it
                                                 is */
    ngx_http_agent_embed_watch_t  *watch;
    void                          *watch_data;
} ngx_http_agent_embed_ctx_t;


static ngx_int_t ngx_http_agent_embed_fields(ngx_pool_t *pool,
    yajl_val value, ngx_str_t *fields, ngx_uint_t n, ngx_str_t *text);
static yajl_val ngx_http_agent_embed_path(yajl_val v, ngx_str_t *path);
static ngx_http_agent_embed_ctx_t *ngx_http_agent_embed_ctx(
    ngx_http_request_t *r);
static void ngx_http_agent_embed_done(void *data, ngx_int_t rc);
static char *ngx_http_agent_embed_directive(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static void *ngx_http_agent_embed_create_conf(ngx_conf_t *cf);
static char *ngx_http_agent_embed_merge_conf(ngx_conf_t *cf, void *parent,
    void *child);


static ngx_http_agent_param_bounds_t  ngx_http_agent_embed_dims = {
    1, NGX_HTTP_AGENT_LLM_MAX_DIMS
};


static ngx_http_agent_param_t  ngx_http_agent_embed_params[] = {
    { ngx_string("dims"), ngx_http_agent_params_set_num,
      offsetof(ngx_http_agent_embed_conf_t, dims),
      &ngx_http_agent_embed_dims },
    { ngx_string("fields"), ngx_http_agent_params_set_list,
      offsetof(ngx_http_agent_embed_conf_t, fields), NULL },
    ngx_http_agent_null_param
};


static ngx_command_t  ngx_http_agent_embed_commands[] = {

    { ngx_string("agent_embeddings"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_agent_embed_directive,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_agent_embed_module_ctx = {
    NULL,                                  /* preconfiguration */
    NULL,                                  /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_agent_embed_create_conf,      /* create location configuration */
    ngx_http_agent_embed_merge_conf        /* merge location configuration */
};


ngx_module_t  ngx_http_agent_embed_module = {
    NGX_MODULE_V1,
    &ngx_http_agent_embed_module_ctx,      /* module context */
    ngx_http_agent_embed_commands,         /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/* the location's agent_embeddings, or NULL */

ngx_http_agent_embed_conf_t *
ngx_http_agent_embed_conf(ngx_http_request_t *r)
{
    ngx_http_agent_embed_conf_t  *ecf;

    ecf = ngx_http_get_module_loc_conf(r, ngx_http_agent_embed_module);

    return ecf->model ? ecf : NULL;
}


/*
 * who pays for the request's embeddings calls from now on (r: the
 * services' data, the request; data: the watch's, living as long); the
 * API's own store calls have none
 */

ngx_int_t
ngx_http_agent_embed_watch(void *r, ngx_http_agent_embed_watch_t *watch,
    void *data)
{
    ngx_http_agent_embed_ctx_t  *ctx;

    ctx = ngx_http_agent_embed_ctx(r);
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    ctx->watch = watch;
    ctx->watch_data = data;

    return NGX_OK;
}


static ngx_http_agent_embed_ctx_t *
ngx_http_agent_embed_ctx(ngx_http_request_t *r)
{
    ngx_http_agent_embed_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_agent_embed_module);

    if (ctx == NULL) {
        ctx = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_embed_ctx_t));
        if (ctx == NULL
            || ngx_array_init(&ctx->jobs, r->pool, 2,
                              sizeof(ngx_http_agent_embed_job_t *))
               != NGX_OK)
        {
            return NULL;
        }

        ngx_http_set_ctx(r, ctx, ngx_http_agent_embed_module);
    }

    return ctx;
}


/*
 * text's vector, as a query or as a document: NGX_OK with it in vector;
 * NGX_AGAIN, asked of the model (sc's pass is woken when it answers);
 * NGX_ERROR, with the reason in err; NGX_DECLINED, no agent_embeddings
 */

ngx_int_t
ngx_http_agent_embed_text(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, ngx_str_t *text, ngx_uint_t query,
    ngx_str_t *vector, ngx_str_t *err)
{
    ngx_uint_t                    i;
    ngx_http_agent_llm_t         *llm;
    ngx_http_agent_loc_conf_t    *alcf;
    ngx_http_agent_embed_ctx_t   *ctx;
    ngx_http_agent_embed_job_t   *job, **jp;
    ngx_http_agent_embed_conf_t  *ecf;

    ecf = ngx_http_agent_embed_conf(r);
    if (ecf == NULL) {
        return NGX_DECLINED;
    }

    ctx = ngx_http_agent_embed_ctx(r);
    if (ctx == NULL) {
        return NGX_ERROR;
    }

    jp = ctx->jobs.elts;

    for (i = 0; i < ctx->jobs.nelts; i++) {
        job = jp[i];

        if (job->query != query || job->text.len != text->len
            || ngx_memcmp(job->text.data, text->data, text->len) != 0)
        {
            continue;
        }

        *vector = job->vector;
        *err = job->error;

        return job->rc;
    }

    ngx_str_set(err, "out of memory");

    if (sc->wake == NULL) {
        ngx_str_set(err, "no embeddings without an answer to wait for");
        return NGX_ERROR;
    }

    job = ngx_pcalloc(r->pool, sizeof(ngx_http_agent_embed_job_t));
    llm = ngx_http_agent_llm_create(r->pool, r->connection->log);
    if (job == NULL || llm == NULL) {
        return NGX_ERROR;
    }

    jp = ngx_array_push(&ctx->jobs);
    if (jp == NULL) {
        return NGX_ERROR;
    }

    *jp = job;
    job->text = *text;
    job->query = query;
    job->llm = llm;
    job->sc = sc;
    job->req.inputs = ngx_array_create(r->pool, 1, sizeof(ngx_str_t));
    if (job->req.inputs == NULL || ngx_array_push(job->req.inputs) == NULL)
    {
        return NGX_ERROR;
    }

    ((ngx_str_t *) job->req.inputs->elts)[0] = *text;
    job->req.query = query;
    job->req.dims = ecf->dims;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_agent_module);
    job->req.connect_timeout = alcf->llm_connect_timeout;
    job->req.idle_timeout = alcf->llm_idle_timeout;
    job->req.timeout = alcf->llm_timeout;

    llm->on_done = ngx_http_agent_embed_done;
    llm->data = job;

    /* a turn's budgets first: a refused call is this text's error */

    if (ctx->watch
        && ctx->watch->start(ctx->watch_data, llm, ecf->model, &job->req,
                             &job->error)
           != NGX_OK)
    {
        job->rc = NGX_ERROR;
        *err = job->error;
        return NGX_ERROR;
    }

    job->watch = ctx->watch;
    job->watch_data = ctx->watch_data;

    if (ngx_http_agent_llm_call(llm, ecf->model, &job->req) != NGX_OK) {
        if (job->watch) {
            job->watch->end(job->watch_data, llm);
        }

        job->rc = NGX_ERROR;
        job->error = llm->error;
        *err = job->error;
        return NGX_ERROR;
    }

    job->rc = NGX_AGAIN;
    sc->waiting++;

    return NGX_AGAIN;
}


/*
 * an item's value as a document: its fields' text (none: the location's
 * fields=) embedded; NGX_OK with an empty vector when none of the fields
 * is there, else as ngx_http_agent_embed_text()
 */

ngx_int_t
ngx_http_agent_embed_item(ngx_http_request_t *r,
    ngx_http_agent_store_call_t *sc, yajl_val value, ngx_str_t *fields,
    ngx_uint_t n, ngx_str_t *vector, ngx_str_t *err)
{
    ngx_str_t                     text;
    ngx_http_agent_embed_conf_t  *ecf;

    ngx_str_null(vector);
    ngx_str_set(err, "out of memory");

    ecf = ngx_http_agent_embed_conf(r);
    if (ecf == NULL) {
        return NGX_DECLINED;
    }

    if (n == 0) {
        fields = ecf->fields->elts;
        n = ecf->fields->nelts;
    }

    if (ngx_http_agent_embed_fields(r->pool, value, fields, n, &text)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    if (text.len == 0) {
        /* none of its fields: nothing to find it by meaning */
        return NGX_OK;
    }

    return ngx_http_agent_embed_text(r, sc, &text, 0, vector, err);
}


/*
 * the fields' text, one a line: a string as it is, anything else as our
 * JSON of it; a path no value has adds nothing
 */

static ngx_int_t
ngx_http_agent_embed_fields(ngx_pool_t *pool, yajl_val value,
    ngx_str_t *fields, ngx_uint_t n, ngx_str_t *text)
{
    u_char      *p;
    size_t       len;
    yajl_val     v;
    ngx_str_t   *parts;
    ngx_uint_t   i;

    parts = ngx_pcalloc(pool, n * sizeof(ngx_str_t));
    if (parts == NULL) {
        return NGX_ERROR;
    }

    len = 0;

    for (i = 0; i < n; i++) {
        v = ngx_http_agent_embed_path(value, &fields[i]);

        if (v == NULL || YAJL_IS_NULL(v)) {
            continue;
        }

        if (YAJL_IS_STRING(v)) {
            parts[i].data = (u_char *) YAJL_GET_STRING(v);
            parts[i].len = ngx_strlen(parts[i].data);

        } else if (ngx_http_agent_json_encode(pool, v, &parts[i])
                   != NGX_OK)
        {
            return NGX_ERROR;
        }

        len += parts[i].len + 1;
    }

    ngx_str_null(text);

    if (len == 0) {
        return NGX_OK;
    }

    p = ngx_pnalloc(pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    text->data = p;

    for (i = 0; i < n; i++) {
        if (parts[i].len) {
            if (p != text->data) {
                *p++ = '\n';
            }

            p = ngx_cpymem(p, parts[i].data, parts[i].len);
        }
    }

    text->len = p - text->data;

    return NGX_OK;
}


/* "$" the value itself, "a.b" its key a's key b */

static yajl_val
ngx_http_agent_embed_path(yajl_val v, ngx_str_t *path)
{
    u_char      *p, *last, *dot;
    size_t       len;
    ngx_uint_t   i;

    if (path->len == 1 && path->data[0] == '$') {
        return v;
    }

    p = path->data;
    last = p + path->len;

    if (path->len > 2 && p[0] == '$' && p[1] == '.') {
        p += 2;
    }

    while (p < last) {
        dot = ngx_strlchr(p, last, '.');
        len = (dot ? dot : last) - p;

        if (v == NULL || !YAJL_IS_OBJECT(v)) {
            return NULL;
        }

        for (i = 0; i < v->u.object.len; i++) {
            if (ngx_strlen(v->u.object.keys[i]) == len
                && ngx_strncmp(v->u.object.keys[i], p, len) == 0)
            {
                break;
            }
        }

        if (i == v->u.object.len) {
            return NULL;
        }

        v = v->u.object.values[i];
        p += len + (dot ? 1 : 0);
    }

    return v;
}


static void
ngx_http_agent_embed_done(void *data, ngx_int_t rc)
{
    ngx_http_agent_embed_job_t *job = data;

    ngx_http_agent_model_t  *m;

    job->rc = rc;
    m = job->llm->model;

    if (rc == NGX_OK) {
        job->vector.data = (u_char *) job->req.vectors;
        job->vector.len = job->req.dims * sizeof(float);

        /* what the answering model counted, and its price of it */
        ngx_http_agent_metrics_cstr(NGX_HTTP_AGENT_M_TOKENS, &m->name,
                                    "input", job->llm->prompt_tokens);

        if (m->price.set) {
            ngx_http_agent_metrics_add(NGX_HTTP_AGENT_M_COST, &m->name, NULL,
                                   ngx_http_agent_cost_of(&m->price,
                                               job->llm->prompt_tokens, 0, 0,
                                               0));
        }

    } else {
        job->error = job->llm->error;
    }

    if (job->watch) {
        job->watch->end(job->watch_data, job->llm);
    }

    job->sc->waiting--;
    job->sc->wake(job->sc);
}


static char *
ngx_http_agent_embed_directive(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_agent_embed_conf_t *ecf = conf;

    ngx_str_t  *value;

    if (ecf->name.data) {
        return "is duplicate";
    }

    value = cf->args->elts;
    ecf->name = value[1];
    ecf->dims = 0;

    if (ngx_http_agent_params_parse(cf, ngx_http_agent_embed_params,
                                    &value[2], cf->args->nelts - 2, ecf,
                                    "agent_embeddings", &ecf->name)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static void *
ngx_http_agent_embed_create_conf(ngx_conf_t *cf)
{
    ngx_http_agent_embed_conf_t  *ecf;

    ecf = ngx_pcalloc(cf->pool, sizeof(ngx_http_agent_embed_conf_t));
    if (ecf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     ecf->name = { 0, NULL };
     *     ecf->model = NULL;
     *     ecf->fields = NULL;
     */

    ecf->dims = NGX_CONF_UNSET_UINT;

    return ecf;
}


/*
 * the model is found here, once the http block's agent_model lines are all
 * read: a name no agent_model has, or a provider without embeddings
 * (Anthropic's), fails nginx -t
 */

static char *
ngx_http_agent_embed_merge_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_agent_embed_conf_t *prev = parent;
    ngx_http_agent_embed_conf_t *conf = child;

    ngx_http_agent_main_conf_t  *amcf;

    static ngx_str_t  whole = ngx_string("$");

    if (conf->name.data == NULL) {
        conf->name = prev->name;
        conf->dims = prev->dims;
        conf->fields = prev->fields;
    }

    ngx_conf_merge_uint_value(conf->dims, prev->dims, 0);

    if (conf->name.len == 0 || (conf->name.len == 3
                                && ngx_strncmp(conf->name.data, "off", 3)
                                   == 0))
    {
        conf->model = NULL;
        return NGX_CONF_OK;
    }

    amcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_agent_module);

    conf->model = ngx_http_agent_model_find(amcf, &conf->name);

    if (conf->model == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_embeddings: unknown "
                           "model \"%V\"", &conf->name);
        return NGX_CONF_ERROR;
    }

    if (conf->model->provider->embed == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "agent_embeddings: the "
                           "model \"%V\" is of provider=%V, which has no "
                           "embeddings", &conf->name,
                           &conf->model->provider->name);
        return NGX_CONF_ERROR;
    }

    if (conf->fields == NULL) {
        /* LangGraph's default: the whole value */
        conf->fields = ngx_array_create(cf->pool, 1, sizeof(ngx_str_t));
        if (conf->fields == NULL
            || ngx_array_push(conf->fields) == NULL)
        {
            return NGX_CONF_ERROR;
        }

        ((ngx_str_t *) conf->fields->elts)[0] = whole;
    }

    return NGX_CONF_OK;
}
