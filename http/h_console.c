/* The web console at /ui/: its files are built into the daemon (console.h),
 * served with their Content-Type, a strong ETag (304 on If-None-Match) and
 * the headers that keep a page showing log data safe: a strict
 * Content-Security-Policy (no inline script or style, no eval, nothing
 * from elsewhere), nosniff, and no framing. /ui redirects to /ui/. The
 * files hold no data, so they need no token: the page asks for one when
 * the API answers 401. */
#include <string.h>

#include "http/console.h"
#include "http/handlers.h"
#include "http/reply.h"

#define CONSOLE_CSP                                                                                \
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "                    \
    "form-action 'self'; frame-ancestors 'none'"

const struct console_file *console_find(const char *name)
{
    if (*name == '\0')
        name = "index.html";
    for (size_t i = 0; i < console_nfiles; i++)
        if (strcmp(console_files[i].name, name) == 0)
            return &console_files[i];
    return NULL;
}

static void add_safety_headers(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, "Content-Security-Policy", CONSOLE_CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
}

static enum MHD_Result redirect(struct MHD_Connection *con, struct srv_req *req)
{
    static const char body[] = "the console is at /ui/\n";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, "/ui/");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    add_safety_headers(resp);
    return reply_queue(con, req, MHD_HTTP_FOUND, resp);
}

/* True if the request's If-None-Match names etag (or is "*"). */
static bool etag_matches(struct MHD_Connection *con, const char *etag)
{
    const char *inm =
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (!inm)
        return false;
    if (strcmp(inm, "*") == 0)
        return true;
    size_t n = strlen(etag);
    for (const char *p = strstr(inm, etag); p; p = strstr(p + 1, etag)) {
        /* a weak validator W/"x" matches too (RFC 9110 13.1.2) */
        char after = p[n];
        if (after == '\0' || after == ',' || after == ' ')
            return true;
    }
    return false;
}

static enum MHD_Result send_file(struct MHD_Connection *con, struct srv_req *req,
                                 const struct console_file *f)
{
    bool fresh = etag_matches(con, f->etag);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(fresh ? 0 : f->len, fresh ? NULL : (void *)f->data,
                                        MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    if (!fresh)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, f->type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, f->etag);
    /* Revalidate each time: a new daemon may serve new files. */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    add_safety_headers(resp);
    return reply_queue(con, req, fresh ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, resp);
}

enum MHD_Result h_console(struct MHD_Connection *con, struct srv_req *req, const char *upload,
                          size_t *upload_size)
{
    (void)upload;
    (void)upload_size;
    const char *url = req->url ? req->url : "/ui";
    if (strcmp(url, "/ui") == 0)
        return redirect(con, req);
    const struct console_file *f = strncmp(url, "/ui/", 4) == 0 ? console_find(url + 4) : NULL;
    if (!f)
        return reply_error(con, req, MHD_HTTP_NOT_FOUND,
                           "not found: no such file of the console (open /ui/)");
    return send_file(con, req, f);
}
