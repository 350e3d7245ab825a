
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#ifndef _NGX_HTTP_AGENT_PARAMS_H_INCLUDED_
#define _NGX_HTTP_AGENT_PARAMS_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>


/*
 * KEY=VALUE parameters, read against a table the way nginx reads
 * directives against its ngx_command_t: a node line's and those of the
 * directives that take KEY=VALUE words.  A setter returns NGX_CONF_OK,
 * NGX_CONF_ERROR (it has logged) or a short reason; the parser writes
 * every message, so all say the same thing the same way.
 */

typedef struct ngx_http_agent_param_s  ngx_http_agent_param_t;

typedef char *(*ngx_http_agent_param_set_pt)(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);

struct ngx_http_agent_param_s {
    ngx_str_t                      name;
    ngx_http_agent_param_set_pt    set;
    ngx_uint_t                     offset;
    void                          *post;   /* bounds, enum, post handler */
};

#define ngx_http_agent_null_param  { ngx_null_string, NULL, 0, NULL }


/* numbers, times and sizes: from min to max, inclusive */
typedef struct {
    ngx_int_t                      min;
    ngx_int_t                      max;
} ngx_http_agent_param_bounds_t;


/*
 * The post of a node's set_channel, set_channels or set_file parameter:
 * once the graph is read, what it names is resolved into what follows its
 * name in the conf: a channel into an ngx_int_t (unnamed: -1, or the
 * messages channel where messages may go), channels into an ngx_array_t *
 * of ngx_int_t, a file of the prompts folder into an ngx_str_t of its
 * text.  Without a post the kind resolves it.
 */
typedef struct {
    ngx_uint_t                     required;   /* the node needs it */
    ngx_uint_t                     messages;   /* may be "messages" */
} ngx_http_agent_param_ref_t;


extern ngx_http_agent_param_ref_t  ngx_http_agent_param_optional;
extern ngx_http_agent_param_ref_t  ngx_http_agent_param_required;
extern ngx_http_agent_param_ref_t  ngx_http_agent_param_messages;


ngx_int_t ngx_http_agent_params_parse(ngx_conf_t *cf,
    ngx_http_agent_param_t *table, ngx_str_t *words, ngx_uint_t n,
    void *conf, const char *what, ngx_str_t *name);
ngx_int_t ngx_http_agent_params_word(ngx_conf_t *cf,
    ngx_http_agent_param_t *table, ngx_str_t *word, void *conf,
    const char *what, ngx_str_t *name);
void ngx_http_agent_params_unknown(ngx_conf_t *cf, ngx_str_t *word,
    const char *what, ngx_str_t *name);
ngx_int_t ngx_http_agent_params_name(ngx_str_t *name);

char *ngx_http_agent_params_set_str(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_channel(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_channels(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_file(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_list(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_headers(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_num(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_msec(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_size(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_flag(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_enum(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);
char *ngx_http_agent_params_set_regex(ngx_conf_t *cf,
    ngx_http_agent_param_t *p, ngx_str_t *value, void *conf);


char *ngx_http_agent_params_path(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);


#endif /* _NGX_HTTP_AGENT_PARAMS_H_INCLUDED_ */
