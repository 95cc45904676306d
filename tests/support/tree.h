/* SPDX-License-Identifier: MIT */
/*
 * Test support: fixture trees on disk (files with any bytes in their names
 * and contents, FIFOs, executable scripts), programs found in PATH, git run
 * in a tree, and a look at /proc for processes left behind. Every helper
 * fails the running cmocka test when the file system refuses.
 */
#ifndef TK_TESTS_TREE_H
#define TK_TESTS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* dir/rel with len bytes of data (rel may hold any byte but NUL and name
 * subdirectories, which are made). */
void tree_write(const char *dir, const char *rel, const void *data, size_t len);
void tree_puts(const char *dir, const char *rel, const char *text);
/* A file of n lines, each line itself followed by '\n'. */
void tree_lines(const char *dir, const char *rel, const char *line, size_t n);
void tree_mkdir(const char *dir, const char *rel);
void tree_mkfifo(const char *dir, const char *rel);
/* An executable /bin/sh script. */
void tree_script(const char *dir, const char *rel, const char *body);
void tree_symlink(const char *target, const char *dir, const char *rel);
void tree_chmod(const char *dir, const char *rel, mode_t mode);

/* The absolute path of name in this process's PATH into out; false when
 * it is not there. */
bool tree_which(const char *name, char *out, size_t len);

/* Runs git -C dir with args (NULL-terminated) and fails the test unless it
 * exits 0. Identity and configuration are the test's own. */
void tree_git(const char *dir, const char *const args[]);

/* Whether a process of ours other than this one has needle in its command
 * line. */
bool tree_process_with_arg(const char *needle);

#endif
