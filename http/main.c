/* logbucketd: reads the config, opens the store, serves HTTP, and on
 * SIGTERM/SIGINT stops accepting, lets requests in flight finish, flushes
 * and exits 0. Signals are blocked in every thread and taken by sigwait()
 * here, so no handler runs in the middle of a request. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/log.h"
#include "base/sysmem.h"
#include "config/config.h"
#include "http/server.h"
#include "http/syslog_listen.h"
#include "store/store.h"

static enum store_wal_sync wal_sync_of(enum cfg_wal_sync s)
{
    switch (s) {
    case CFG_WAL_INTERVAL: return STORE_SYNC_INTERVAL;
    case CFG_WAL_NONE: return STORE_SYNC_NONE;
    default: return STORE_SYNC_ALWAYS;
    }
}

static void store_opts_from(const struct config *cfg, uint64_t memory, struct store_opts *o)
{
    store_opts_default(o);
    o->dir = cfg->data_dir;
    o->wal_sync = wal_sync_of(cfg->wal_sync);
    o->wal_sync_interval_ns = cfg->wal_sync_interval_ns;
    o->memtable_bytes = (size_t)cfg->memtable_bytes;
    o->block_cache_bytes = (size_t)cfg_block_cache_bytes(cfg, memory);
    o->background_threads = (unsigned)cfg->background_threads;
    o->retention_check_interval_ns = cfg->retention_check_interval_ns;
    o->settle_after_ns = cfg->settle_after_ns;
    o->cold_zstd_level = cfg->cold_zstd ? (int)cfg->cold_compression_level : 0;
    o->host_section = cfg->host_section;
    o->max_disk_bytes = cfg->max_disk_bytes;
    o->max_open_files = (size_t)cfg->max_open_files;
}

/* bytes as "3.0 GiB" or "64.0 MiB", for the log */
static void human_size(uint64_t bytes, char *out, size_t n)
{
    double gib = (double)bytes / (1024.0 * 1024 * 1024);
    if (gib >= 1)
        snprintf(out, n, "%.1f GiB", gib);
    else
        snprintf(out, n, "%.1f MiB", gib * 1024);
}

/* The block cache's size, and what auto chose it from (memory). */
static void log_block_cache(const struct config *cfg, size_t bytes, uint64_t memory)
{
    char size[32], mem[32];
    human_size(bytes, size, sizeof size);
    if (cfg->block_cache_bytes != CFG_SIZE_AUTO) {
        log_info("block cache %s", size);
        return;
    }
    human_size(memory, mem, sizeof mem);
    log_info("block cache %s (auto: an eighth of %s of memory, at least 64 MiB)", size, mem);
}

/* Reads argv and the config file; returns an exit code >= 0 when main
 * should exit now, -1 to go on. */
static int configure(struct config *cfg, int argc, char **argv)
{
    struct cfg_cli cli;
    memset(&cli, 0, sizeof cli);
    struct buf err = BUF_INIT;
    struct buf out = BUF_INIT;
    int code = -1;
    if (cfg_from_args(cfg, argc, argv, &cli, &err) != ERR_OK) {
        fprintf(stderr, "logbucketd: %s", buf_cstr(&err));
        code = 2;
    } else if (cli.help) {
        cfg_usage(&out);
        fputs(buf_cstr(&out), stdout);
        code = 0;
    } else if (cli.version) {
        printf("logbucketd %s\n", LB_VERSION);
        code = 0;
    } else if (cli.print) {
        cfg_print_flags(cfg, &out, cli.masked ? 0 : CFG_PRINT_SECRETS);
        fputs(buf_cstr(&out), stdout);
        code = 0;
    } else if (cli.check_only) {
        printf("logbucketd: configuration %s is valid\n",
               cli.config_path ? cli.config_path : "(defaults)");
        code = 0;
    }
    buf_destroy(&err);
    buf_destroy(&out);
    return code;
}

static int wait_for_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    return sig;
}

int main(int argc, char **argv)
{
    struct config cfg;
    cfg_init(&cfg);
    int code = configure(&cfg, argc, argv);
    if (code >= 0) {
        cfg_destroy(&cfg);
        return code;
    }
    log_set_level((enum log_level)cfg.log_level);

    /* Block the stop signals before any thread starts, so every thread
     * inherits the mask and only sigwait() sees them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    log_info("logbucketd %s starting (pid %d, data dir %s)", LB_VERSION, (int)getpid(),
             cfg.data_dir);
    struct store_opts so;
    uint64_t memory = sysmem_limit_bytes();
    store_opts_from(&cfg, memory, &so);
    log_block_cache(&cfg, so.block_cache_bytes, memory);
    struct store *store = NULL;
    int rc = store_open(&so, &store);
    if (rc != ERR_OK) {
        log_error("cannot open the store in %s: %s", cfg.data_dir, err_name(rc));
        cfg_destroy(&cfg);
        return 1;
    }
    if (srv_start(&cfg, store) != ERR_OK) {
        store_close(store);
        cfg_destroy(&cfg);
        return 1;
    }
    if (syslog_listen_start(&cfg, store) != ERR_OK) {
        srv_stop(cfg.request_timeout_ns);
        store_close(store);
        cfg_destroy(&cfg);
        return 1;
    }
    int sig = wait_for_signal();
    log_info("received %s: finishing requests in flight", sig == SIGINT ? "SIGINT" : "SIGTERM");
    syslog_listen_stop();
    srv_stop(cfg.request_timeout_ns);
    store_close(store);
    log_info("logbucketd stopped");
    cfg_destroy(&cfg);
    return 0;
}
