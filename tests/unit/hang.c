/* SPDX-License-Identifier: MIT */
/* hang: a program that hangs on purpose, for the watchdog's own test
 * (tests/unit/test_watchdog.py). Its main thread sleeps for ever in
 * hang_main_sleeps (nanosleep), a second thread waits for ever in
 * hang_thread_waits (pthread_cond_wait), and a child process pauses for
 * ever in hang_child_pauses: the names the watchdog's dump must show.
 * Prints "ready CHILD_PID" on stdout once the thread and the child exist.
 *   hang
 * Built without optimisation, so that every frame is there by its name.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static bool signalled; /* never set: the thread waits for ever */

__attribute__((noinline)) static void *hang_thread_waits(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!signalled)
        pthread_cond_wait(&never, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

__attribute__((noinline)) static void hang_child_pauses(void)
{
    for (;;)
        pause();
}

__attribute__((noinline)) static void hang_main_sleeps(void)
{
    const struct timespec long_time = { .tv_sec = 1000 };
    for (;;)
        nanosleep(&long_time, NULL);
}

int main(void)
{
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        hang_child_pauses();
        return 0;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, hang_thread_waits, NULL) != 0)
        return 1;
    if (printf("ready %d\n", (int)child) < 0 || fflush(stdout) != 0)
        return 1;
    hang_main_sleeps();
    return 0;
}
