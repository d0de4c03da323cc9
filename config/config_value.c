/* Text forms of config values: sizes with units, durations, listen
 * addresses. Parsers are strict (the whole string must match, overflow is
 * an error) and formatters write the largest exact unit, so that
 * parse(format(x)) == x for every value a parser accepts. */
#include "config/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"

struct unit {
    const char *name;
    uint64_t mult;
};

#define KI 1024ULL
#define KD 1000ULL

/* Matched case-insensitively; "" is plain bytes. */
static const struct unit size_units[] = {
    {"", 1},
    {"b", 1},
    {"k", KI},
    {"kib", KI},
    {"kb", KD},
    {"m", KI *KI},
    {"mib", KI *KI},
    {"mb", KD *KD},
    {"g", KI *KI *KI},
    {"gib", KI *KI *KI},
    {"gb", KD *KD *KD},
    {"t", KI *KI *KI *KI},
    {"tib", KI *KI *KI *KI},
    {"tb", KD *KD *KD *KD},
    {"p", KI *KI *KI *KI *KI},
    {"pib", KI *KI *KI *KI *KI},
    {"pb", KD *KD *KD *KD *KD},
};

/* Reads decimal digits at *p into *v; false if none or on overflow. */
static bool read_digits(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (!isdigit((unsigned char)*s))
        return false;
    while (isdigit((unsigned char)*s)) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        s++;
    }
    *p = s;
    *v = x;
    return true;
}

int cfg_parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    const char *p = s;
    if (!read_digits(&p, &v))
        return ERR_INVAL;
    while (*p == ' ' || *p == '\t')
        p++;
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        const struct unit *u = &size_units[i];
        if (strcasecmp(p, u->name) != 0)
            continue;
        if (v > (uint64_t)INT64_MAX / u->mult)
            return ERR_INVAL;
        *out = v * u->mult;
        return ERR_OK;
    }
    return ERR_INVAL;
}

void cfg_format_size(uint64_t v, char *out, size_t n)
{
    static const struct unit units[] = {
        {"PiB", KI * KI * KI * KI * KI},
        {"PB", KD * KD * KD * KD * KD},
        {"TiB", KI * KI * KI * KI},
        {"TB", KD * KD * KD * KD},
        {"GiB", KI * KI * KI},
        {"GB", KD * KD * KD},
        {"MiB", KI * KI},
        {"MB", KD * KD},
        {"KiB", KI},
        {"KB", KD},
    };
    /* The unit giving the smallest exact number; binary wins ties. */
    const struct unit *best = NULL;
    if (v != 0) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (v % units[i].mult == 0 && (!best || v / units[i].mult < v / best->mult))
                best = &units[i];
    }
    if (best)
        snprintf(out, n, "%llu%s", (unsigned long long)(v / best->mult), best->name);
    else
        snprintf(out, n, "%llu", (unsigned long long)v);
}

#define NS_US 1000LL
#define NS_MS (1000LL * NS_US)
#define NS_S (1000LL * NS_MS)
#define NS_M (60LL * NS_S)
#define NS_H (60LL * NS_M)
#define NS_D (24LL * NS_H)
#define NS_W (7LL * NS_D)

/* Longest names first so that "ms" is not read as "m" + "s". */
static const struct unit dur_units[] = {
    {"ns", 1},   {"us", NS_US}, {"\xc2\xb5s", NS_US}, {"ms", NS_MS}, {"s", NS_S},
    {"m", NS_M}, {"h", NS_H},   {"d", NS_D},          {"w", NS_W},
};

static const struct unit *match_dur_unit(const char *p)
{
    const struct unit *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < sizeof dur_units / sizeof dur_units[0]; i++) {
        size_t len = strlen(dur_units[i].name);
        if (len > best_len && strncmp(p, dur_units[i].name, len) == 0) {
            best = &dur_units[i];
            best_len = len;
        }
    }
    return best;
}

int cfg_parse_duration(const char *s, int64_t *ns)
{
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return ERR_OK;
    }
    const char *p = s;
    uint64_t total = 0;
    if (*p == '\0')
        return ERR_INVAL;
    while (*p) {
        uint64_t v;
        if (!read_digits(&p, &v))
            return ERR_INVAL;
        const struct unit *u = match_dur_unit(p);
        if (!u)
            return ERR_INVAL;
        p += strlen(u->name);
        if (v > (uint64_t)INT64_MAX / u->mult)
            return ERR_INVAL;
        v *= u->mult;
        if (total > (uint64_t)INT64_MAX - v)
            return ERR_INVAL;
        total += v;
    }
    *ns = (int64_t)total;
    return ERR_OK;
}

