/* SPDX-License-Identifier: MIT */
/*
 * A REQ peer written by hand: NNG's SP protocol over an ipc (AF_UNIX
 * stream) socket, for tests that need frames an NNG socket will not send
 * when told to, such as the same request twice: what a REQ socket's resend
 * puts on the wire, without its resend timer.
 *
 * The wire, as NNG 1.5.2 speaks it (and later versions alike):
 *   - src/sp/transport/ipc/ipc.c: each side first sends 8 bytes,
 *     00 'S' 'P' 00, its protocol (u16, big-endian), 00 00 (ipc_pipe_start),
 *     and checks the peer's (ipc_pipe_neg_cb); then every message is one
 *     frame: the type byte 1, the length (u64, big-endian), the message's
 *     header and body (ipc_pipe_send_start, ipc_pipe_recv_cb).
 *   - src/sp/protocol/reqrep0/req.c: a request's header is its request id
 *     (u32, big-endian, high bit set; req0_ctx_send); the reply carries the
 *     id back first, and REQ matches it by that id alone (req0_recv_cb).
 *   - src/sp/protocol/reqrep0/rep.c: REP takes the id off the front of the
 *     request's body up to the word with the high bit (rep0_pipe_recv_cb),
 *     and puts it back in front of the reply.
 */
#ifndef TK_TESTS_SPWIRE_H
#define TK_TESTS_SPWIRE_H

#include <stddef.h>
#include <stdint.h>

/* Connects to the ipc socket at path as a REQ peer and exchanges the SP
 * headers (the peer must be REP). Returns the descriptor, or -1. */
int ts_sp_req_open(const char *path, int timeout_ms);

/* Writes one request frame: id (the high bit is set here), then body.
 * Returns 0, or -1. */
int ts_sp_req_send(int fd, uint32_t id, const void *body, size_t len);

/* Reads one reply frame, bounded by timeout_ms: its request id (as on the
 * wire, high bit set) into *id and its body (malloc'ed, the caller frees it)
 * into *body, *len. Returns 0, or -1 (time up, closed, or not a reply frame).
 */
int ts_sp_req_recv(int fd, uint32_t *id, uint8_t **body, size_t *len,
                   int timeout_ms);

#endif
