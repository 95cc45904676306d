/* SPDX-License-Identifier: MIT */
/* macOS's <sys/event.h>, the part tk uses: kqueue(2) and kevent(2), the
 * struct kevent, EV_SET, the filters, the actions and flags, and the
 * EVFILT_PROC notes (tests/support/support.c waits for a process's exit on
 * EVFILT_PROC / NOTE_EXIT where there is no pidfd). Declared as Apple does
 * (kqueue(2): "int kqueue(void); int kevent(int kq, const struct kevent
 * *changelist, int nchanges, struct kevent *eventlist, int nevents, const
 * struct timespec *timeout);"; the values as in XNU's bsd/sys/event.h,
 * which packs struct kevent to 4 bytes). glibc has no such header. For
 * tools/apple/check only. */
#ifndef TK_APPLE_SYS_EVENT_H
#define TK_APPLE_SYS_EVENT_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Filters. */
#define EVFILT_READ (-1)
#define EVFILT_WRITE (-2)
#define EVFILT_AIO (-3)
#define EVFILT_VNODE (-4)
#define EVFILT_PROC (-5)
#define EVFILT_SIGNAL (-6)
#define EVFILT_TIMER (-7)
#define EVFILT_MACHPORT (-8)
#define EVFILT_FS (-9)
#define EVFILT_USER (-10)
#define EVFILT_VM (-12)
#define EVFILT_EXCEPT (-15)

#pragma pack(4)
struct kevent {
    uintptr_t ident; /* identifier for this event */
    int16_t filter;  /* filter for event */
    uint16_t flags;  /* general flags */
    uint32_t fflags; /* filter-specific flags */
    intptr_t data;   /* filter-specific data */
    void *udata;     /* opaque user data identifier */
};
#pragma pack()

#define EV_SET(kevp, a, b, c, d, e, f)                                         \
    do {                                                                       \
        struct kevent *kevp_ = (kevp);                                         \
        kevp_->ident = (a);                                                    \
        kevp_->filter = (b);                                                   \
        kevp_->flags = (c);                                                    \
        kevp_->fflags = (d);                                                   \
        kevp_->data = (e);                                                     \
        kevp_->udata = (f);                                                    \
    } while (0)

/* Actions. */
#define EV_ADD 0x0001
#define EV_DELETE 0x0002
#define EV_ENABLE 0x0004
#define EV_DISABLE 0x0008
/* Flags. */
#define EV_ONESHOT 0x0010
#define EV_CLEAR 0x0020
#define EV_RECEIPT 0x0040
#define EV_DISPATCH 0x0080
/* Returned. */
#define EV_ERROR 0x4000
#define EV_EOF 0x8000

/* EVFILT_PROC's notes. */
#define NOTE_EXIT 0x80000000
#define NOTE_FORK 0x40000000
#define NOTE_EXEC 0x20000000
#define NOTE_SIGNAL 0x08000000
#define NOTE_EXITSTATUS 0x04000000
#define NOTE_EXIT_DETAIL 0x02000000
#define NOTE_PDATAMASK 0x000fffff

/* EVFILT_USER's. */
#define NOTE_TRIGGER 0x01000000

int kqueue(void);
int kevent(int kq, const struct kevent *changelist, int nchanges,
           struct kevent *eventlist, int nevents,
           const struct timespec *timeout);

#endif
