import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/orders.proto.
 */
export declare const file_tk_v1_orders: GenFile;
/**
 * @generated from message tk.v1.CreateOrderRequest
 */
export type CreateOrderRequest = Message<"tk.v1.CreateOrderRequest"> & {};
/**
 * Describes the message tk.v1.CreateOrderRequest.
 * Use `create(CreateOrderRequestSchema)` to create a new message.
 */
export declare const CreateOrderRequestSchema: GenMessage<CreateOrderRequest>;
/**
 * @generated from message tk.v1.CreateOrderReply
 */
export type CreateOrderReply = Message<"tk.v1.CreateOrderReply"> & {
    /**
     * @generated from field: int64 id = 1;
     */
    id: bigint;
};
/**
 * Describes the message tk.v1.CreateOrderReply.
 * Use `create(CreateOrderReplySchema)` to create a new message.
 */
export declare const CreateOrderReplySchema: GenMessage<CreateOrderReply>;
/**
 * @generated from message tk.v1.AddItemRequest
 */
export type AddItemRequest = Message<"tk.v1.AddItemRequest"> & {
    /**
     * @generated from field: int64 order_id = 1;
     */
    orderId: bigint;
    /**
     * Not empty, at most 1024 bytes.
     *
     * @generated from field: string sku = 2;
     */
    sku: string;
};
/**
 * Describes the message tk.v1.AddItemRequest.
 * Use `create(AddItemRequestSchema)` to create a new message.
 */
export declare const AddItemRequestSchema: GenMessage<AddItemRequest>;
/**
 * @generated from message tk.v1.AddItemReply
 */
export type AddItemReply = Message<"tk.v1.AddItemReply"> & {
    /**
     * @generated from field: int64 item_id = 1;
     */
    itemId: bigint;
};
/**
 * Describes the message tk.v1.AddItemReply.
 * Use `create(AddItemReplySchema)` to create a new message.
 */
export declare const AddItemReplySchema: GenMessage<AddItemReply>;
/**
 * @generated from message tk.v1.CloseOrderRequest
 */
export type CloseOrderRequest = Message<"tk.v1.CloseOrderRequest"> & {
    /**
     * @generated from field: int64 order_id = 1;
     */
    orderId: bigint;
};
/**
 * Describes the message tk.v1.CloseOrderRequest.
 * Use `create(CloseOrderRequestSchema)` to create a new message.
 */
export declare const CloseOrderRequestSchema: GenMessage<CloseOrderRequest>;
/**
 * @generated from message tk.v1.CloseOrderReply
 */
export type CloseOrderReply = Message<"tk.v1.CloseOrderReply"> & {
    /**
     * @generated from field: tk.v1.CloseOrderReply.Outcome outcome = 1;
     */
    outcome: CloseOrderReply_Outcome;
};
/**
 * Describes the message tk.v1.CloseOrderReply.
 * Use `create(CloseOrderReplySchema)` to create a new message.
 */
export declare const CloseOrderReplySchema: GenMessage<CloseOrderReply>;
/**
 * @generated from enum tk.v1.CloseOrderReply.Outcome
 */
export declare enum CloseOrderReply_Outcome {
    /**
     * @generated from enum value: OUTCOME_UNSPECIFIED = 0;
     */
    OUTCOME_UNSPECIFIED = 0,
    /**
     * This call closed the order.
     *
     * @generated from enum value: CLOSED = 1;
     */
    CLOSED = 1,
    /**
     * The order was closed already; nothing changed.
     *
     * @generated from enum value: ALREADY_CLOSED = 2;
     */
    ALREADY_CLOSED = 2
}
/**
 * Describes the enum tk.v1.CloseOrderReply.Outcome.
 */
export declare const CloseOrderReply_OutcomeSchema: GenEnum<CloseOrderReply_Outcome>;
/**
 * @generated from message tk.v1.ReopenOrderRequest
 */
export type ReopenOrderRequest = Message<"tk.v1.ReopenOrderRequest"> & {
    /**
     * @generated from field: int64 order_id = 1;
     */
    orderId: bigint;
};
/**
 * Describes the message tk.v1.ReopenOrderRequest.
 * Use `create(ReopenOrderRequestSchema)` to create a new message.
 */
export declare const ReopenOrderRequestSchema: GenMessage<ReopenOrderRequest>;
/**
 * @generated from message tk.v1.ReopenOrderReply
 */
export type ReopenOrderReply = Message<"tk.v1.ReopenOrderReply"> & {
    /**
     * @generated from field: tk.v1.ReopenOrderReply.Outcome outcome = 1;
     */
    outcome: ReopenOrderReply_Outcome;
};
/**
 * Describes the message tk.v1.ReopenOrderReply.
 * Use `create(ReopenOrderReplySchema)` to create a new message.
 */
