/* SPDX-License-Identifier: MIT */
/* Linux only: getmntent(3); macOS has getmntinfo(3). For tools/apple/check
 * only. */
#error                                                                         \
    "Linux only: <mntent.h> is not on macOS: getmntent(3); macOS has getmntinfo(3)"
