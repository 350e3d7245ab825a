
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_handler.h"
#include "ngx_http_agent_images.h"
#include "ngx_http_agent_json.h"


#define NGX_HTTP_AGENT_MAX_IMAGES       8
#define NGX_HTTP_AGENT_MAX_IMAGE_SIZE   (5 * 1024 * 1024)


static ngx_int_t ngx_http_agent_images_type(ngx_str_t *mime);
static ngx_uint_t ngx_http_agent_images_base64(u_char c);


/*
 * The images of a message, provider-neutral: [{"mime_type", "data"}]; each
 * provider writes them its own way.
 */

ngx_int_t
ngx_http_agent_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *out)
{
    size_t                  i, k;
    yajl_val                img;
    ngx_str_t               data, mime;
    ngx_http_agent_json_t  *j;

    if (!YAJL_IS_ARRAY(images)) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "\"images\" must be an array");
    }

    if (images->u.array.len == 0) {
        return NGX_OK;
    }

    if (images->u.array.len > NGX_HTTP_AGENT_MAX_IMAGES) {
        return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                    "at most %d images a message",
                                    NGX_HTTP_AGENT_MAX_IMAGES);
    }

    j = ngx_http_agent_json_create(r->pool);
    if (j == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ngx_http_agent_json_arr(j);

    for (i = 0; i < images->u.array.len; i++) {
        img = images->u.array.values[i];

        if (ngx_http_agent_json_get_str(img, "data", &data) != NGX_OK
            || data.len == 0
            || ngx_http_agent_json_get_str(img, "mime_type", &mime) != NGX_OK)
        {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "each image needs \"data\" (base64) "
                                        "and \"mime_type\" (image/...)");
        }

        if (ngx_http_agent_images_type(&mime) != NGX_OK) {
            return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                        "an image must be image/png, "
                                        "image/jpeg, image/webp or "
                                        "image/gif");
        }

        for (k = 0; k < data.len; k++) {
            if (!ngx_http_agent_images_base64(data.data[k])) {
                return ngx_http_agent_error(r, NGX_HTTP_BAD_REQUEST,
                                            "the \"data\" of an image must "
                                            "be base64, without a data: "
                                            "prefix");
            }
        }

        if (data.len / 4 * 3 > NGX_HTTP_AGENT_MAX_IMAGE_SIZE) {
            return ngx_http_agent_error(r, NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                        "an image is larger than %d MB",
                                        NGX_HTTP_AGENT_MAX_IMAGE_SIZE
                                        / 1024 / 1024);
        }

        ngx_http_agent_json_obj(j);
        ngx_http_agent_json_key(j, "mime_type");
        ngx_http_agent_json_str(j, &mime);
        ngx_http_agent_json_key(j, "data");
        ngx_http_agent_json_str(j, &data);
        ngx_http_agent_json_end(j);
    }

    ngx_http_agent_json_arr_end(j);

    if (ngx_http_agent_json_done(j, out) != NGX_OK) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    return NGX_OK;
}


/* the types every provider takes, stored as written here: lower case */

static ngx_int_t
ngx_http_agent_images_type(ngx_str_t *mime)
{
    ngx_uint_t  i;

    static ngx_str_t  types[] = {
        ngx_string("image/png"),
        ngx_string("image/jpeg"),
        ngx_string("image/webp"),
        ngx_string("image/gif")
    };

    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (mime->len == types[i].len
            && ngx_strncasecmp(mime->data, types[i].data, mime->len) == 0)
        {
            *mime = types[i];
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
}


static ngx_uint_t
ngx_http_agent_images_base64(u_char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
           || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}
