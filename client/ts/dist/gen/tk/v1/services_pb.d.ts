import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/services.proto.
 */
export declare const file_tk_v1_services: GenFile;
/**
 * Which service manager. A message only to scope the enum's value names.
 *
 * @generated from message tk.v1.ServiceManager
 */
export type ServiceManager = Message<"tk.v1.ServiceManager"> & {};
/**
 * Describes the message tk.v1.ServiceManager.
 * Use `create(ServiceManagerSchema)` to create a new message.
 */
export declare const ServiceManagerSchema: GenMessage<ServiceManager>;
/**
 * @generated from enum tk.v1.ServiceManager.Kind
 */
export declare enum ServiceManager_Kind {
    /**
     * launchd on macOS, systemd elsewhere.
     *
     * @generated from enum value: AUTO = 0;
     */
    AUTO = 0,
    /**
     * A LaunchAgent: ~/Library/LaunchAgents/<label>.plist.
     *
     * @generated from enum value: LAUNCHD = 1;
     */
    LAUNCHD = 1,
    /**
     * A user unit: $XDG_CONFIG_HOME/systemd/user/<label>.service.
     *
     * @generated from enum value: SYSTEMD = 2;
     */
    SYSTEMD = 2
}
/**
 * Describes the enum tk.v1.ServiceManager.Kind.
 */
export declare const ServiceManager_KindSchema: GenEnum<ServiceManager_Kind>;
/**
 * @generated from message tk.v1.ServiceSpec
 */
export type ServiceSpec = Message<"tk.v1.ServiceSpec"> & {
    /**
     * The launchd Label and the systemd unit name (<label>.service): letters,
     * digits, '.', '_' and '-', starting with a letter or digit, at most 200.
     *
     * @generated from field: string label = 1;
     */
    label: string;
    /**
     * An absolute path to an existing executable file.
     *
     * @generated from field: string program = 2;
     */
    program: string;
    /**
     * The arguments after the program (argv[1..]). No control characters
     * other than tab.
     *
     * @generated from field: repeated string args = 3;
     */
    args: string[];
    /**
     * Extra environment: names of letters, digits and '_' (not starting
     * with a digit), values without control characters. Rendered in name
     * order, so the map's order never changes the definition.
     *
     * @generated from field: map<string, string> env = 4;
     */
    env: {
        [key: string]: string;
    };
    /**
     * An absolute path; empty: the manager's default (the home directory).
     *
     * @generated from field: string working_dir = 5;
     */
    workingDir: string;
    /**
     * @generated from field: tk.v1.ServiceSpec.Restart restart = 6;
     */
    restart: ServiceSpec_Restart;
    /**
     * The least time between two starts, in seconds (launchd
     * ThrottleInterval, systemd RestartSec); 0: 5 s; at most 3600. systemd
     * gets no start limit (StartLimitIntervalSec=0 in [Unit]): as under
     * launchd, a crash loop is slowed down, never given up on.
     *
     * @generated from field: uint32 throttle_seconds = 7;
     */
    throttleSeconds: number;
    /**
     * Absolute paths the output is appended to; empty: launchd discards it,
     * systemd sends it to the journal.
     *
     * @generated from field: string stdout_path = 8;
     */
    stdoutPath: string;
    /**
     * @generated from field: string stderr_path = 9;
     */
    stderrPath: string;
    /**
     * For a program that stops its own children in order, as tkd does: how
     * long, in seconds, the manager waits after its stop signal before it
     * kills what is left. Set, the stop signal goes to the program alone
     * (systemd: KillMode=mixed and TimeoutStopSec=; launchd, which signals
     * the job's process alone anyway: ExitTimeOut). 0: the manager's
     * defaults (systemd signals every process of the unit at once), and
     * nothing rendered. At most 7200. `tkd install` sets it above tkd's
     * shutdown bound (docs/services.md).
     *
     * @generated from field: uint32 stop_timeout_seconds = 10;
     */
    stopTimeoutSeconds: number;
};
/**
 * Describes the message tk.v1.ServiceSpec.
 * Use `create(ServiceSpecSchema)` to create a new message.
 */
