/* stub-files: execd-stub's environment file and file trees (stub-files.c). */
#ifndef STUB_FILES_H
#define STUB_FILES_H

#include <sys/types.h>

/* The job's environment, in execd's order: set() replaces a variable in place or appends it. */
void set(const char *name, const char *value);
void set_int(const char *name, long value);
/* NAME=value per line, a newline in a value written as \n (var_list_dump_to_file); 0 or -1. */
int write_environment(const char *path);
/* Every line of the file back into the process's environment (sge_set_environment); 0 or -1. */
int load_environment(const char *path);
/* mkdir -p with `mode`; 0 or -1. */
int mkdirs(const char *path, mode_t mode);
/* rm -rf, best effort. */
void remove_tree(const char *path);
/* A copy of `from` at `to` with `mode`; 0 or -1. */
int copy_file(const char *from, const char *to, mode_t mode);

#endif
