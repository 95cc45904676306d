/* SPDX-License-Identifier: MIT */
/* libtkclient's cancellation handles (tk_cancel): made, freed, and
 * fired, which sends tk.v1.Control/Cancel for the call the handle is bound
 * to (wait.c binds it).
 *
 * Owns: tk_cancel_new, _free, _call_id, _fire.
 * May call: wait.c (the Cancel is a call), node.c (references), status.c.
 * Must never: choose a node (a Cancel goes to the call's own); print or
 * log. */
#include <pthread.h>
#include <stdlib.h>

#include <tk/client.h>

#include "client_int.h"
#include "common/common.h"

#include "tk/v1/control.pb-c.h"

int tk_cancel_new(tk_cancel **out)
{
    if (out == NULL)
        return TK_ERR_ARG;
    tk_cancel *c = calloc(1, sizeof *c);
    if (c == NULL)
        return TK_ERR_NOMEM;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    *out = c;
    return TK_OK;
}

void tk_cancel_free(tk_cancel *cancel)
{
    if (cancel == NULL)
        return;
    pthread_mutex_destroy(&cancel->mu);
    pthread_cond_destroy(&cancel->cv);
    free(cancel);
}

uint64_t tk_cancel_call_id(tk_cancel *cancel)
{
    if (cancel == NULL)
        return 0;
    pthread_mutex_lock(&cancel->mu);
    /* The request may be on the wire: wait until the send is decided. */
    while (cancel->state == CS_SENDING)
        pthread_cond_wait(&cancel->cv, &cancel->mu);
    uint64_t id = cancel->state == CS_SENT ? cancel->call_id : 0;
    pthread_mutex_unlock(&cancel->mu);
    return id;
}

/* How long a Cancel may take: it is inline on the server, so this is only
 * the bound for a server that stopped answering. */
#define CANCEL_TIMEOUT_MS 5000u

int tk_cancel_fire(tk_cancel *cancel, int *outcome)
{
    if (cancel == NULL)
        return TK_ERR_ARG;
    pthread_mutex_lock(&cancel->mu);
    cancel->fired = true;
    /* The request may be on the wire: wait until the send is decided. */
    while (cancel->state == CS_SENDING)
        pthread_cond_wait(&cancel->cv, &cancel->mu);
    bool sent = cancel->state == CS_SENT;
    tk_client *client = cancel->client;
    /* The call's own node, kept while the Cancel is on its way, whether or
     * not the call ends meanwhile. */
    node *n = sent ? tk__node_ref(cancel->node) : NULL;
    uint64_t id = cancel->call_id;
    pthread_mutex_unlock(&cancel->mu);
    if (!sent) {
        if (outcome != NULL)
            *outcome = TK_CANCEL_NOT_SENT;
        return TK_OK;
    }
    Tk__V1__CancelRequest req = TK__V1__CANCEL_REQUEST__INIT;
    req.call_id = id;
    uint8_t buf[16];
    size_t len = tk__v1__cancel_request__pack(&req, buf);
    ProtobufCMessage *rep = NULL;
    reply_sink sink = { .desc = &tk__v1__cancel_reply__descriptor,
                        .msg = &rep };
    tk_status st = { 0 };
    tk_call_opts opts = { .timeout_ms = CANCEL_TIMEOUT_MS };
    call_end end;
    int code = tk__call_payload(client, n, "tk.v1.Control/Cancel", buf, len,
                                &sink, &opts, &st, CALL_ASK, &end);
    tk__node_unref(n);
    int rv = TK_OK;
    if (code == TK_OK && rep != NULL) {
        if (outcome != NULL)
            *outcome = (int)((Tk__V1__CancelReply *)rep)->outcome;
        protobuf_c_message_free_unpacked(rep, NULL);
    } else {
        rv = TK_ERR_CONNECT;
    }
    tk_status_clear(&st);
    return rv;
}