export declare const ServiceSpecSchema: GenMessage<ServiceSpec>;
/**
 * @generated from enum tk.v1.ServiceSpec.Restart
 */
export declare enum ServiceSpec_Restart {
    /**
     * The default: ON_FAILURE.
     *
     * @generated from enum value: RESTART_UNSPECIFIED = 0;
     */
    RESTART_UNSPECIFIED = 0,
    /**
     * Restarted after any unsuccessful end: a non-zero exit or a signal,
     * SIGKILL included. launchd: KeepAlive { SuccessfulExit = false } (not
     * Crashed, which misses SIGKILL and deliberate non-zero exits);
     * systemd: Restart=on-failure.
     *
     * @generated from enum value: ON_FAILURE = 1;
     */
    ON_FAILURE = 1,
    /**
     * Restarted whenever it ends. launchd: KeepAlive = true; systemd:
     * Restart=always.
     *
     * @generated from enum value: ALWAYS = 2;
     */
    ALWAYS = 2,
    /**
     * Started once. launchd: KeepAlive = false; systemd: Restart=no.
     *
     * @generated from enum value: NEVER = 3;
     */
    NEVER = 3
}
/**
 * Describes the enum tk.v1.ServiceSpec.Restart.
 */
export declare const ServiceSpec_RestartSchema: GenEnum<ServiceSpec_Restart>;
/**
 * @generated from message tk.v1.ServiceRenderRequest
 */
export type ServiceRenderRequest = Message<"tk.v1.ServiceRenderRequest"> & {
    /**
     * @generated from field: tk.v1.ServiceSpec spec = 1;
     */
    spec?: ServiceSpec;
    /**
     * @generated from field: tk.v1.ServiceManager.Kind backend = 2;
     */
    backend: ServiceManager_Kind;
};
/**
 * Describes the message tk.v1.ServiceRenderRequest.
 * Use `create(ServiceRenderRequestSchema)` to create a new message.
 */
export declare const ServiceRenderRequestSchema: GenMessage<ServiceRenderRequest>;
/**
 * @generated from message tk.v1.ServiceRenderReply
 */
export type ServiceRenderReply = Message<"tk.v1.ServiceRenderReply"> & {
    /**
     * The backend that AUTO resolved to.
     *
     * @generated from field: tk.v1.ServiceManager.Kind backend = 1;
     */
    backend: ServiceManager_Kind;
    /**
     * Where Register installs the definition.
     *
     * @generated from field: string path = 2;
     */
    path: string;
    /**
     * The file's exact text.
     *
     * @generated from field: string definition = 3;
     */
    definition: string;
};
/**
 * Describes the message tk.v1.ServiceRenderReply.
 * Use `create(ServiceRenderReplySchema)` to create a new message.
 */
export declare const ServiceRenderReplySchema: GenMessage<ServiceRenderReply>;
/**
 * @generated from message tk.v1.ServiceRegisterRequest
 */
export type ServiceRegisterRequest = Message<"tk.v1.ServiceRegisterRequest"> & {
    /**
     * @generated from field: tk.v1.ServiceSpec spec = 1;
     */
    spec?: ServiceSpec;
    /**
     * @generated from field: tk.v1.ServiceManager.Kind backend = 2;
     */
    backend: ServiceManager_Kind;
};
/**
 * Describes the message tk.v1.ServiceRegisterRequest.
 * Use `create(ServiceRegisterRequestSchema)` to create a new message.
 */
export declare const ServiceRegisterRequestSchema: GenMessage<ServiceRegisterRequest>;
/**
 * @generated from message tk.v1.ServiceRegisterReply
 */
