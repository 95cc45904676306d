/* SPDX-License-Identifier: MIT */
/* Linux only: sysinfo(2), get_nprocs(3); on macOS sysconf(3) or sysctl(3). For
 * tools/apple/check only. */
#error                                                                         \
    "Linux only: <sys/sysinfo.h> is not on macOS: sysinfo(2), get_nprocs(3); on macOS sysconf(3) or sysctl(3)"