void cfg_format_duration(int64_t ns, char *out, size_t n)
{
    /* Days are the largest unit printed: a TTL set as 7d reads back as 7d. */
    static const struct unit units[] = {
        {"d", NS_D}, {"h", NS_H}, {"m", NS_M}, {"s", NS_S}, {"ms", NS_MS}, {"us", NS_US}, {"ns", 1},
    };
    if (ns == 0) {
        snprintf(out, n, "0");
        return;
    }
    /* Work on the magnitude as unsigned so INT64_MIN formats too. */
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (mag % units[i].mult == 0) {
            snprintf(out, n, "%s%llu%s", ns < 0 ? "-" : "",
                     (unsigned long long)(mag / units[i].mult), units[i].name);
            return;
        }
    }
}

static void why_puts(struct buf *why, const char *s)
{
    if (why)
        buf_puts(why, s);
}

static bool valid_hostname(const char *h)
{
    size_t len = strlen(h);
    if (len == 0 || len > 253)
        return false;
    for (const char *p = h; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
            return false;
    return h[0] != '-' && h[0] != '.';
}

static bool parse_port(const char *s, uint16_t *port)
{
    uint64_t v;
    const char *p = s;
    if (!read_digits(&p, &v) || *p != '\0' || v > 65535)
        return false;
    *port = (uint16_t)v;
    return true;
}

int cfg_parse_listen(const char *s, struct cfg_addr *out, struct buf *why)
{
    struct cfg_addr a;
    memset(&a, 0, sizeof a);
    const char *colon;
    size_t hlen;
    const char *host = s;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':') {
            why_puts(why, "expected [IPV6]:PORT, e.g. [::1]:8086");
            return ERR_INVAL;
        }
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
        a.is_v6 = true;
    } else {
        colon = strrchr(s, ':');
        if (!colon) {
            why_puts(why, "expected ADDR:PORT, e.g. 127.0.0.1:8086 or [::1]:8086");
            return ERR_INVAL;
        }
        hlen = (size_t)(colon - s);
        if (memchr(s, ':', hlen)) {
            why_puts(why, "an IPv6 address needs brackets: [ADDR]:PORT");
            return ERR_INVAL;
        }
    }
    if (hlen == 0 || hlen >= sizeof a.host) {
        why_puts(why, "the address before the port is missing or too long");
        return ERR_INVAL;
    }
    memcpy(a.host, host, hlen);
    a.host[hlen] = '\0';
    if (!parse_port(colon + 1, &a.port)) {
        why_puts(why, "the port must be a number from 0 to 65535 (0: any free port)");
        return ERR_INVAL;
    }
    unsigned char bin[16];
    if (a.is_v6) {
        if (inet_pton(AF_INET6, a.host, bin) != 1) {
            why_puts(why, "not an IPv6 address inside the brackets");
            return ERR_INVAL;
        }
    } else if (inet_pton(AF_INET, a.host, bin) != 1) {
        /* Dotted digits that are not an IPv4 address are a typo, not a name. */
        bool digits_dots = strspn(a.host, "0123456789.") == hlen;
        if (digits_dots || !valid_hostname(a.host)) {
            why_puts(why, "not an IPv4 address or host name");
            return ERR_INVAL;
        }
    }
    *out = a;
    return ERR_OK;
}

bool cfg_addr_is_loopback(const struct cfg_addr *a)
{
    unsigned char bin[16];
    if (a->is_v6) {
        static const unsigned char v6_loop[16] = {[15] = 1};
        static const unsigned char v4_mapped[12] = {[10] = 0xff, [11] = 0xff};
        if (inet_pton(AF_INET6, a->host, bin) != 1)
            return false;
        if (memcmp(bin, v6_loop, 16) == 0)
            return true;
        return memcmp(bin, v4_mapped, 12) == 0 && bin[12] == 127;
    }
    if (inet_pton(AF_INET, a->host, bin) == 1)
        return bin[0] == 127;
    return strcasecmp(a->host, "localhost") == 0;
}
