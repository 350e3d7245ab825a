
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_store.h"
#include "ngx_http_agent_util.h"


/*
 * The host a worker runs on, as the store names it (its boot id and pid
 * namespace), and whether a session's holder named by host and pid is
 * gone: a lease of a worker that died on this host is taken over at once.
 */


static ngx_uint_t ngx_http_agent_store_pid_exited(ngx_pid_t pid);


ngx_str_t                        ngx_http_agent_store_host;
static u_char                    ngx_http_agent_store_host_data[128];


/*
 * A lease held by another turn is taken over at once only when its holder
 * was a process of this host (and pid namespace) that is gone; a pid of
 * another host proves nothing, and only the lease's expiry frees it.  A
 * worker killed is gone once it exits, though its pid lives on until the
 * master reaps it (ngx_http_agent_store_pid_exited).
 */

ngx_uint_t
ngx_http_agent_store_holder_gone(ngx_str_t *id, u_char *host, size_t len,
    ngx_pid_t pid)
{
    if (host == NULL || len != ngx_http_agent_store_host.len
        || ngx_memcmp(host, ngx_http_agent_store_host.data, len) != 0)
    {
        return 0;
    }

    if (pid == ngx_pid
        || ((kill(pid, 0) == 0 || ngx_errno != ESRCH)
            && !ngx_http_agent_store_pid_exited(pid)))
    {
        return 0;
    }

    ngx_log_error(NGX_LOG_WARN, ngx_cycle->log, 0,
                  "agent: session \"%V\" was held by process %P, "
                  "which is gone; taking it over", id, pid);

    return 1;
}


/*
 * A process that exits closes its sockets and then waits, a zombie, for
 * its parent to reap it, with kill(pid, 0) still answered: the client of
 * a worker killed mid-turn hears its stream end and sends its next
 * message in that moment, and a master the scheduler has not run yet
 * (a busy host) makes the moment long.  Its state says it exits: Z or X,
 * or PF_EXITING among its flags (the 9th field), set once it is killed.
 * /proc is the kernel's memory: reading it never waits.
 */

static ngx_uint_t
ngx_http_agent_store_pid_exited(ngx_pid_t pid)
{
    u_char     *p, *last, *flags;
    ssize_t     n;
    ngx_fd_t    fd;
    ngx_int_t   f;
    ngx_uint_t  field;
    u_char      buf[512];

    p = ngx_snprintf(buf, sizeof(buf) - 1, "/proc/%P/stat", pid);
    *p = '\0';

    fd = ngx_open_file(buf, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (fd == NGX_INVALID_FILE) {
        return 0;
    }

    n = read(fd, buf, sizeof(buf));
    (void) ngx_close_file(fd);

    if (n <= 0) {
        return 0;
    }

    /* "pid (comm) S ppid pgrp session tty tpgid flags": comm may hold ')' */

    last = buf + n;

    for (p = last; p > buf && p[-1] != ')'; p--) { /* void */ }

    if (p == buf || last - p < 3) {
        return 0;
    }

    if (p[1] == 'Z' || p[1] == 'X') {
        return 1;
    }

    /* from the state (the 3rd field) to the flags */

    for (p += 2, field = 3; field < 9 && p < last; p++) {
        if (*p == ' ') {
            field++;
        }
    }

    for (flags = p; p < last && *p != ' '; p++) { /* void */ }

    f = ngx_atoi(flags, p - flags);

    /* PF_EXITING, include/linux/sched.h */
    return field == 9 && f != NGX_ERROR && (f & 0x4);
}


/*
 * Where a turn's pid means something: the kernel's boot id and the pid
 * namespace.  Another host, or a container with its own pid namespace on
 * the same file, has another identity, and there a pid that looks gone
 * proves nothing: only the lease time frees its sessions.  Without /proc,
 * a random id of this master's start.
 */

void
ngx_http_agent_store_host_init(ngx_cycle_t *cycle)
{
    u_char     *p, *last, id[36];
    ssize_t     n;
    ngx_fd_t    fd;
    ngx_uint_t  ok;

    p = ngx_http_agent_store_host_data;
    last = p + sizeof(ngx_http_agent_store_host_data);
    ok = 0;

    fd = ngx_open_file("/proc/sys/kernel/random/boot_id", NGX_FILE_RDONLY,
                       NGX_FILE_OPEN, 0);

    if (fd != NGX_INVALID_FILE) {
        n = read(fd, p, 36);

        if (n == 36) {
            p += 36;
            *p++ = ' ';

            n = readlink("/proc/self/ns/pid", (char *) p, last - p);

            if (n > 0 && n < last - p) {
                p += n;
                ok = 1;
            }
        }

        (void) ngx_close_file(fd);
    }

    if (!ok) {
        ngx_log_error(NGX_LOG_WARN, cycle->log, ngx_errno,
                      "agent: no boot id or pid namespace in /proc, a turn "
                      "lock of another nginx is freed by its lease only");

        ngx_http_agent_id_uuid(id);
        p = ngx_cpymem(ngx_http_agent_store_host_data, "random ", 7);
        p = ngx_cpymem(p, id, 36);
    }

    ngx_http_agent_store_host.data = ngx_http_agent_store_host_data;
    ngx_http_agent_store_host.len = p - ngx_http_agent_store_host_data;
}
