/* SPDX-License-Identifier: MIT */
/* service/port: each difference between the systems, in the build's own
 * choice (the Linux call, or with -Dportable every fallback; the log line
 * says which). The suite as a whole runs over these; this checks each
 * promise of port.h directly. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "port/port.h"
#include "port_config.h"

static bool readable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static bool cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);
    return fl >= 0 && (fl & FD_CLOEXEC);
}

static bool nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK);
}

/* The build says what it chose; -Dportable chose every fallback. */
static void test_build_choice(void **state)
{
    (void)state;
    const char *d = port__test_describe();
    print_message("port: %s\n", d);
    assert_non_null(d);
#if TK_PORTABLE
    /* Every word is a fallback ("no-pipe2 no-eventfd ..."). */
    char *copy = strdup(d);
    char *save = NULL;
    for (char *w = strtok_r(copy, " ", &save); w != NULL;
         w = strtok_r(NULL, " ", &save))
        assert_true(strncmp(w, "no-", 3) == 0);
    free(copy);
#endif
}

static void test_pipe(void **state)
{
    (void)state;
    for (int nb = 0; nb <= 1; nb++) {
        int p[2];
        assert_int_equal(port_pipe(p, nb != 0), 0);
        assert_true(cloexec(p[0]) && cloexec(p[1]));
        assert_int_equal(nonblocking(p[0]), nb != 0);
        assert_int_equal(nonblocking(p[1]), nb != 0);
        assert_int_equal(write(p[1], "x", 1), 1);
        char c;
        assert_int_equal(read(p[0], &c, 1), 1);
        close(p[0]);
        close(p[1]);
    }
}

/* A listening socket and a connection it accepts: both close-on-exec and
 * non-blocking, and accept says -EAGAIN when none waits. */
static void test_socket_accept(void **state)
{
    (void)state;
    int l = port_socket(AF_INET, SOCK_STREAM, 0);
    assert_true(l >= 0);
    assert_true(cloexec(l) && nonblocking(l));
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 4), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
    assert_int_equal(port_accept(l), -EAGAIN);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof a), 0);
    struct pollfd p = { .fd = l, .events = POLLIN };
    assert_int_equal(poll(&p, 1, 10000), 1);
    int s = port_accept(l);
    assert_true(s >= 0);
    assert_true(cloexec(s) && nonblocking(s));
    assert_int_equal(write(c, "x", 1), 1);
    char x;
    p = (struct pollfd){ .fd = s, .events = POLLIN };
    assert_int_equal(poll(&p, 1, 10000), 1);
    assert_int_equal(read(s, &x, 1), 1);
    close(s);
    close(c);
    close(l);
}

static void test_event(void **state)
{
    (void)state;
    port_event e;
    assert_int_equal(port_event_open(&e), 0);
    assert_true(cloexec(e.fd) && cloexec(e.wfd));
    assert_false(readable(e.fd));
    port_event_set(&e);
    assert_true(readable(e.fd));
    port_event_set(&e); /* twice is once */
    port_event_clear(&e);
    assert_false(readable(e.fd));
    port_event_set(&e);
    assert_true(readable(e.fd));
    port_event_close(&e);
    assert_int_equal(e.fd, -1);
    port_event_close(&e); /* closing a closed one does nothing */
}

static void test_sem(void **state)
{
    (void)state;
    port_sem s;
    assert_int_equal(port_sem_open(&s, 3), 0);
    for (int i = 0; i < 3; i++) {
        assert_true(readable(s.fd));
        assert_true(port_sem_trytake(&s));
    }
    assert_false(readable(s.fd));
    assert_false(port_sem_trytake(&s));
    port_sem_give(&s);
    assert_true(readable(s.fd));
    assert_true(port_sem_trytake(&s));
    assert_false(port_sem_trytake(&s));
    port_sem_close(&s);

    /* The largest start, and one above it. */
    assert_int_equal(port_sem_open(&s, PORT_SEM_MAX), 0);
    unsigned n = 0;
    while (port_sem_trytake(&s))
        n++;
    assert_int_equal(n, PORT_SEM_MAX);
    port_sem_close(&s);
    assert_int_equal(port_sem_open(&s, PORT_SEM_MAX + 1), -EINVAL);
}