export type ServiceRegisterReply = Message<"tk.v1.ServiceRegisterReply"> & {
    /**
     * @generated from field: tk.v1.ServiceRegisterReply.Action action = 1;
     */
    action: ServiceRegisterReply_Action;
    /**
     * launchd: bootstrap attempts made; systemd: 1 when (re)started; 0 when
     * UNCHANGED.
     *
     * @generated from field: uint32 attempts = 2;
     */
    attempts: number;
    /**
     * Things the caller should know, such as lingering being off.
     *
     * @generated from field: repeated string warnings = 3;
     */
    warnings: string[];
    /**
     * @generated from field: tk.v1.ServiceManager.Kind backend = 4;
     */
    backend: ServiceManager_Kind;
    /**
     * @generated from field: string path = 5;
     */
    path: string;
};
/**
 * Describes the message tk.v1.ServiceRegisterReply.
 * Use `create(ServiceRegisterReplySchema)` to create a new message.
 */
export declare const ServiceRegisterReplySchema: GenMessage<ServiceRegisterReply>;
/**
 * @generated from enum tk.v1.ServiceRegisterReply.Action
 */
export declare enum ServiceRegisterReply_Action {
    /**
     * @generated from enum value: ACTION_UNSPECIFIED = 0;
     */
    ACTION_UNSPECIFIED = 0,
    /**
     * The installed definition is the rendered one and the manager has it
     * loaded: nothing was changed (no mutating command ran).
     *
     * @generated from enum value: UNCHANGED = 1;
     */
    UNCHANGED = 1,
    /**
     * Nothing was installed before.
     *
     * @generated from enum value: INSTALLED = 2;
     */
    INSTALLED = 2,
    /**
     * A different definition was installed, or the same one was not
     * loaded: replaced and (re)loaded.
     *
     * @generated from enum value: UPDATED = 3;
     */
    UPDATED = 3
}
/**
 * Describes the enum tk.v1.ServiceRegisterReply.Action.
 */
export declare const ServiceRegisterReply_ActionSchema: GenEnum<ServiceRegisterReply_Action>;
/**
 * @generated from message tk.v1.ServiceUnregisterRequest
 */
export type ServiceUnregisterRequest = Message<"tk.v1.ServiceUnregisterRequest"> & {
    /**
     * @generated from field: string label = 1;
     */
    label: string;
    /**
     * @generated from field: tk.v1.ServiceManager.Kind backend = 2;
     */
    backend: ServiceManager_Kind;
};
/**
 * Describes the message tk.v1.ServiceUnregisterRequest.
 * Use `create(ServiceUnregisterRequestSchema)` to create a new message.
 */
export declare const ServiceUnregisterRequestSchema: GenMessage<ServiceUnregisterRequest>;
/**
 * @generated from message tk.v1.ServiceUnregisterReply
 */
export type ServiceUnregisterReply = Message<"tk.v1.ServiceUnregisterReply"> & {
    /**
     * A definition file was removed.
     *
     * @generated from field: bool removed = 1;
     */
    removed: boolean;
    /**
     * The manager had the service loaded, and now has not.
     *
     * @generated from field: bool unloaded = 2;
     */
    unloaded: boolean;
};
/**
 * Describes the message tk.v1.ServiceUnregisterReply.
 * Use `create(ServiceUnregisterReplySchema)` to create a new message.
 */
export declare const ServiceUnregisterReplySchema: GenMessage<ServiceUnregisterReply>;
/**
 * @generated from message tk.v1.ServiceStatusRequest
 */
export type ServiceStatusRequest = Message<"tk.v1.ServiceStatusRequest"> & {
    /**
     * The label, or give spec (then label may be empty).
     *
     * @generated from field: string label = 1;
     */
    label: string;
    /**
     * @generated from field: tk.v1.ServiceManager.Kind backend = 2;
     */
    backend: ServiceManager_Kind;
    /**
     * Optional: makes up_to_date compare the installed definition with the
     * one this spec renders.
     *
     * @generated from field: tk.v1.ServiceSpec spec = 3;
     */
    spec?: ServiceSpec;
};
/**
 * Describes the message tk.v1.ServiceStatusRequest.
 * Use `create(ServiceStatusRequestSchema)` to create a new message.
 */
export declare const ServiceStatusRequestSchema: GenMessage<ServiceStatusRequest>;
/**
 * @generated from message tk.v1.ServiceExit
 */
