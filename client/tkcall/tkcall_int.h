/* tkcall's parts, each in a file of its own: describe.c prints schemas,
 * names.c reads the names people type, paths.c the paths. Internal to
 * client/tkcall/. */
#ifndef TK_TKCALL_INT_H
#define TK_TKCALL_INT_H

#include <stdbool.h>
#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

#include "tk/v1/control.pb-c.h"

/* describe.c: a message or an enum as a .proto would declare it. */
void describe_message(FILE *out, const ProtobufCMessageDescriptor *m);
void describe_enum(FILE *out, const ProtobufCEnumDescriptor *e);
/* A service of the catalog: its methods, each with its comment. */
void describe_service(FILE *out, const char *service);
/* The comment proto/ has for full_name, as "// " lines; nothing if none. */
void describe_comment(FILE *out, const char *full_name);

/* names.c: typed matched against full names (no two alike), as
 * "tk.v1.Control/Ping", grpcurl's "tk.v1.Control.Ping", "Control/Ping" or
 * any other tail of whole parts ("ping"), without case. */
typedef enum names_verdict {
    NAMES_FOUND,     /* name is the one match */
    NAMES_AMBIGUOUS, /* name and other are two of n_matches */
    NAMES_NONE,      /* name is the closest one, or NULL: none is close */
} names_verdict;

typedef struct names_result {
    names_verdict verdict;
    const char *name;
    const char *other;
    size_t n_matches;
} names_result;

void names_resolve(names_result *out, const char *typed,
                   const char *const *names, size_t n);

/* Full names to resolve against, each once, copied. */
typedef struct namelist {
    char **v;
    size_t n, cap;
} namelist;

enum {
    NAMES_METHODS = 1,
    NAMES_SERVICES = 2,
    NAMES_MESSAGES = 4,
    NAMES_ENUMS = 8,
};

/* Add the catalog's, or those tkd serves (methods and services only);
 * false: out of memory. */
bool names_add_catalog(namelist *l, unsigned what);
bool names_add_served(namelist *l, const Tk__V1__ListMethodsReply *list,
                      unsigned what);
void names_free(namelist *l);

/* paths.c: every path field of m (option (tk.v1.path)), in the messages
 * inside it too, that holds a relative path, made absolute against cwd.
 * 0, or -1: out of memory, or a relative path and cwd NULL (unknown). */
int paths_make_absolute(ProtobufCMessage *m, const char *cwd);

#endif /* TK_TKCALL_INT_H */
