/* Tokens: where a request carries one (Authorization: Token X, Bearer X,
 * Basic base64(user:X), Elasticsearch's ApiKey base64(id:X) or ApiKey X, or
 * InfluxDB 1.x's u/p URL arguments) and what it may
 * do. Without configured tokens every request is allowed. */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"
#include "http/handlers.h"
#include "http/reply.h"

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decodes base64 into out (NUL-terminated); false if invalid or too long. */
static bool b64_decode(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && *p != '='; p++) {
        int v = b64_value(*p);
        if (v < 0)
            return false;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n + 1 >= cap)
                return false;
            out[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[n] = '\0';
    return true;
}

/* Elasticsearch's "ApiKey base64(id:key)": the key is the secret; a value
 * that does not decode to id:key is the secret itself. */
static bool api_key(const char *v, char *out, size_t cap)
{
    char plain[1024];
    const char *colon = NULL;
    if (b64_decode(v, plain, sizeof plain) && strlen(plain) > 0)
        colon = strchr(plain, ':');
    const char *secret = colon ? colon + 1 : v;
    if (strlen(secret) >= cap)
        return false;
    strcpy(out, secret);
    return true;
}

/* The secret a request presents, copied into out; false if none. */
static bool credentials(struct MHD_Connection *con, char *out, size_t cap)
{
    const char *h = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Authorization");
    if (h) {
        const char *sp = strchr(h, ' ');
        if (!sp)
            return false;
        size_t scheme = (size_t)(sp - h);
        while (*sp == ' ')
            sp++;
        if ((scheme == 5 && strncasecmp(h, "Token", 5) == 0) ||
            (scheme == 6 && strncasecmp(h, "Bearer", 6) == 0)) {
            if (strlen(sp) >= cap)
                return false;
            strcpy(out, sp);
            return true;
        }
        if (scheme == 6 && strncasecmp(h, "ApiKey", 6) == 0)
            return api_key(sp, out, cap);
        if (scheme == 5 && strncasecmp(h, "Basic", 5) == 0) {
            char plain[1024];
            if (!b64_decode(sp, plain, sizeof plain))
                return false;
            const char *colon = strchr(plain, ':');
            const char *secret = colon ? colon + 1 : plain;
            if (strlen(secret) >= cap)
                return false;
            strcpy(out, secret);
            return true;
        }
        return false;
    }
    const char *p = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "p");
    if (p && strlen(p) < cap) {
        strcpy(out, p);
        return true;
    }
    return false;
}

bool auth_has_credentials(struct MHD_Connection *con)
{
    return MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Authorization") ||
           MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "p");
}

const struct cfg_token *auth_token(struct MHD_Connection *con, const struct config *cfg)
{
    if (cfg->ntokens == 0)
        return NULL;
    char secret[512];
    if (!credentials(con, secret, sizeof secret))
        return NULL;
    return cfg_find_token(cfg, secret);
}

static const char *right_name(unsigned right)
{
    switch (right) {
    case CFG_RIGHT_READ: return "read";
    case CFG_RIGHT_WRITE: return "write";
    case CFG_RIGHT_ADMIN: return "admin";
    default: return "any";
    }
}

int auth_check(const struct config *cfg, const struct cfg_token *token, bool has_credentials,
               unsigned right, const char *db, struct buf *msg)
{
    if (cfg->ntokens == 0)
        return ERR_OK;
    if (!token) {
        buf_puts(msg, has_credentials ? "authorization failed: unknown token"
                                      : "authorization required: send 'Authorization: Token "
                                        "<token>' (or Bearer, or u/p arguments)");
        return ERR_PERM;
    }
    if (right == 0 && db == NULL)
        return ERR_OK;
    if (cfg_token_allows(token, right, db))
        return ERR_OK;
    buf_printf(msg, "forbidden: the token has no %s right%s%s", right_name(right),
               db ? " on database " : "", db ? db : "");
    return ERR_PERM;
}

bool auth_require(struct MHD_Connection *con, struct srv_req *req, unsigned right, const char *db)
{
    struct buf msg = BUF_INIT;
    int rc = auth_check(server.cfg, req->token, auth_has_credentials(con), right, db, &msg);
    if (rc != ERR_OK)
        reply_error(con, req, req->token ? MHD_HTTP_FORBIDDEN : MHD_HTTP_UNAUTHORIZED,
                    buf_cstr(&msg));
    buf_destroy(&msg);
    return rc == ERR_OK;
}

bool auth_may_read(const void *token, const char *db)
{
    return cfg_token_allows(token, CFG_RIGHT_READ, db);
}
