/* SPDX-License-Identifier: MIT */
/* Signal names, and what this build chose. */
#include <signal.h>
#include <string.h>

#include "port_config.h"

#include "port.h"

#if !TK_HAVE_SIGABBREV_NP
/* POSIX's signals, and those of Linux and macOS that have a name. */
static const struct {
    int sig;
    const char *name;
} signal_names[] = {
#define NAME(s)                                                                \
    {                                                                          \
        SIG##s, #s                                                             \
    }
    NAME(HUP),    NAME(INT),  NAME(QUIT),  NAME(ILL),  NAME(TRAP), NAME(ABRT),
    NAME(BUS),    NAME(FPE),  NAME(KILL),  NAME(USR1), NAME(SEGV), NAME(USR2),
    NAME(PIPE),   NAME(ALRM), NAME(TERM),  NAME(CHLD), NAME(CONT), NAME(STOP),
    NAME(TSTP),   NAME(TTIN), NAME(TTOU),  NAME(URG),  NAME(XCPU), NAME(XFSZ),
    NAME(VTALRM), NAME(PROF), NAME(WINCH), NAME(SYS),
#ifdef SIGIO
    NAME(IO),
#endif
#ifdef SIGSTKFLT
    NAME(STKFLT),
#endif
#ifdef SIGPWR
    NAME(PWR),
#endif
#ifdef SIGEMT
    NAME(EMT),
#endif
#ifdef SIGINFO
    NAME(INFO),
#endif
#undef NAME
};
#endif

const char *port_signal_name(int sig)
{
#if TK_HAVE_SIGABBREV_NP
    return sigabbrev_np(sig);
#else
    for (size_t i = 0; i < sizeof signal_names / sizeof *signal_names; i++)
        if (signal_names[i].sig == sig)
            return signal_names[i].name;
    return NULL;
#endif
}

const char *port__test_describe(void)
{
    return TK_PORT_DESCRIPTION;
}
