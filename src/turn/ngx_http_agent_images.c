
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "ngx_http_agent_http.h"
#include "ngx_http_agent_turn_int.h"
#include "ngx_http_agent_util.h"


#define NGX_HTTP_AGENT_MAX_IMAGES       8

/* ngx_http_agent_image_types[]'s PDF */
#define NGX_HTTP_AGENT_IMAGE_PDF        4
#define NGX_HTTP_AGENT_MAX_IMAGE_SIZE   (5 * 1024 * 1024)


/* the bytes decoded to tell the type: a WebP's "WEBP" ends at 12 */
#define NGX_HTTP_AGENT_IMAGE_MAGIC      12


static ngx_int_t ngx_http_agent_images_type(ngx_str_t *mime);
static ngx_int_t ngx_http_agent_images_check(ngx_http_request_t *r,
    size_t i, ngx_int_t type, ngx_str_t *data);
static ngx_int_t ngx_http_agent_images_sniff(u_char *p, size_t n);
static ngx_uint_t ngx_http_agent_images_base64(u_char c);


/*
 * the types every provider takes, stored as written here: lower case; a
 * PDF is a document part to each (LangChain's "file" blocks)
 */

static ngx_str_t  ngx_http_agent_image_types[] = {
    ngx_string("image/png"),
    ngx_string("image/jpeg"),
    ngx_string("image/webp"),
    ngx_string("image/gif"),
    ngx_string("application/pdf")
};


static char  *ngx_http_agent_image_names[] = {
    "a PNG image", "a JPEG image", "a WebP image", "a GIF image", "a PDF"
};


/*
 * The images of a message, and its PDFs, provider-neutral: [{"mime_type",
 * "data"}]; each provider writes them its own way.
 */

ngx_int_t
ngx_http_agent_images(ngx_http_request_t *r, yajl_val images,
    ngx_str_t *out)
{
    size_t                  i;
    yajl_val                img;
    ngx_int_t               type, rc;
    ngx_str_t               data, mime;
    ngx_http_agent_json_t  *j;

    if (!YAJL_IS_ARRAY(images)) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "\"images\" must be an array");
    }

    if (images->u.array.len == 0) {
        return NGX_OK;
    }

    if (images->u.array.len > NGX_HTTP_AGENT_MAX_IMAGES) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "at most %d images or PDFs a "
                                          "message",
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
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "each image or PDF needs "
                                              "\"data\" (base64) and "
                                              "\"mime_type\" (image/... or "
                                              "application/pdf)");
        }

        type = ngx_http_agent_images_type(&mime);

        if (type == NGX_DECLINED) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "an image must be image/png, "
                                              "image/jpeg, image/webp or "
                                              "image/gif (a document: "
                                              "application/pdf)");
        }

        rc = ngx_http_agent_images_check(r, i, type, &data);
        if (rc != NGX_OK) {
            return rc;
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


static ngx_int_t
ngx_http_agent_images_type(ngx_str_t *mime)
{
    ngx_uint_t   i;
    ngx_str_t   *types;

    types = ngx_http_agent_image_types;

    for (i = 0; i < sizeof(ngx_http_agent_image_types) / sizeof(ngx_str_t);
         i++)
    {
        if (mime->len == types[i].len
            && ngx_strncasecmp(mime->data, types[i].data, mime->len) == 0)
        {
            *mime = types[i];
            return i;
        }
    }

    return NGX_DECLINED;
}


/*
 * strict base64 (the alphabet, "=" only as the padding of the end, a length
 * a multiple of 4) over the whole text, then only its first bytes decoded,
 * on the stack, to check that they start an image of the declared type:
 * a bad image would be stored and break every later turn at the provider
 */

static ngx_int_t
ngx_http_agent_images_check(ngx_http_request_t *r, size_t i, ngx_int_t type,
    ngx_str_t *data)
{
    size_t     k, len;
    u_char     buf[NGX_HTTP_AGENT_IMAGE_MAGIC];
    ngx_int_t  found;
    ngx_str_t  src, dst;

    len = data->len;

    if (len > 0 && data->data[len - 1] == '=') {
        len--;

        if (len > 0 && data->data[len - 1] == '=') {
            len--;
        }
    }

    for (k = 0; k < len; k++) {
        if (data->data[k] == '=') {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "images[%uz]: the \"data\" is "
                                              "not valid base64: \"=\" only "
                                              "pads its end, at most twice "
                                              "(byte %uz)", i, k);
        }

        if (!ngx_http_agent_images_base64(data->data[k])) {
            return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                              "images[%uz]: the \"data\" of an "
                                              "image must be base64, without a "
                                              "data: prefix or spaces (byte "
                                              "%uz is not base64)", i, k);
        }
    }

    if (data->len % 4 != 0) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "images[%uz]: the \"data\" is not "
                                          "valid base64: its length, %uz, is "
                                          "not a multiple of 4 (padded with "
                                          "\"=\")", i, data->len);
    }

    if (data->len / 4 * 3 > NGX_HTTP_AGENT_MAX_IMAGE_SIZE) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_REQUEST_ENTITY_TOO_LARGE,
                                          "an image or a PDF is larger than "
                                          "%d MB",
                                          NGX_HTTP_AGENT_MAX_IMAGE_SIZE
                                          / 1024 / 1024);
    }

    /* 16 characters, a multiple of 4, decode to the 12 bytes of a magic */

    src.data = data->data;
    src.len = ngx_min(data->len, ngx_base64_encoded_length(sizeof(buf)));
    dst.data = buf;

    if (ngx_decode_base64(&dst, &src) != NGX_OK) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "images[%uz]: the \"data\" is not "
                                          "valid base64", i);
    }

    found = ngx_http_agent_images_sniff(buf, dst.len);

    if (found == type) {
        return NGX_OK;
    }

    if (found == NGX_DECLINED) {
        return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST,
                                          "images[%uz] is declared %V, but its "
                                          "data is not %s", i,
                                          &ngx_http_agent_image_types[type],
                                          type == NGX_HTTP_AGENT_IMAGE_PDF
                                          ? "a PDF"
                                          : "a PNG, JPEG, WebP or GIF image");
    }

    return ngx_http_agent_reply_error(r, NGX_HTTP_BAD_REQUEST, "images[%uz] is "
                                      "declared %V, but its data is %s: "
                                      "declare it %V", i,
                                      &ngx_http_agent_image_types[type],
                                      ngx_http_agent_image_names[found],
                                      &ngx_http_agent_image_types[found]);
}


/* the index in ngx_http_agent_image_types[] of the magic bytes at p */

static ngx_int_t
ngx_http_agent_images_sniff(u_char *p, size_t n)
{
    if (n >= 8 && ngx_memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
        return 0;
    }

    if (n >= 3 && ngx_memcmp(p, "\xff\xd8\xff", 3) == 0) {
        return 1;
    }

    if (n >= 12 && ngx_memcmp(p, "RIFF", 4) == 0
        && ngx_memcmp(p + 8, "WEBP", 4) == 0)
    {
        return 2;
    }

    if (n >= 6
        && (ngx_memcmp(p, "GIF87a", 6) == 0
            || ngx_memcmp(p, "GIF89a", 6) == 0))
    {
        return 3;
    }

    if (n >= 5 && ngx_memcmp(p, "%PDF-", 5) == 0) {
        return NGX_HTTP_AGENT_IMAGE_PDF;
    }

    return NGX_DECLINED;
}


static ngx_uint_t
ngx_http_agent_images_base64(u_char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
           || (c >= '0' && c <= '9') || c == '+' || c == '/';
}
