/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_stream.h"


/* the stream formats of agent_stream: a new one is its file and a line here */


extern ngx_http_agent_format_t  ngx_http_agent_typed_format;
extern ngx_http_agent_format_t  ngx_http_agent_events_format;


static ngx_http_agent_format_t  *ngx_http_agent_formats[] = {
    &ngx_http_agent_typed_format,
    &ngx_http_agent_events_format,
    &ngx_http_agent_agui_format,
    NULL
};


ngx_http_agent_format_t *
ngx_http_agent_stream_format_find(ngx_str_t *name)
{
    ngx_uint_t                i;
    ngx_http_agent_format_t  *f;

    for (i = 0; ngx_http_agent_formats[i]; i++) {
        f = ngx_http_agent_formats[i];

        if (f->name.len == name->len
            && ngx_strncmp(f->name.data, name->data, name->len) == 0)
        {
            return f;
        }
    }

    return NULL;
}
