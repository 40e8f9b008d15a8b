/* rsmap-trust: whether the server on a connected socket may be believed (rsmap_check_server): the kernel's
 * word on its uid against root and the installed configuration's daemon_user (docs/isolation.md). */
#include "rsmap-client.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole of a regular file's text (no deadline: a local file of root's). */
static int read_whole(int fd, char *p, size_t len) {
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

enum { CONF_MAX = 16 << 20 };

/* Java's String.strip() for ASCII, as rsmapd trims keys and values. */
static int blank(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* daemon_user of the text of rsmapd.conf, read as rsmapd reads it (rsmap.daemon.Config, rsmap.Continuation):
 * first every backslash-newline is removed (also inside a comment: the next line is then comment too, and
 * a `daemon_user =` inside a continued complex_values is a value, not a setting), then per line `#` starts
 * a comment and `key = value` is trimmed, the key in any case. 1 with the value in user, 0 when not set,
 * -1 when set twice or empty (rsmapd would refuse that file: so do we). */
static int find_daemon_user(char *text, size_t len, char *user, size_t ucap) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (text[i] == '\\' && i + 1 < len && text[i + 1] == '\n') i += 2;
        else if (text[i] == '\\' && i + 2 < len && text[i + 1] == '\r' && text[i + 2] == '\n') i += 3;
        else text[o++] = text[i++];
    }
    int found = 0;
    for (size_t start = 0; start < o;) {
        size_t end = start;
        while (end < o && text[end] != '\n') end++;
        size_t stop = start;
        while (stop < end && text[stop] != '#') stop++;
        size_t eq = start;
        while (eq < stop && text[eq] != '=') eq++;
        if (eq < stop) {
            size_t k0 = start, k1 = eq, v0 = eq + 1, v1 = stop;
            while (k0 < k1 && blank(text[k0])) k0++;
            while (k1 > k0 && blank(text[k1 - 1])) k1--;
            while (v0 < v1 && blank(text[v0])) v0++;
            while (v1 > v0 && blank(text[v1 - 1])) v1--;
            if (k1 - k0 == 11 && strncasecmp(text + k0, "daemon_user", 11) == 0) {
                if (found || v1 == v0 || v1 - v0 >= ucap || memchr(text + v0, '\0', v1 - v0)) return -1;
                memcpy(user, text + v0, v1 - v0);
                user[v1 - v0] = '\0';
                found = 1;
            }
        }
        start = end + 1;
    }
    return found;
}

/* The installed configuration's daemon_user: 1 (user set, "root" by default), 0 when conf does not exist,
 * -1 with the reason in why when it cannot be believed: only a regular file of root's that nobody else may
 * write can say who serves root's hooks. fstat on the open file: what is checked is what is read. */
static int daemon_user(const char *conf, char *user, size_t ucap, char *why, size_t cap) {
    int fd = open(conf, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK); /* O_NONBLOCK: a FIFO must not hang us */
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, cap, "cannot read %s (%s), which says who may serve", conf, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *bad = NULL;
    if (fstat(fd, &st) < 0) bad = strerror(errno);
    else if (!S_ISREG(st.st_mode)) bad = "it is not a regular file";
    else if (st.st_uid != 0) bad = "it is not owned by root";
    else if (st.st_mode & (S_IWGRP | S_IWOTH)) bad = "it is writable by group or others";
    else if (st.st_size > CONF_MAX) bad = "it is larger than 16 MiB";
    char *text = bad ? NULL : malloc((size_t)st.st_size + 1);
    if (!bad && (!text || read_whole(fd, text, (size_t)st.st_size) < 0)) bad = "it cannot be read whole";
    close(fd);
    int r = bad ? -1 : find_daemon_user(text, (size_t)st.st_size, user, ucap);
    free(text);
    if (bad) {
        snprintf(why, cap, "%s cannot say who may serve: %s", conf, bad);
        return -1;
    }
    if (r < 0) {
        snprintf(why, cap, "%s sets daemon_user twice, empty or too long", conf);
        return -1;
    }
    if (r == 0) snprintf(user, ucap, "root");
    return 1;
}

/* The uid of a user of /etc/passwd. Not getpwnam: rsmap-hook is static, and NSS modules loaded into a static
 * binary crash it (glibc's warning); the daemon's user is a local system account. 0 or -1. */
static int passwd_uid(const char *name, uid_t *uid) {
    FILE *f = fopen("/etc/passwd", "re");
    if (!f) return -1;
    struct passwd pw, *p;
    char buf[16384];
    int r = -1;
    while (fgetpwent_r(f, &pw, buf, sizeof buf, &p) == 0) {
        if (!strcmp(p->pw_name, name)) {
            *uid = p->pw_uid;
            r = 0;
            break;
        }
    }
    fclose(f);
    return r;
}

int rsmap_check_server(int fd, const char *socket, const char *conf, char *why, size_t cap) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    char user[256], reason[1024];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof cred) {
        snprintf(why, cap, "not trusting the server at %s: the kernel does not say who it is (%s)", socket,
                 strerror(errno));
        errno = EPERM;
        return -1;
    }
    if (cred.uid == 0) return 0; /* rsmapd runs as root (packaging's unit) */
    int installed = daemon_user(conf, user, sizeof user, reason, sizeof reason);
    uid_t trusted;
    if (installed < 0) {
        snprintf(why, cap, "not trusting the server at %s (uid %u): %s", socket, (unsigned)cred.uid, reason);
    } else if (installed == 0) {
        /* No installed rsmapd: whoever runs the tour as one user runs its daemon too. A job's owner on a real
         * host cannot use this: there the packages install the configuration. */
        if (cred.uid == getuid()) return 0;
        snprintf(why, cap, "not trusting the server at %s: it runs as uid %u, not as root or as this process's "
                 "user (uid %u; no %s installed)", socket, (unsigned)cred.uid, (unsigned)getuid(), conf);
    } else if (strcmp(user, "root") != 0 && passwd_uid(user, &trusted) < 0) {
        snprintf(why, cap, "not trusting the server at %s (uid %u): daemon_user '%s' of %s is not in /etc/passwd",
                 socket, (unsigned)cred.uid, user, conf);
    } else if (strcmp(user, "root") != 0 && trusted == cred.uid) {
        return 0;
    } else {
        snprintf(why, cap, "not trusting the server at %s: it runs as uid %u, not as root or daemon_user '%s' of %s",
                 socket, (unsigned)cred.uid, user, conf);
    }
    errno = EPERM;
    return -1;
}

