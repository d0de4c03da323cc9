/* The command line of logbucketd. Flags are read in one pass and applied
 * after the config file, whatever their position, so that
 * `--set wal_sync=none -c prod.conf` still overrides the file; then the
 * rules spanning options are checked (cfg_validate). */
#include "config/config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct pending {
    char *key;   /* owned */
    char *value; /* owned */
    const char *origin;
};

struct args {
    struct pending *sets;
    size_t nsets;
};

static void add_set(struct args *a, const char *key, size_t keylen, const char *value,
                    const char *origin)
{
    a->sets = xrealloc(a->sets, (a->nsets + 1) * sizeof *a->sets);
    a->sets[a->nsets].key = xstrndup(key, keylen);
    a->sets[a->nsets].value = xstrdup(value);
    a->sets[a->nsets].origin = origin;
    a->nsets++;
}

void cfg_usage(struct buf *out)
{
    buf_puts(out,
             "usage: logbucketd [-c FILE] [--listen ADDR:PORT] [--data-dir DIR]\n"
             "                  [--set KEY=VALUE]... [--check-config] [--print-config[=masked]]\n"
             "                  [--version] [-h|--help]\n"
             "\n"
             "  -c, --config FILE     read the INI config file FILE (flat key = value)\n"
             "      --listen ADDR:PORT  HTTP address, e.g. 127.0.0.1:8086 or [::1]:8086\n"
             "      --data-dir DIR    folder of the databases (default ./data)\n"
             "      --set KEY=VALUE   set any config key; repeatable; flags override the file\n"
             "      --check-config    check the config and exit (0 if valid)\n"
             "      --print-config    print the effective config as an INI file it reads back,\n"
             "                        tokens included; =masked hides their secrets (for sharing)\n"
             "      --version         print the version and exit\n"
             "  -h, --help            print this help and exit\n");
}

/* If arg is the long option name, or name=VALUE, returns true and sets
 * *inline_value (NULL when the value is the next argument). */
static bool match_long(const char *arg, const char *name, const char **inline_value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return false;
    if (arg[n] == '\0') {
        *inline_value = NULL;
        return true;
    }
    if (arg[n] == '=') {
        *inline_value = arg + n + 1;
        return true;
    }
    return false;
}

static int usage_fail(struct buf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_fail(struct buf *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(err, fmt, ap);
    va_end(ap);
    buf_putc(err, '\n');
    cfg_usage(err);
    return ERR_INVAL;
}

/* Reads argv into cli and a; ERR_INVAL with a message on a bad flag. */
static int scan(int argc, char **argv, struct cfg_cli *cli, struct args *a, struct buf *err)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v = NULL;
        const char *which = NULL;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            cli->help = true;
            continue;
        }
        if (strcmp(arg, "--version") == 0) {
            cli->version = true;
            continue;
        }
        if (strcmp(arg, "--check-config") == 0) {
            cli->check_only = true;
            continue;
        }
        if (strcmp(arg, "--print-config") == 0 || strcmp(arg, "--print-config=masked") == 0) {
            cli->print = true;
            cli->masked = arg[14] == '=';
            continue;
        }
        if (strcmp(arg, "-c") == 0)
            which = "-c";
        else if (match_long(arg, "--config", &v))
            which = "--config";
        else if (match_long(arg, "--listen", &v))
            which = "--listen";
        else if (match_long(arg, "--data-dir", &v))
            which = "--data-dir";
        else if (match_long(arg, "--set", &v))
            which = "--set";
        else if (arg[0] == '-')
            return usage_fail(err, "unknown option %s", arg);
        else
            return usage_fail(err, "unexpected argument \"%s\" (the config file goes after -c)",
                              arg);
        if (!v) {
            if (i + 1 >= argc)
                return usage_fail(err, "option %s needs a value", which);
            v = argv[++i];
        }
        if (strcmp(which, "-c") == 0 || strcmp(which, "--config") == 0) {
            if (cli->config_path)
                return usage_fail(err, "%s: only one config file may be given", which);
            cli->config_path = v;
        } else if (strcmp(which, "--listen") == 0) {
            add_set(a, "listen", 6, v, "--listen");
        } else if (strcmp(which, "--data-dir") == 0) {
            add_set(a, "data_dir", 8, v, "--data-dir");
        } else {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v)
                return usage_fail(err, "--set %s: expected KEY=VALUE, e.g. --set wal_sync=none", v);
            size_t klen = (size_t)(eq - v);
            while (klen > 0 && (v[klen - 1] == ' ' || v[klen - 1] == '\t'))
                klen--;
            add_set(a, v, klen, eq + 1, "--set");
        }
    }
    return ERR_OK;
}

int cfg_from_args(struct config *c, int argc, char **argv, struct cfg_cli *cli, struct buf *err)
{
    struct args a = {NULL, 0};
    memset(cli, 0, sizeof *cli);
    int rc = scan(argc, argv, cli, &a, err);
    if (rc != ERR_OK || cli->help || cli->version)
        goto done;
    if (cli->config_path) {
        rc = cfg_load_file(c, cli->config_path, err);
        if (rc != ERR_OK)
            goto done;
    }
    for (size_t i = 0; i < a.nsets; i++)
        if (cfg_set(c, a.sets[i].key, a.sets[i].value, a.sets[i].origin, err) != ERR_OK)
            rc = ERR_INVAL;
    if (rc != ERR_OK)
        goto done;
    rc = cfg_validate(c, err);
done:
    for (size_t i = 0; i < a.nsets; i++) {
        free(a.sets[i].key);
        free(a.sets[i].value);
    }
    free(a.sets);
    return rc;
}