export type ServiceExit = Message<"tk.v1.ServiceExit"> & {
    /**
     * The exit status, when the program exited.
     *
     * @generated from field: int32 code = 1;
     */
    code: number;
    /**
     * The signal that ended it, when one did.
     *
     * @generated from field: int32 signal = 2;
     */
    signal: number;
};
/**
 * Describes the message tk.v1.ServiceExit.
 * Use `create(ServiceExitSchema)` to create a new message.
 */
export declare const ServiceExitSchema: GenMessage<ServiceExit>;
/**
 * @generated from message tk.v1.ServiceStatusReply
 */
export type ServiceStatusReply = Message<"tk.v1.ServiceStatusReply"> & {
    /**
     * @generated from field: tk.v1.ServiceManager.Kind backend = 1;
     */
    backend: ServiceManager_Kind;
    /**
     * @generated from field: string path = 2;
     */
    path: string;
    /**
     * The definition file exists.
     *
     * @generated from field: bool installed = 3;
     */
    installed: boolean;
    /**
     * With spec: the installed file is the one Register would write and the
     * manager runs it as written. Without: the manager has loaded the
     * installed file as it is now (systemd: no daemon-reload pending).
     *
     * @generated from field: bool up_to_date = 4;
     */
    upToDate: boolean;
    /**
     * The manager will run it: launchd has the label in its domain; systemd
     * has the unit enabled.
     *
     * @generated from field: bool loaded = 5;
     */
    loaded: boolean;
    /**
     * The running process, 0 when none.
     *
     * @generated from field: int32 pid = 6;
     */
    pid: number;
    /**
     * How the last run ended; absent when it never ended (or is unknown).
     *
     * @generated from field: tk.v1.ServiceExit last_exit = 7;
     */
    lastExit?: ServiceExit;
};
/**
 * Describes the message tk.v1.ServiceStatusReply.
 * Use `create(ServiceStatusReplySchema)` to create a new message.
 */
export declare const ServiceStatusReplySchema: GenMessage<ServiceStatusReply>;
/**
 * @generated from service tk.v1.Services
 */
export declare const Services: GenService<{
    /**
     * The exact text Register would install for a spec, and where. The spec
     * is checked as Register checks it (the same INVALID_ARGUMENT reasons;
     * spec.program must exist on tkd's machine and be executable); what is
     * installed is not read, and nothing is changed.
     *
     * @generated from rpc tk.v1.Services.Render
     */
    render: {
        methodKind: "unary";
        input: typeof ServiceRenderRequestSchema;
        output: typeof ServiceRenderReplySchema;
    };
    /**
     * Renders, compares with what is installed, and only on a difference
     * installs atomically and (re)loads the service. Calls for one label run
     * one after the other; different labels run in parallel.
     *
     * launchd (domain gui/<uid>, or user/<uid> when there is no GUI
     * session): plutil -lint (where plutil exists), bootout, wait until
     * `launchctl print` no longer shows the label (every 200 ms, up to 10 s),
     * enable, bootstrap: at most 6 attempts with a linear backoff, retried
     * only on "Input/output error"; any other failure fails at once, and the
     * error carries launchctl's last output.
     *
     * systemd: the unit file, daemon-reload, enable, restart; a warning when
     * lingering is off (the unit then stops at logout).
     *
     * @generated from rpc tk.v1.Services.Register
     */
    register: {
        methodKind: "unary";
        input: typeof ServiceRegisterRequestSchema;
        output: typeof ServiceRegisterReplySchema;
    };
    /**
     * Unloads (bootout and wait; or stop and disable) and removes the
     * definition. Unregistering what is not installed is no error.
     *
     * @generated from rpc tk.v1.Services.Unregister
     */
    unregister: {
        methodKind: "unary";
        input: typeof ServiceUnregisterRequestSchema;
        output: typeof ServiceUnregisterReplySchema;
    };
    /**
     * What is installed and what the service manager has loaded.
     *
     * @generated from rpc tk.v1.Services.Status
     */
    status: {
        methodKind: "unary";
        input: typeof ServiceStatusRequestSchema;
        output: typeof ServiceStatusReplySchema;
    };
}>;