static int collect(int fd, void *arg)
{
    int *found = arg;
    if (fd == found[0])
        found[1] = 1;
    if (fd == found[2])
        found[3] = 1;
    return 0;
}

static int stop_at_first(int fd, void *arg)
{
    *(int *)arg = fd;
    return 7;
}

static int count_fd(int fd, void *arg)
{
    (void)fd;
    (*(int *)arg)++;
    return 0;
}

/* More inheritable fds than the list's first room (16) and its first
 * doubling: every one is listed. */
static void test_fds_inheritable_many(void **state)
{
    (void)state;
    enum { MANY = 40 };
    int fds[MANY], before = 0, after = 0;
    port_spawn_lock();
    assert_int_equal(port_fds_inheritable(count_fd, &before), 0);
    for (int i = 0; i < MANY; i++)
        assert_true((fds[i] = open("/dev/null", O_RDONLY)) > 2);
    assert_int_equal(port_fds_inheritable(count_fd, &after), 0);
    port_spawn_unlock();
    for (int i = 0; i < MANY; i++)
        close(fds[i]);
    assert_int_equal(after, before + MANY);
}

/* What a child would inherit: the fd without close-on-exec, not the one
 * with it. */
static void test_fds_inheritable(void **state)
{
    (void)state;
    int plain = open("/dev/null", O_RDONLY);
    int flagged = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(plain > 2 && flagged > 2);
    int found[4] = { plain, 0, flagged, 0 };
    port_spawn_lock();
    assert_int_equal(port_fds_inheritable(collect, found), 0);
    int first = -1;
    assert_int_equal(port_fds_inheritable(stop_at_first, &first), 7);
    port_spawn_unlock();
    assert_int_equal(found[1], 1);
    assert_int_equal(found[3], 0);
    assert_true(first > 2 && first <= plain);

    long before = port_fds_open();
    assert_true(before >= 5);
    close(plain);
    assert_int_equal(port_fds_open(), before - 1);
    close(flagged);
}

static void test_signal_names(void **state)
{
    (void)state;
    assert_string_equal(port_signal_name(SIGKILL), "KILL");
    assert_string_equal(port_signal_name(SIGTERM), "TERM");
    assert_string_equal(port_signal_name(SIGSEGV), "SEGV");
    assert_null(port_signal_name(0));
}

/* A burst freed inside the heap (a block kept after it, so that glibc
 * cannot give it back from the top by itself) is free memory the heap
 * says it holds, and the trim gives its pages back. Where there is no
 * malloc_trim, the heap says it cannot tell. Not under a sanitizer,
 * whose allocator is not glibc's. */
static void test_heap(void **state)
{
    (void)state;
    assert_true(port_rss_bytes() > 0 || !TK_HAVE_PROC_SELF_FD);
#if !TK_HAVE_MALLOC_TRIM
    assert_int_equal(port_heap_idle_bytes(), -1);
    port_heap_trim(); /* nothing, and no harm */
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    print_message("heap: a sanitizer's allocator; not checked\n");
#else
    enum { N = 512, SIZE = 64 * 1024 }; /* 32 MiB, each under mmap's size */
    static char *blocks[N];
    for (size_t i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        assert_non_null(blocks[i]);
        memset(blocks[i], 1, SIZE);
    }
    char *fence = malloc(SIZE);
    assert_non_null(fence);
    int64_t idle = port_heap_idle_bytes();
    for (size_t i = 0; i < N; i++)
        free(blocks[i]);
    assert_true(port_heap_idle_bytes() >= idle + (int64_t)N * SIZE / 2);
    int64_t held = port_rss_bytes();
    port_heap_trim();
    int64_t after = port_rss_bytes();
    print_message("heap: resident %lld KiB, %lld KiB after the trim\n",
                  (long long)held / 1024, (long long)after / 1024);
    if (held > 0)
        assert_true(after <= held - (int64_t)N * SIZE / 2);
    free(fence);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_choice),
        cmocka_unit_test(test_pipe),
        cmocka_unit_test(test_socket_accept),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_sem),
        cmocka_unit_test(test_fds_inheritable),
        cmocka_unit_test(test_fds_inheritable_many),
        cmocka_unit_test(test_signal_names),
        cmocka_unit_test(test_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
