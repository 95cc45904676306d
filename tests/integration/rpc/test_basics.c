/* SPDX-License-Identifier: MIT */
/*
 * The rpc core and libtkclient together, over real ipc sockets (rpc_fx.h):
 * Ping, ListMethods, ListNodes without a fleet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <tk/client.h>

#include "rpc_fx.h"
#include "tk/v1/control.tk.h"

/* ---- tests: basics ------------------------------------------------------- */

static void test_ping(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    Tk__V1__PingRequest req = TK__V1__PING_REQUEST__INIT;
    req.data.data = (uint8_t *)"\x00\xff"
                               "bytes";
    req.data.len = 7;
    Tk__V1__PingReply *rep = NULL;
    tk_status st;
    assert_int_equal(tk_control_ping(fx.client, &req, &rep, NULL, &st), TK_OK);
    assert_true(st.from_server);
    assert_int_equal(rep->data.len, 7);
    assert_memory_equal(rep->data.data,
                        "\x00\xff"
                        "bytes",
                        7);
    assert_string_equal(rep->server_version, "test");
    protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
    tk_status_clear(&st);
    ts_fx_stop(&fx);
}

static const Tk__V1__MethodInfo *find_info(const Tk__V1__ListMethodsReply *rep,
                                           const char *name)
{
    for (size_t i = 0; i < rep->n_methods; i++)
        if (strcmp(rep->methods[i]->name, name) == 0)
            return rep->methods[i];
    return NULL;
}

static void test_list_methods(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    Tk__V1__ListMethodsRequest req = TK__V1__LIST_METHODS_REQUEST__INIT;
    Tk__V1__ListMethodsReply *rep = NULL;
    tk_status st;
    assert_int_equal(tk_control_list_methods(fx.client, &req, &rep, NULL, &st),
                     0);
    const Tk__V1__MethodInfo *w = find_info(rep, WAIT_METHOD);
    assert_non_null(w);
    assert_int_equal(w->kind, TK__V1__METHOD_INFO__KIND__READ);
    assert_int_equal(w->default_timeout_ms, 60000);
    assert_int_equal(w->ceiling_ms, 600000);
    assert_string_equal(w->request_type, "tk.v1.PingRequest");
    const Tk__V1__MethodInfo *sw = find_info(rep, WRITE_METHOD);
    assert_non_null(sw);
    assert_int_equal(sw->kind, TK__V1__METHOD_INFO__KIND__WRITE);
    assert_non_null(find_info(rep, "tk.v1.Control/Cancel"));
    protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
    tk_status_clear(&st);

    req.service = "tk.v1.Control";
    assert_int_equal(tk_control_list_methods(fx.client, &req, &rep, NULL, &st),
                     0);
    assert_int_equal(rep->n_methods, 6);
    assert_non_null(find_info(rep, "tk.v1.Control/CallState"));
    assert_non_null(find_info(rep, "tk.v1.Control/ListNodes"));
    assert_non_null(find_info(rep, "tk.v1.Control/Stats"));
    assert_null(find_info(rep, WAIT_METHOD));
    protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
    tk_status_clear(&st);

    req.service = "tk.v1.Nope";
    assert_int_equal(tk_control_list_methods(fx.client, &req, &rep, NULL, &st),
                     TK_CODE_NOT_FOUND);
    assert_string_equal(st.reason, "UNKNOWN_SERVICE");
    tk_status_clear(&st);
    ts_fx_stop(&fx);
}

/* A server that is no member of a fleet (no membership hook) answers
 * ListNodes OK with no nodes and no self id: its clients keep the one
 * connection they dialed. */
static void test_list_nodes_without_fleet(void **state)
{
    (void)state;
    ts_fx fx;
    fx_start(&fx, NULL);
    Tk__V1__ListNodesRequest req = TK__V1__LIST_NODES_REQUEST__INIT;
    Tk__V1__ListNodesReply *rep = NULL;
    tk_status st;
    assert_int_equal(tk_control_list_nodes(fx.client, &req, &rep, NULL, &st),
                     TK_OK);
    assert_int_equal(rep->n_nodes, 0);
    assert_string_equal(rep->self_id, "");
    protobuf_c_message_free_unpacked((ProtobufCMessage *)rep, NULL);
    tk_status_clear(&st);
    ts_fx_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping),
        cmocka_unit_test(test_list_methods),
        cmocka_unit_test(test_list_nodes_without_fleet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
