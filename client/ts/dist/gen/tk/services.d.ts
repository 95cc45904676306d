export declare const services: {
    /**
     * tk.v1.Control: the service of tk/v1/control.proto.
     */
    readonly control: {
        /**
         * tk.v1.Control/Ping: READ (timeout 5 s by default, 60 s at most). Echoes
         * `data`; says which tkd answered and for how long it has run. Answered on
         * receipt, even when every worker is busy: it tells "tkd is alive" apart
         * from "tkd is saturated".
         */
        readonly ping: {
            readonly method: "tk.v1.Control/Ping";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").PingRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").PingReply>;
        };
        /**
         * tk.v1.Control/Cancel: READ (timeout 5 s by default, 60 s at most).
         * Cancels a call of the same connection. Calls of other connections are
         * never found: a client can cancel only its own calls.
         */
        readonly cancel: {
            readonly method: "tk.v1.Control/Cancel";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").CancelRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").CancelReply>;
        };
        /**
         * tk.v1.Control/CallState: READ (timeout 5 s by default, 60 s at most).
         * Where a call of the same connection stands, without touching it. A
         * client whose deadline has passed with no reply asks this before it gives
         * up, so that a reply tkd is still about to send is waited for.
         */
        readonly callState: {
            readonly method: "tk.v1.Control/CallState";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").CallStateRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").CallStateReply>;
        };
        /**
         * tk.v1.Control/ListMethods: READ (timeout 5 s by default, 60 s at most).
         * Every method tkd serves, with its kind, timeouts and the ceiling of its
         * reply's list.
         */
        readonly listMethods: {
            readonly method: "tk.v1.Control/ListMethods";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").ListMethodsRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").ListMethodsReply>;
        };
        /**
         * tk.v1.Control/ListNodes: READ (timeout 5 s by default, 60 s at most).
         * The live nodes of the fleet this tkd is a member of (tkd --node-id): the
         * membership table in PostgreSQL as this node last read it, nodes whose
         * heartbeat is older than ttl_ms left out. A tkd that is no member answers
         * with no nodes and self_id "": its clients use the address they dialed,
         * as with one tkd. Answered from memory, inline. The table is what the
         * database's writers put there: at most 1024 nodes and 1 MiB of their ids,
         * addresses, versions and roots (partial beyond).
         */
        readonly listNodes: {
            readonly method: "tk.v1.Control/ListNodes";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("@bufbuild/protobuf").Message<"tk.v1.ListNodesRequest">>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").ListNodesReply>;
        };
        /**
         * tk.v1.Control/Stats: READ (timeout 5 s by default, 60 s at most). What
         * tkd has counted since it started: calls by method and status code, their
         * time in the queue and running, the queue, connections, processes, search
         * slots, git reads and the PostgreSQL pool. The same families, names and
         * labels as its Prometheus exposition (tkd --metrics-listen). Inline, as
         * Ping is: it answers when every worker is busy, which is when it is
         * wanted.
         */
        readonly stats: {
            readonly method: "tk.v1.Control/Stats";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("@bufbuild/protobuf").Message<"tk.v1.StatsRequest">>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/control_pb.js").StatsReply>;
        };
    };
    /**
     * tk.v1.Git: the service of tk/v1/git.proto.
     */
    readonly git: {
        /**
         * tk.v1.Git/Status: READ (timeout 30 s by default, 30 s at most). The
         * working tree's state: `git status --porcelain=v2 -z --branch`, parsed.
         * At most 100000 entries (partial beyond); git's output is read up to 16
         * MiB, and a longer one is RESOURCE_EXHAUSTED OUTPUT_TOO_LARGE.
         */
        readonly status: {
            readonly method: "tk.v1.Git/Status";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitStatusRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitStatusReply>;
        };
        /**
         * tk.v1.Git/Log: READ (timeout 30 s by default, 30 s at most). Commits
         * reachable from `rev`, newest first (libgit2, in process). At most 10000
         * commits and 16 MiB of their text (names, emails, subjects, bodies), and
         * at most 2000000 commits walked to find them (shown, skipped, left out by
         * `paths`, or hidden by "A..B"): a reply cut at any of these is partial,
         * save an "A..B" whose A has more ancestors than the walk may visit
         * (RESOURCE_EXHAUSTED LOG_WALK_LIMIT: no answer would be right).
         */
        readonly log: {
            readonly method: "tk.v1.Git/Log";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitLogRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitLogReply>;
        };
        /**
         * tk.v1.Git/Diff: READ (timeout 30 s by default, 30 s at most). A patch
         * and per-file line counts (`git diff --no-ext-diff --no-textconv`). At
         * most 100000 files (partial beyond; the patch stays whole); git's output,
         * the patch included, is read up to 16 MiB, and a longer one is
         * RESOURCE_EXHAUSTED OUTPUT_TOO_LARGE.
         */
        readonly diff: {
            readonly method: "tk.v1.Git/Diff";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitDiffRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitDiffReply>;
        };
        /**
         * tk.v1.Git/RevParse: READ (timeout 30 s by default, 30 s at most). A
         * revision to an object id (libgit2, in process).
         */
        readonly revParse: {
            readonly method: "tk.v1.Git/RevParse";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitRevParseRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitRevParseReply>;
        };
        /**
         * tk.v1.Git/Grep: READ (timeout 30 s by default, 30 s at most). Lines of
         * tracked files that contain a literal string (`git grep -F`). At most
         * 100000 matches (10000 by default) and 32 MiB of their paths and text (a
         * line is cut at 64 KiB); partial beyond.
         */
        readonly grep: {
            readonly method: "tk.v1.Git/Grep";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitGrepRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitGrepReply>;
        };
        /**
         * tk.v1.Git/Commit: WRITE (its own timeout: 60 s). Stages `paths` (or
         * every tracked change) and commits.
         */
        readonly commit: {
            readonly method: "tk.v1.Git/Commit";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitCommitRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitCommitReply>;
        };
        /**
         * tk.v1.Git/Checkout: WRITE (its own timeout: 60 s). Switches the working
         * tree to a branch or a revision.
         */
        readonly checkout: {
            readonly method: "tk.v1.Git/Checkout";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitCheckoutRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitCheckoutReply>;
        };
        /**
         * tk.v1.Git/WorktreeAdd: WRITE (its own timeout: 60 s). Adds a linked
         * working tree (`git worktree add`).
         */
        readonly worktreeAdd: {
            readonly method: "tk.v1.Git/WorktreeAdd";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitWorktreeAddRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitWorktreeAddReply>;
        };
        /**
         * tk.v1.Git/WorktreeRemove: WRITE (its own timeout: 60 s). Removes a
         * linked working tree of `repo` (`git worktree remove`): never the main
         * one, nor a path that is no worktree of that repository (INVALID_ARGUMENT
         * NOT_A_LINKED_WORKTREE, before git runs). One with changes or untracked
         * files is FAILED_PRECONDITION WORKTREE_DIRTY unless `force`; a locked one
         * is WORKTREE_LOCKED (its lock is its owner's to lift).
         */
        readonly worktreeRemove: {
            readonly method: "tk.v1.Git/WorktreeRemove";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitWorktreeRemoveRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("@bufbuild/protobuf").Message<"tk.v1.GitWorktreeRemoveReply">>;
        };
        /**
         * tk.v1.Git/ConfigSet: WRITE (its own timeout: 60 s). Sets a key in the
         * repository's own config (never global or system); only keys of an
         * allowlist (identity, branch tracking, line endings: docs/git.md), others
         * are PERMISSION_DENIED CONFIG_KEY_NOT_ALLOWED before git runs.
         */
        readonly configSet: {
            readonly method: "tk.v1.Git/ConfigSet";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitConfigSetRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("@bufbuild/protobuf").Message<"tk.v1.GitConfigSetReply">>;
        };
        /**
         * tk.v1.Git/ConfigGet: READ (timeout 30 s by default, 30 s at most). Reads
         * a key of the repository's own config, the file ConfigSet writes and what
         * it includes (never global or system; libgit2, in process: no program
         * runs). Only the keys ConfigSet may set, refused as ConfigSet refuses
         * them (INVALID_ARGUMENT BAD_CONFIG_KEY, PERMISSION_DENIED
         * CONFIG_KEY_NOT_ALLOWED); a key the config does not set is NOT_FOUND
         * CONFIG_KEY_NOT_SET. A key set more than once answers its last value, as
         * `git config --get` does.
         */
        readonly configGet: {
            readonly method: "tk.v1.Git/ConfigGet";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitConfigGetRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/git_pb.js").GitConfigGetReply>;
        };
    };
    /**
     * tk.v1.Orders: the service of tk/v1/orders.proto.
     */
    readonly orders: {
        /**
         * tk.v1.Orders/CreateOrder: READ (timeout 5 s by default, 60 s at most). A
         * new open order.
         */
        readonly createOrder: {
            readonly method: "tk.v1.Orders/CreateOrder";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("@bufbuild/protobuf").Message<"tk.v1.CreateOrderRequest">>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").CreateOrderReply>;
        };
        /**
         * tk.v1.Orders/AddItem: READ (timeout 5 s by default, 60 s at most). Adds
         * an item to an open order. A closed order is refused
         * (FAILED_PRECONDITION, ORDER_CLOSED) by the insert itself; it never waits
         * for a transition in flight on the same order.
         */
        readonly addItem: {
            readonly method: "tk.v1.Orders/AddItem";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").AddItemRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").AddItemReply>;
        };
        /**
         * tk.v1.Orders/CloseOrder: READ (timeout 5 s by default, 60 s at most).
         * open → closed. Idempotent: closing a closed order says ALREADY_CLOSED.
         */
        readonly closeOrder: {
            readonly method: "tk.v1.Orders/CloseOrder";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").CloseOrderRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").CloseOrderReply>;
        };
        /**
         * tk.v1.Orders/ReopenOrder: READ (timeout 5 s by default, 60 s at most).
         * closed → open, under the same lock as CloseOrder.
         */
        readonly reopenOrder: {
            readonly method: "tk.v1.Orders/ReopenOrder";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").ReopenOrderRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").ReopenOrderReply>;
        };
        /**
         * tk.v1.Orders/GetOrder: READ (timeout 5 s by default, 60 s at most). The
         * order's status, when it was closed and how many items it has.
         */
        readonly getOrder: {
            readonly method: "tk.v1.Orders/GetOrder";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").GetOrderRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/orders_pb.js").GetOrderReply>;
        };
    };
    /**
     * tk.v1.Search: the service of tk/v1/search.proto.
     */
    readonly search: {
        /**
         * tk.v1.Search/Search: READ (timeout 30 s by default, 30 s at most). Every
         * line of the files under `root` that contains `query`, as the search tool
         * reports it. It follows its caller (cancel and deadline end it, and it
         * then answers CANCELLED or DEADLINE_EXCEEDED, never an empty list), and
         * no search runs past the method's ceiling. Reaching `limit` is a success
         * with partial results (Status.partial, cause LIMIT). At most a few
         * searches run at once (tkd --search-slots); the others wait, and a caller
         * that gives up while waiting never starts a tool.
         */
        readonly search: {
            readonly method: "tk.v1.Search/Search";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/search_pb.js").SearchRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/search_pb.js").SearchReply>;
        };
    };
    /**
     * tk.v1.Services: the service of tk/v1/services.proto.
     */
    readonly services: {
        /**
         * tk.v1.Services/Render: READ (timeout 5 s by default, 30 s at most). The
         * exact text Register would install for a spec, and where. The spec is
         * checked as Register checks it (the same INVALID_ARGUMENT reasons;
         * spec.program must exist on tkd's machine and be executable); what is
         * installed is not read, and nothing is changed.
         */
        readonly render: {
            readonly method: "tk.v1.Services/Render";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceRenderRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceRenderReply>;
        };
        /**
         * tk.v1.Services/Register: WRITE (its own timeout: 120 s). Renders,
         * compares with what is installed, and only on a difference installs
         * atomically and (re)loads the service. Calls for one label run one after
         * the other; different labels run in parallel. launchd (domain gui/<uid>,
         * or user/<uid> when there is no GUI session): plutil -lint (where plutil
         * exists), bootout, wait until `launchctl print` no longer shows the label
         * (every 200 ms, up to 10 s), enable, bootstrap: at most 6 attempts with a
         * linear backoff, retried only on "Input/output error"; any other failure
         * fails at once, and the error carries launchctl's last output. systemd:
         * the unit file, daemon-reload, enable, restart; a warning when lingering
         * is off (the unit then stops at logout).
         */
        readonly register: {
            readonly method: "tk.v1.Services/Register";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceRegisterRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceRegisterReply>;
        };
        /**
         * tk.v1.Services/Unregister: WRITE (its own timeout: 120 s). Unloads
         * (bootout and wait; or stop and disable) and removes the definition.
         * Unregistering what is not installed is no error.
         */
        readonly unregister: {
            readonly method: "tk.v1.Services/Unregister";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceUnregisterRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceUnregisterReply>;
        };
        /**
         * tk.v1.Services/Status: READ (timeout 10 s by default, 60 s at most).
         * What is installed and what the service manager has loaded.
         */
        readonly status: {
            readonly method: "tk.v1.Services/Status";
            readonly input: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceStatusRequest>;
            readonly output: import("@bufbuild/protobuf/codegenv2").GenMessage<import("./v1/services_pb.js").ServiceStatusReply>;
        };
    };
};
/** Every file generated from proto/ (for a registry of its messages). */
export declare const files: readonly [import("@bufbuild/protobuf").DescFile, import("@bufbuild/protobuf").DescFile, import("@bufbuild/protobuf").DescFile, import("@bufbuild/protobuf").DescFile, import("@bufbuild/protobuf").DescFile, import("@bufbuild/protobuf").DescFile, import("@bufbuild/protobuf").DescFile];
