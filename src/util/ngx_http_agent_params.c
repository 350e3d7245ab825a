
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


static void ngx_http_agent_params_error(ngx_conf_t *cf, const char *fmt,
    ngx_str_t *first, ngx_str_t *word, const char *what, ngx_str_t *name,
    char *reason);
static char *ngx_http_agent_params_bounds(ngx_conf_t *cf,
    ngx_http_agent_param_bounds_t *b, ngx_int_t n, const char *unit);
static ngx_array_t **ngx_http_agent_params_array(ngx_conf_t *cf,
    void *conf, ngx_http_agent_param_t *p, size_t size);


ngx_http_agent_param_ref_t  ngx_http_agent_param_optional = { 0, 0 };
ngx_http_agent_param_ref_t  ngx_http_agent_param_required = { 1, 0 };
ngx_http_agent_param_ref_t  ngx_http_agent_param_messages = { 0, 1 };


/* the words from words[0]: each KEY=VALUE, each KEY in the table */

ngx_int_t
ngx_http_agent_params_parse(ngx_conf_t *cf, ngx_http_agent_param_t *table,
    ngx_str_t *words, ngx_uint_t n, void *conf, const char *what,
    ngx_str_t *name)
{
    ngx_int_t   rc;
    ngx_uint_t  i;

    for (i = 0; i < n; i++) {
        rc = ngx_http_agent_params_word(cf, table, &words[i], conf, what,
                                        name);

        if (rc == NGX_DECLINED) {
            ngx_http_agent_params_unknown(cf, &words[i], what, name);
            return NGX_ERROR;
        }

        if (rc != NGX_OK) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* NGX_OK, NGX_DECLINED: its KEY is not in the table, NGX_ERROR: logged */

ngx_int_t
ngx_http_agent_params_word(ngx_conf_t *cf, ngx_http_agent_param_t *table,
    ngx_str_t *word, void *conf, const char *what, ngx_str_t *name)
{
    u_char                  *eq;
    char                    *rv;
    ngx_str_t                key, value;
    ngx_http_agent_param_t  *p;

    eq = ngx_strlchr(word->data, word->data + word->len, '=');

    if (eq == NULL || eq == word->data) {
        return NGX_DECLINED;
    }

    key.data = word->data;
    key.len = eq - word->data;
    value.data = eq + 1;
    value.len = word->data + word->len - value.data;

    for (p = table; p->name.len; p++) {
        if (p->name.len != key.len
            || ngx_strncmp(p->name.data, key.data, key.len) != 0)
        {
            continue;
        }

        rv = p->set(cf, p, &value, conf);

        if (rv == NGX_CONF_OK) {
            return NGX_OK;
        }

        if (rv != NGX_CONF_ERROR) {
            ngx_http_agent_params_error(cf, "invalid value \"%V\" in "
                                        "\"%V\" of %s%s%V%s: %s", &value,
                                        word, what, name, rv);
        }

        return NGX_ERROR;
    }

    return NGX_DECLINED;
}


void
ngx_http_agent_params_unknown(ngx_conf_t *cf, ngx_str_t *word,
    const char *what, ngx_str_t *name)
{
    u_char     *eq;
    ngx_str_t   key, none = ngx_null_string;

    key = *word;
    eq = ngx_strlchr(word->data, word->data + word->len, '=');

    if (eq && eq > word->data) {
        key.len = eq - word->data;
    }

    ngx_http_agent_params_error(cf, "unknown parameter \"%V\"%V of %s%s%V%s",
                                &key, &none, what, name, NULL);
}


static void
ngx_http_agent_params_error(ngx_conf_t *cf, const char *fmt,
    ngx_str_t *first, ngx_str_t *word, const char *what, ngx_str_t *name,
    char *reason)
{
    ngx_str_t   none = ngx_null_string;

    /* what "name": node "x"; what alone: agent_limit */

    if (name == NULL) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, fmt, first, word, what, "",
                           &none, "", reason);
        return;
    }

    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, fmt, first, word, what, " \"",
                       name, "\"", reason);
}


/* a channel's or a node's name: letters, digits and _ */

