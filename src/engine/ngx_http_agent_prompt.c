
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_engine.h"


/*
 * Prompt templates are read once, at configuration time, so that a missing
 * or unreadable file fails "nginx -t"; "{{name}}" is replaced per turn.
 */


#define NGX_HTTP_AGENT_PROMPT_MAX  (256 * 1024)


static ngx_str_t  ngx_http_agent_prompt_default = ngx_string(
    "You are a data analyst working inside a chat session. Answer the "
    "user's questions about their data with the tools you have: "
    "load_csv_data describes a CSV table, execute_sql_query runs one "
    "read-only SQLite SELECT statement. Look at the data before you "
    "answer, quote the figures you computed, and say so when the data "
    "cannot answer the question.\n\n"
    "CSV files of this session:\n{{csv_metadata}}\n\n"
    "Connected database:\n{{db_schema}}\n");


ngx_int_t
ngx_http_agent_prompt_load(ngx_conf_t *cf, ngx_str_t *dir, ngx_str_t *fname,
    ngx_str_t *out)
{
    u_char           *name;
    ssize_t           n;
    ngx_fd_t          fd;
    ngx_file_t        file;
    ngx_file_info_t   fi;

    if (dir->len == 0) {
        if (fname->len == sizeof(NGX_HTTP_AGENT_PROMPT_SYSTEM) - 1
            && ngx_strncmp(fname->data, NGX_HTTP_AGENT_PROMPT_SYSTEM,
                           fname->len)
               == 0)
        {
            *out = ngx_http_agent_prompt_default;
            return NGX_OK;
        }

        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the prompt file \"%V\" "
                           "needs agent_prompts, the folder it is in",
                           fname);
        return NGX_ERROR;
    }

    if (fname->len == 0
        || ngx_strlchr(fname->data, fname->data + fname->len, '/')
        || fname->data[0] == '.')
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "the prompt file \"%V\": "
                           "a file name inside agent_prompts", fname);
        return NGX_ERROR;
    }

    name = ngx_pnalloc(cf->pool, dir->len + fname->len + 2);
    if (name == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(name, "%V/%V%Z", dir, fname);

    fd = ngx_open_file(name, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (fd == NGX_INVALID_FILE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "agent_prompts: cannot open the prompt template "
                           "\"%s\"", name);
        return NGX_ERROR;
    }

    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR
        || ngx_file_size(&fi) > NGX_HTTP_AGENT_PROMPT_MAX)
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "agent_prompts: \"%s\" is unreadable or larger "
                           "than 256k", name);
        ngx_close_file(fd);
        return NGX_ERROR;
    }

    ngx_memzero(&file, sizeof(ngx_file_t));
    file.fd = fd;
    file.log = cf->log;

    out->len = ngx_file_size(&fi);
    out->data = ngx_pnalloc(cf->pool, out->len + 1);
    if (out->data == NULL) {
        ngx_close_file(fd);
        return NGX_ERROR;
    }

    n = ngx_read_file(&file, out->data, out->len, 0);
    ngx_close_file(fd);

    if (n != (ssize_t) out->len) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno,
                           "agent_prompts: cannot read \"%s\"", name);
        return NGX_ERROR;
    }

    return NGX_OK;
}


/*
 * The built-in react graph's prompt: from agent_prompts when the folder
 * has it, else the compiled-in text and NGX_DECLINED.  A folder of one's
 * own is for one's own graphs: whether a location runs the react graph
 * (and so needs the file) is known only when locations are merged.
 */

ngx_int_t
ngx_http_agent_prompt_builtin(ngx_conf_t *cf, ngx_str_t *dir,
    ngx_str_t *file, ngx_str_t *out)
{
    u_char           *name;
    ngx_file_info_t   fi;

    if (dir->len == 0
        || file->len != sizeof(NGX_HTTP_AGENT_PROMPT_SYSTEM) - 1
        || ngx_strncmp(file->data, NGX_HTTP_AGENT_PROMPT_SYSTEM, file->len)
           != 0)
    {
        return ngx_http_agent_prompt_load(cf, dir, file, out);
    }

    name = ngx_pnalloc(cf->pool, dir->len + file->len + 2);
    if (name == NULL) {
        return NGX_ERROR;
    }

    ngx_sprintf(name, "%V/%V%Z", dir, file);

    if (ngx_file_info(name, &fi) == NGX_FILE_ERROR
        && (ngx_errno == NGX_ENOENT || ngx_errno == NGX_ENOTDIR))
    {
        *out = ngx_http_agent_prompt_default;
        return NGX_DECLINED;
    }

    return ngx_http_agent_prompt_load(cf, dir, file, out);
}


ngx_int_t
ngx_http_agent_prompt_render(ngx_pool_t *pool, ngx_str_t *tpl,
    ngx_http_agent_prompt_var_t *vars, ngx_uint_t n, ngx_str_t *out)
{
    u_char      *p, *q, *last, *end, *d;
    size_t       size;
    ngx_uint_t   i;

    size = tpl->len;
    for (i = 0; i < n; i++) {
        size += vars[i].value.len;
    }

    /* each variable may appear a few times; count it to be exact */

    p = tpl->data;
    last = p + tpl->len;

    while ((q = ngx_strlcasestrn(p, last, (u_char *) "{{", 2 - 1)) != NULL) {
        p = q + 2;
        for (i = 0; i < n; i++) {
            size += vars[i].value.len;
        }
    }

    d = ngx_pnalloc(pool, size);
    if (d == NULL) {
        return NGX_ERROR;
    }

    out->data = d;
    p = tpl->data;

    while (p < last) {
        q = ngx_strlcasestrn(p, last, (u_char *) "{{", 2 - 1);
        if (q == NULL) {
            d = ngx_cpymem(d, p, last - p);
            break;
        }

        d = ngx_cpymem(d, p, q - p);

        end = ngx_strlcasestrn(q, last, (u_char *) "}}", 2 - 1);

        for (i = 0; end && i < n; i++) {
            if ((size_t) (end - q - 2) == vars[i].name.len
                && ngx_strncmp(q + 2, vars[i].name.data, vars[i].name.len)
                   == 0)
            {
                break;
            }
        }

        if (end == NULL || i == n) {
            /* not a variable of ours: keep the text as it is */
            *d++ = *q;
            p = q + 1;
            continue;
        }

        d = ngx_cpymem(d, vars[i].value.data, vars[i].value.len);
        p = end + 2;
    }

    out->len = d - out->data;

    return NGX_OK;
}
