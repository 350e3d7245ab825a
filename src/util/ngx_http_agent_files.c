
/*
 * Copyright (C) ngx_http_agent_module authors
 */


#include <ngx_config.h>
#include <ngx_core.h>

#include "ngx_http_agent_util.h"


/*
 * The files the module keeps: the checkpoint database (and SQLite's -wal
 * and -shm beside it), the resources folder and the files in it.  They
 * hold every conversation, so they are the workers' user's alone: files
 * 0600, folders 0700 (at most: the group's and others' bits are cleared,
 * a file an operator made read-only stays read-only).
 *
 * The root master hands them to the workers' user at every start and
 * reload, in folders that user can write in: it never follows a link
 * (O_NOFOLLOW, then fchown and fchmod on what it opened), refuses a link
 * or a file with other hard links, and changes only what is root's or
 * the workers' user's already, so a worker-user process that swaps a file
 * for a link to /etc/shadow gets nothing, and the master refuses to start.
 */


/* NGX_OK, NGX_DECLINED: no such file, NGX_ERROR: refused (logged) */

ngx_int_t
ngx_http_agent_files_give(ngx_log_t *log, u_char *path, ngx_uid_t user,
    ngx_gid_t group, ngx_uint_t dir)
{
    int              fd, flags;
    mode_t           mode;
    ngx_err_t        err;
    const char      *why;
    struct stat      st;

    flags = O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC;
    flags |= dir ? O_DIRECTORY : 0;

    fd = open((char *) path, flags);

    if (fd == -1) {
        err = ngx_errno;

        if (err == NGX_ENOENT) {
            return NGX_DECLINED;
        }

        ngx_log_error(NGX_LOG_EMERG, log, err,
                      "agent: \"%s\" %s", path,
                      err == ELOOP ? "is a symbolic link: refused, the "
                      "module never follows a link it did not make"
                                   : "cannot be opened");
        return NGX_ERROR;
    }

    why = NULL;

    if (fstat(fd, &st) == -1) {
        why = "cannot be read";

    } else if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
        why = dir ? "is not a folder" : "is not a regular file";

    } else if (!dir && st.st_nlink > 1) {
        why = "has other hard links: refused";

    } else if (st.st_uid != 0 && st.st_uid != user) {
        why = "belongs to another user: refused, give it to the workers' "
              "user or remove it";
    }

    if (why) {
        ngx_log_error(NGX_LOG_EMERG, log, 0, "agent: \"%s\" %s", path, why);
        (void) close(fd);
        return NGX_ERROR;
    }

    /* never more open than 0600 or 0700; a read-only file stays so */
    mode = st.st_mode & (dir ? 0700 : 0600);

    if ((st.st_mode & 07777) != mode && fchmod(fd, mode) == -1) {
        ngx_log_error(NGX_LOG_EMERG, log, ngx_errno,
                      "agent: fchmod(\"%s\") failed", path);
        (void) close(fd);
        return NGX_ERROR;
    }

    if (geteuid() == 0 && (st.st_uid != user || st.st_gid != group)
        && fchown(fd, user, group) == -1)
    {
        ngx_log_error(NGX_LOG_EMERG, log, ngx_errno,
                      "agent: fchown(\"%s\") failed", path);
        (void) close(fd);
        return NGX_ERROR;
    }

    (void) close(fd);

    return NGX_OK;
}


/* a new file of the module's, 0600, never through a link */

ngx_int_t
ngx_http_agent_files_create(ngx_log_t *log, u_char *path)
{
    int  fd;

    fd = open((char *) path, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC,
              0600);

    if (fd == -1) {
        ngx_log_error(NGX_LOG_ERR, log, ngx_errno,
                      "agent: cannot create \"%s\"", path);
        return NGX_ERROR;
    }

    (void) close(fd);

    return NGX_OK;
}
