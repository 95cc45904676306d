/* What meson would detect on macOS 12 and later, for tools/apple/check:
 * the port's generated port_config.h (service/port/) as a Mac's meson
 * would write it. The check puts this file first on the include path
 * under the name port_config.h, so that every #include "port_config.h"
 * reads it. Keep it to the names the port's meson.build checks, each 0 or
 * 1 as on macOS (Apple's headers and man pages say which; the comment of
 * tools/apple/prelude.h lists what macOS lacks). Empty until the port
 * lands: the names below are the likely ones, to be replaced by the real
 * ones. */
#ifndef TK_PORT_CONFIG_H
#define TK_PORT_CONFIG_H

/* #define TK_HAVE_PIPE2 0 */
/* #define TK_HAVE_EVENTFD 0 */
/* #define TK_HAVE_O_PATH 0 */
/* #define TK_HAVE_PIDFD_OPEN 0 */
/* #define TK_HAVE_SIGABBREV_NP 0 */
/* #define TK_HAVE_STRERRORDESC_NP 0 */
/* #define TK_HAVE_GNU_STRERROR_R 0 */
/* #define TK_HAVE_GETRANDOM 0 */
/* #define TK_HAVE_GETENTROPY 1 */
/* #define TK_HAVE_EXPLICIT_BZERO 0 */
/* #define TK_HAVE_MEMSET_S 1 */
/* #define TK_HAVE_PTHREAD_CONDATTR_SETCLOCK 0 */
/* #define TK_HAVE_PTHREAD_COND_TIMEDWAIT_RELATIVE_NP 1 */
/* #define TK_HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCLOSEFROM_NP 0 */
/* #define TK_HAVE_POSIX_SPAWN_CLOEXEC_DEFAULT 1 */
/* #define TK_HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDFCHDIR_NP 1 */

#endif