export declare const ReopenOrderReplySchema: GenMessage<ReopenOrderReply>;
/**
 * @generated from enum tk.v1.ReopenOrderReply.Outcome
 */
export declare enum ReopenOrderReply_Outcome {
    /**
     * @generated from enum value: OUTCOME_UNSPECIFIED = 0;
     */
    OUTCOME_UNSPECIFIED = 0,
    /**
     * This call reopened the order.
     *
     * @generated from enum value: REOPENED = 1;
     */
    REOPENED = 1,
    /**
     * The order was open already; nothing changed.
     *
     * @generated from enum value: ALREADY_OPEN = 2;
     */
    ALREADY_OPEN = 2
}
/**
 * Describes the enum tk.v1.ReopenOrderReply.Outcome.
 */
export declare const ReopenOrderReply_OutcomeSchema: GenEnum<ReopenOrderReply_Outcome>;
/**
 * @generated from message tk.v1.GetOrderRequest
 */
export type GetOrderRequest = Message<"tk.v1.GetOrderRequest"> & {
    /**
     * @generated from field: int64 order_id = 1;
     */
    orderId: bigint;
};
/**
 * Describes the message tk.v1.GetOrderRequest.
 * Use `create(GetOrderRequestSchema)` to create a new message.
 */
export declare const GetOrderRequestSchema: GenMessage<GetOrderRequest>;
/**
 * @generated from message tk.v1.GetOrderReply
 */
export type GetOrderReply = Message<"tk.v1.GetOrderReply"> & {
    /**
     * @generated from field: tk.v1.GetOrderReply.Status status = 1;
     */
    status: GetOrderReply_Status;
    /**
     * RFC 3339 in UTC with milliseconds ("2026-01-02T03:04:05.678Z"); empty
     * while the order is open.
     *
     * @generated from field: string closed_at = 2;
     */
    closedAt: string;
    /**
     * @generated from field: uint64 item_count = 3;
     */
    itemCount: bigint;
};
/**
 * Describes the message tk.v1.GetOrderReply.
 * Use `create(GetOrderReplySchema)` to create a new message.
 */
export declare const GetOrderReplySchema: GenMessage<GetOrderReply>;
/**
 * @generated from enum tk.v1.GetOrderReply.Status
 */
export declare enum GetOrderReply_Status {
    /**
     * @generated from enum value: STATUS_UNSPECIFIED = 0;
     */
    STATUS_UNSPECIFIED = 0,
    /**
     * @generated from enum value: OPEN = 1;
     */
    OPEN = 1,
    /**
     * @generated from enum value: CLOSED = 2;
     */
    CLOSED = 2
}
/**
 * Describes the enum tk.v1.GetOrderReply.Status.
 */
export declare const GetOrderReply_StatusSchema: GenEnum<GetOrderReply_Status>;
/**
 * @generated from service tk.v1.Orders
 */
export declare const Orders: GenService<{
    /**
     * A new open order.
     *
     * @generated from rpc tk.v1.Orders.CreateOrder
     */
    createOrder: {
        methodKind: "unary";
        input: typeof CreateOrderRequestSchema;
        output: typeof CreateOrderReplySchema;
    };
    /**
     * Adds an item to an open order. A closed order is refused
     * (FAILED_PRECONDITION, ORDER_CLOSED) by the insert itself; it never waits
     * for a transition in flight on the same order.
     *
     * @generated from rpc tk.v1.Orders.AddItem
     */
    addItem: {
        methodKind: "unary";
        input: typeof AddItemRequestSchema;
        output: typeof AddItemReplySchema;
    };
    /**
     * open → closed. Idempotent: closing a closed order says ALREADY_CLOSED.
     *
     * @generated from rpc tk.v1.Orders.CloseOrder
     */
    closeOrder: {
        methodKind: "unary";
        input: typeof CloseOrderRequestSchema;
        output: typeof CloseOrderReplySchema;
    };
    /**
     * closed → open, under the same lock as CloseOrder.
     *
     * @generated from rpc tk.v1.Orders.ReopenOrder
     */
    reopenOrder: {
        methodKind: "unary";
        input: typeof ReopenOrderRequestSchema;
        output: typeof ReopenOrderReplySchema;
    };
    /**
     * The order's status, when it was closed and how many items it has.
     *
     * @generated from rpc tk.v1.Orders.GetOrder
     */
    getOrder: {
        methodKind: "unary";
        input: typeof GetOrderRequestSchema;
        output: typeof GetOrderReplySchema;
    };
}>;
