/* SPDX-License-Identifier: MIT */
/*
 * common — the base tkd and the C clients share (libtkclient, the JSON
 * codec, tkcall): helpers each side used to carry its own copy of, one
 * copy each. curl's lib/curlx, libgit2's src/util and systemd's
 * src/basic are the models: below everything, knowing nothing above.
 *
 * Owns: the monotonic clock and condition variables timed on it, wiping a
 * secret, error texts, the error-buffer helper, reading a PEM file;
 * growing arrays and byte buffers; protobuf's base-128 varints; UTF-8
 * (checking, decoding, encoding), base64, hex; the default address of
 * tkd. Where one of these differs between systems it holds the fallback
 * (port_config.h, TK_HAVE_*; DESIGN.md, "Platforms"), as service/port/
 * does for what tkd alone needs.
 * May call: libc only (and pthreads).
 * Must never: include a header of tk's (service/, client/, gen/: it is
 * at the bottom, arrows only into it; the arch rule `share`), use NNG,
 * protobuf-c, json-c or any other library, print (the arch rule `print`),
 * or keep state: tkd links it, and so does every program that links
 * libtkclient. tkd and the clients share this folder and nothing else
 * (DESIGN.md, "The shared base").
 *
 * Names: tkc_ ("tk common") for all. Not the folder's name as tkd's
 * modules have it (common_): libtkclient.a carries these functions into
 * its users' programs, where a name as plain as common_grow could meet
 * one of theirs. Not tk_ either, which is libtkclient's public API (the
 * arch rule public-header), nor tk__, its internals. libtkclient.so does
 * not export them (common/meson.build: hidden visibility).
 */
#ifndef TK_COMMON_H
#define TK_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- clocks -------------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds: the clock of every deadline of tk's. */
int64_t tkc_mono_ns(void);

/* A condition variable whose timed waits run to a CLOCK_MONOTONIC time.
 * 0 or an error number (pthread_cond_init's). */
int tkc_cond_init(pthread_cond_t *cv);

/* pthread_cond_timedwait until CLOCK_MONOTONIC reads until_ns: 0 when woken
 * (or spuriously: callers wait in a loop over their condition), ETIMEDOUT
 * when that time has come. */
int tkc_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu,
                        int64_t until_ns);

/* ---- secrets ------------------------------------------------------------- */

/* Sets len bytes at p to zero in a way the compiler keeps (a private key's
 * PEM). */
void tkc_wipe(void *p, size_t len);

/* ---- errors -------------------------------------------------------------- */

/* The C library's text for errno value e ("Too many open files"), in buf
 * (or a constant); thread-safe. Never NULL. */
const char *tkc_strerror(int e, char *buf, size_t len);

/* The message (printf's fmt) in err, cut to errlen bytes with its NUL:
 * every "char *err, size_t errlen" of tk's. Nothing when err is NULL or
 * errlen 0. */
void tkc_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- files --------------------------------------------------------------- */

/* A PEM file whole, NUL-terminated (malloc'd), or NULL with err set
 * ("what path: why"). A certificate chain is a few KiB; a file over 64 KiB
 * is refused. Wipe a key's (tkc_wipe) before it is freed. */
char *tkc_read_pem(const char *what, const char *path, char *err,
                   size_t errlen);

/* ---- the default address ----------------------------------------------- */

/* The address tkd listens on by default and the clients dial: TK_ADDR if
 * set, else ipc://$XDG_RUNTIME_DIR/tk/tkd.sock, else
 * ipc:///tmp/tk-<uid>/tkd.sock, in buf. 0, or -ENAMETOOLONG when it does
 * not fit in len bytes with its NUL. */
int tkc_default_address(char *buf, size_t len);

/* ---- growing memory ------------------------------------------------------ */

/* arr, an array of elem-byte elements with room for *cap of them, with
 * room for need: arr itself when it has it, else reallocated to twice *cap
 * (first when *cap is 0) or more, and *cap updated. NULL when out of
 * memory or past SIZE_MAX (arr then stays valid and *cap unchanged). */
void *tkc_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

/* A growable byte buffer; all zero is empty. data is malloc'd and, once
 * anything is appended, holds a NUL after its len bytes. */
typedef struct tkc_buf {
    char *data;
    size_t len, cap;
} tkc_buf;
#define TKC_BUF_FIRST 256
/* Room for len bytes and a NUL after them. 0 or -ENOMEM. */
int tkc_buf_reserve(tkc_buf *b, size_t len);
/* Appends len bytes (and keeps the NUL after them). 0 or -ENOMEM (b is then
 * unchanged). */
int tkc_buf_append(tkc_buf *b, const void *data, size_t len);
/* Frees what b holds and leaves it empty; b itself is the caller's. */
void tkc_buf_fini(tkc_buf *b);

/* ---- text ---------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at text (n > 0 bytes there), its
 * code point in *cp (NULL: not wanted), or 0. RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF. */
size_t tkc_utf8_seq(const char *text, size_t n, uint32_t *cp);
/* Whether text[0..len) is UTF-8 (as tkc_utf8_seq has it): what proto3
 * requires of a string. */
bool tkc_utf8_valid(const char *text, size_t len);
/* The length of the longest prefix of the NUL-terminated text, at most max
 * bytes, that does not end inside a UTF-8 sequence: "%.*s" that never cuts
 * a character in two. */
int tkc_utf8_prefix(const char *text, size_t max);
/* Code point cp (at most U+10FFFF) as UTF-8 in out; returns its length,
 * 1 to 4. */
size_t tkc_utf8_put(char out[4], uint32_t cp);

/* The value of the four hex digits at s (n bytes there, any case) in *out;
 * false when there are fewer or one is not a hex digit. */
bool tkc_hex4(const char *s, size_t n, uint32_t *out);

/* ---- base64 -------------------------------------------------------------- */

/* RFC 4648's standard alphabet, padded, unless flags allow more. */
#define TKC_B64_URL 1u   /* the URL-safe alphabet's - and _ as well */
#define TKC_B64_NOPAD 2u /* padding optional ("aGk" for "aGk=") */

/* in[0..n) as base64 in out, which has room for 4 * ((n + 2) / 3) bytes
 * (no NUL); returns how many it wrote. */
size_t tkc_base64_encode(char *out, const uint8_t *in, size_t n);
/* The bytes in[0..n) decodes to, or SIZE_MAX when its length or padding
 * is not base64's (its characters are tkc_base64_decode's to check). */
size_t tkc_base64_len(const char *in, size_t n, unsigned flags);
/* in[0..n) decoded into out, which has room for tkc_base64_len's bytes:
 * how many it wrote, or SIZE_MAX when in is not base64 (a character
 * outside the alphabets flags allow, a length or padding out of place). */
size_t tkc_base64_decode(uint8_t *out, const char *in, size_t n,
                         unsigned flags);

/* ---- protobuf's varints ------------------------------------------------- */

/* A base-128 varint's size in bytes. */
size_t tkc_varint_len(uint64_t v);
/* Writes v at p; returns the byte after it. */
uint8_t *tkc_put_varint(uint8_t *p, uint64_t v);
/* Reads a varint at *p (before end), *p moved past it; false when the
 * bytes end first or it runs past 64 bits (*p unchanged). */
bool tkc_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

#endif /* TK_COMMON_H */