ngx_int_t
ngx_http_agent_params_name(ngx_str_t *name)
{
    ngx_uint_t  i;

    for (i = 0; i < name->len; i++) {
        if (!(isalnum(name->data[i]) || name->data[i] == '_')) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* post: an ngx_conf_post_t, called with the string set */

char *
ngx_http_agent_params_set_str(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_str_t        *s;
    ngx_conf_post_t  *post;

    s = (ngx_str_t *) ((u_char *) conf + p->offset);
    *s = *value;

    post = p->post;

    if (post) {
        return post->post_handler(cf, post, s);
    }

    return NGX_CONF_OK;
}


/* a channel's name, resolved once the graph is read; post: see the .h */

char *
ngx_http_agent_params_set_channel(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    if (ngx_http_agent_params_name(value) != NGX_OK) {
        return "a channel's name: letters, digits and _ only";
    }

    *(ngx_str_t *) ((u_char *) conf + p->offset) = *value;

    return NGX_CONF_OK;
}


/* a file's name in the prompts folder, read once the graph is read */

char *
ngx_http_agent_params_set_file(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    *(ngx_str_t *) ((u_char *) conf + p->offset) = *value;

    return NGX_CONF_OK;
}


/* ngx_array_t * of ngx_str_t: channels' names, one at each use */

char *
ngx_http_agent_params_set_channels(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf)
{
    ngx_str_t     *s;
    ngx_array_t  **a;

    if (ngx_http_agent_params_name(value) != NGX_OK) {
        return "a channel's name: letters, digits and _ only";
    }

    a = ngx_http_agent_params_array(cf, conf, p, sizeof(ngx_str_t));
    if (a == NULL) {
        return NGX_CONF_ERROR;
    }

    s = ngx_array_push(*a);
    if (s == NULL) {
        return NGX_CONF_ERROR;
    }

    *s = *value;

    return NGX_CONF_OK;
}


/* ngx_array_t * of ngx_str_t: A,B,C, added to those of an earlier use */

char *
ngx_http_agent_params_set_list(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    u_char        *s, *e, *last;
    ngx_str_t     *item;
    ngx_array_t  **a;

    a = ngx_http_agent_params_array(cf, conf, p, sizeof(ngx_str_t));
    if (a == NULL) {
        return NGX_CONF_ERROR;
    }

    s = value->data;
    last = value->data + value->len;

    while (s < last) {
        e = ngx_strlchr(s, last, ',');
        if (e == NULL) {
            e = last;
        }

        if (e > s) {
            item = ngx_array_push(*a);
            if (item == NULL) {
                return NGX_CONF_ERROR;
            }

            item->data = s;
            item->len = e - s;
        }

        s = e + 1;
    }

    return NGX_CONF_OK;
}


/*
 * ngx_array_t * of ngx_str_t: NAME:VALUE,NAME:VALUE, each kept as
 * "NAME: VALUE", NUL-terminated for curl; post: the separator, ":" or "="
 */

char *
ngx_http_agent_params_set_headers(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    u_char        *s, *e, *sep, *last;
    ngx_str_t     *h;
    ngx_array_t  **a;

    a = ngx_http_agent_params_array(cf, conf, p, sizeof(ngx_str_t));
    if (a == NULL) {
        return NGX_CONF_ERROR;
    }

    s = value->data;
    last = value->data + value->len;

    while (s < last) {
        e = ngx_strlchr(s, last, ',');
        if (e == NULL) {
            e = last;
        }

        sep = ngx_strlchr(s, e, *(u_char *) p->post);
        if (sep == NULL || sep == s) {
            return *(u_char *) p->post == ':' ? "NAME:VALUE,..."
                                              : "NAME=VALUE,...";
        }

        h = ngx_array_push(*a);
        if (h == NULL) {
            return NGX_CONF_ERROR;
        }

        h->data = ngx_pnalloc(cf->pool, e - s + 2);
        if (h->data == NULL) {
            return NGX_CONF_ERROR;
        }

        h->len = ngx_sprintf(h->data, "%*s: %*s%Z", sep - s, s,
                             e - sep - 1, sep + 1)
                 - h->data - 1;
        s = e + 1;
    }

    return NGX_CONF_OK;
}


/* ngx_int_t or ngx_uint_t; post: ngx_http_agent_param_bounds_t, or any */

char *
ngx_http_agent_params_set_num(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    char       *rv;
    ngx_int_t   n;

    n = ngx_atoi(value->data, value->len);

    if (n == NGX_ERROR) {
        return "a number";
    }

    rv = ngx_http_agent_params_bounds(cf, p->post, n, "a number");
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    *(ngx_int_t *) ((u_char *) conf + p->offset) = n;

    return NGX_CONF_OK;
}


/* ngx_msec_t, as ngx_parse_time() reads it; post: bounds in ms */

char *
ngx_http_agent_params_set_msec(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_msec_t  ms;

    ms = ngx_parse_time(value, 0);

    if (ms == (ngx_msec_t) NGX_ERROR
        || ngx_http_agent_params_bounds(cf, p->post, ms, "")
           != NGX_CONF_OK)
    {
        return "a time such as 500ms or 5s";
    }

    *(ngx_msec_t *) ((u_char *) conf + p->offset) = ms;

    return NGX_CONF_OK;
}


/* size_t, as ngx_parse_size() reads it; post: bounds in bytes */

char *
ngx_http_agent_params_set_size(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    char     *rv;
    ssize_t   size;

    size = ngx_parse_size(value);

    if (size == NGX_ERROR) {
        return "a size such as 512 or 64k";
    }

    rv = ngx_http_agent_params_bounds(cf, p->post, size, "a size");
    if (rv != NGX_CONF_OK) {
        return rv;
    }

    *(size_t *) ((u_char *) conf + p->offset) = size;

    return NGX_CONF_OK;
}


/* ngx_flag_t: on or off */

char *
ngx_http_agent_params_set_flag(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    ngx_flag_t  *f;

    f = (ngx_flag_t *) ((u_char *) conf + p->offset);

    if (value->len == 2 && ngx_strncmp(value->data, "on", 2) == 0) {
        *f = 1;

    } else if (value->len == 3 && ngx_strncmp(value->data, "off", 3) == 0) {
        *f = 0;

    } else {
        return "on or off";
    }

    return NGX_CONF_OK;
}


/* ngx_uint_t; post: ngx_conf_enum_t names and their values */

char *
ngx_http_agent_params_set_enum(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    u_char           *r, *last;
    size_t            len;
    ngx_conf_enum_t  *e;

    len = sizeof("one of") - 1;

    for (e = p->post; e->name.len; e++) {
        if (e->name.len == value->len
            && ngx_strncmp(e->name.data, value->data, value->len) == 0)
        {
            *(ngx_uint_t *) ((u_char *) conf + p->offset) = e->value;
            return NGX_CONF_OK;
        }

        len += 1 + e->name.len;
    }

    r = ngx_pnalloc(cf->temp_pool, len + 1);
    if (r == NULL) {
        return NGX_CONF_ERROR;
    }

    last = ngx_cpymem(r, "one of", sizeof("one of") - 1);

    for (e = p->post; e->name.len; e++) {
        last = ngx_sprintf(last, " %V", &e->name);
    }

    *last = '\0';

    return (char *) r;
}


/* ngx_array_t * of ngx_regex_t *; post: an ngx_int_t of regex options */

char *
ngx_http_agent_params_set_regex(ngx_conf_t *cf, ngx_http_agent_param_t *p,
    ngx_str_t *value, void *conf)
{
    u_char               *r, errstr[NGX_MAX_CONF_ERRSTR];
    ngx_regex_t         **re;
    ngx_array_t         **a;
    ngx_regex_compile_t   rc;

    a = ngx_http_agent_params_array(cf, conf, p, sizeof(ngx_regex_t *));
    if (a == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(&rc, sizeof(ngx_regex_compile_t));
    rc.pattern = *value;
    rc.pool = cf->pool;
    rc.options = p->post ? *(ngx_int_t *) p->post : 0;
    rc.err.len = NGX_MAX_CONF_ERRSTR;
    rc.err.data = errstr;

    if (ngx_regex_compile(&rc) != NGX_OK) {
        r = ngx_pnalloc(cf->temp_pool, rc.err.len + 1);
        if (r == NULL) {
            return NGX_CONF_ERROR;
        }

        *ngx_cpymem(r, rc.err.data, rc.err.len) = '\0';

        return (char *) r;
    }

    re = ngx_array_push(*a);
    if (re == NULL) {
        return NGX_CONF_ERROR;
    }

    *re = rc.regex;

    return NGX_CONF_OK;
}


static char *
ngx_http_agent_params_bounds(ngx_conf_t *cf, ngx_http_agent_param_bounds_t *b,
    ngx_int_t n, const char *unit)
{
    u_char  *r;

    if (b == NULL || (n >= b->min && n <= b->max)) {
        return NGX_CONF_OK;
    }

    r = ngx_pnalloc(cf->temp_pool, NGX_INT_T_LEN * 2 + 64);
    if (r == NULL) {
        return NGX_CONF_ERROR;
    }

    if (b->max == NGX_MAX_INT_T_VALUE) {
        *ngx_sprintf(r, "%s of at least %i", unit, b->min) = '\0';

    } else {
        *ngx_sprintf(r, "%s from %i to %i", unit, b->min, b->max) = '\0';
    }

    return (char *) r;
}


static ngx_array_t **
ngx_http_agent_params_array(ngx_conf_t *cf, void *conf,
    ngx_http_agent_param_t *p, size_t size)
{
    ngx_array_t  **a;

    a = (ngx_array_t **) ((u_char *) conf + p->offset);

    if (*a == NULL) {
        *a = ngx_array_create(cf->pool, 2, size);
        if (*a == NULL) {
            return NULL;
        }
    }

    return a;
}


/* a directive's file name, made full from the prefix */

char *
ngx_http_agent_params_path(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    char  *p = conf;

    ngx_str_t  *field, *value;

    field = (ngx_str_t *) (p + cmd->offset);

    if (field->data) {
        return "is duplicate";
    }

    value = cf->args->elts;
    *field = value[1];

    if (ngx_conf_full_name(cf->cycle, field, 0) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}
