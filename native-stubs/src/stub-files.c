/* stub-files: what execd-stub writes and reads on disk - the job's environment file (execd's order, its
 * escaping) and the spool and tmpdir trees - apart from how it runs the job's steps (execd-stub.c). */
#include "stub-files.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The environment, in execd's order: set() replaces a variable in place or appends it. */
static char *vars[8192];
static int nvars;

void set(const char *name, const char *value) {
    size_t len = strlen(name);
    char *v = malloc(len + strlen(value) + 2);
    if (!v) { perror("malloc"); exit(1); }
    sprintf(v, "%s=%s", name, value);
    for (int i = 0; i < nvars; i++) {
        if (strncmp(vars[i], name, len) == 0 && vars[i][len] == '=') {
            free(vars[i]);
            vars[i] = v;
            return;
        }
    }
    if (nvars < (int)(sizeof vars / sizeof *vars)) vars[nvars++] = v;
}

void set_int(const char *name, long value) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", value);
    set(name, buf);
}

/* NAME=value per line; a newline inside a value is written as the two characters \n (var_list_dump_to_file). */
int write_environment(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int i = 0; i < nvars; i++) {
        for (const char *c = vars[i]; *c; c++) {
            if (*c == '\n') fputs("\\n", f);
            else fputc(*c, f);
        }
        fputc('\n', f);
    }
    return fclose(f);
}

/* What the shepherd does with it (sge_set_environment): every line back into the environment. */
int load_environment(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    clearenv();
    static char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq || eq == line) continue;
        *eq = '\0';
        char *value = eq + 1, *w = value;
        for (char *r = value; *r; r++) {
            if (r[0] == '\\' && r[1] == 'n') { *w++ = '\n'; r++; }
            else *w++ = *r;
        }
        *w = '\0';
        setenv(line, value, 1);
    }
    fclose(f);
    return 0;
}

int mkdirs(const char *path, mode_t mode) {
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *c = p + 1; *c; c++) {
        if (*c == '/') {
            *c = '\0';
            if (mkdir(p, 0755) < 0 && errno != EEXIST) return -1;
            *c = '/';
        }
    }
    return mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void remove_tree(const char *path) {
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int copy_file(const char *from, const char *to, mode_t mode) {
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
    char buf[65536];
    ssize_t n;
    int rc = in < 0 || out < 0 ? -1 : 0;
    while (rc == 0 && (n = read(in, buf, sizeof buf)) > 0) {
        if (write(out, buf, (size_t)n) != n) rc = -1;
    }
    if (in >= 0) close(in);
    if (out >= 0 && close(out) < 0) rc = -1;
    return rc;
}
