import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/git.proto.
 */
export declare const file_tk_v1_git: GenFile;
/**
 * @generated from message tk.v1.GitStatusRequest
 */
export type GitStatusRequest = Message<"tk.v1.GitStatusRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * @generated from field: tk.v1.GitStatusRequest.Untracked untracked = 2;
     */
    untracked: GitStatusRequest_Untracked;
    /**
     * Only these paths (literal; a directory means everything below it).
     *
     * @generated from field: repeated bytes paths = 3;
     */
    paths: Uint8Array[];
};
/**
 * Describes the message tk.v1.GitStatusRequest.
 * Use `create(GitStatusRequestSchema)` to create a new message.
 */
export declare const GitStatusRequestSchema: GenMessage<GitStatusRequest>;
/**
 * @generated from enum tk.v1.GitStatusRequest.Untracked
 */
export declare enum GitStatusRequest_Untracked {
    /**
     * git's own default (`normal`: untracked directories as one entry).
     *
     * @generated from enum value: UNTRACKED_DEFAULT = 0;
     */
    DEFAULT = 0,
    /**
     * @generated from enum value: UNTRACKED_NO = 1;
     */
    NO = 1,
    /**
     * @generated from enum value: UNTRACKED_ALL = 2;
     */
    ALL = 2
}
/**
 * Describes the enum tk.v1.GitStatusRequest.Untracked.
 */
export declare const GitStatusRequest_UntrackedSchema: GenEnum<GitStatusRequest_Untracked>;
/**
 * @generated from message tk.v1.GitStatusBranch
 */
export type GitStatusBranch = Message<"tk.v1.GitStatusBranch"> & {
    /**
     * The commit HEAD names; empty on an unborn branch ("(initial)").
     *
     * @generated from field: string oid = 1;
     */
    oid: string;
    /**
     * The branch name; empty when detached.
     *
     * @generated from field: bytes head = 2;
     */
    head: Uint8Array;
    /**
     * @generated from field: bool detached = 3;
     */
    detached: boolean;
    /**
     * Empty when the branch has no upstream.
     *
     * @generated from field: bytes upstream = 4;
     */
    upstream: Uint8Array;
    /**
     * ahead/behind are known (the upstream exists).
     *
     * @generated from field: bool has_ahead_behind = 5;
     */
    hasAheadBehind: boolean;
    /**
     * @generated from field: int32 ahead = 6;
     */
    ahead: number;
    /**
     * @generated from field: int32 behind = 7;
     */
    behind: number;
};
/**
 * Describes the message tk.v1.GitStatusBranch.
 * Use `create(GitStatusBranchSchema)` to create a new message.
 */
export declare const GitStatusBranchSchema: GenMessage<GitStatusBranch>;
/**
 * @generated from message tk.v1.GitStatusEntry
 */
export type GitStatusEntry = Message<"tk.v1.GitStatusEntry"> & {
    /**
     * @generated from field: tk.v1.GitStatusEntry.Kind kind = 1;
     */
    kind: GitStatusEntry_Kind;
    /**
     * @generated from field: bytes path = 2;
     */
    path: Uint8Array;
    /**
     * The path before the rename or copy (RENAMED only).
     *
     * @generated from field: bytes orig_path = 3;
     */
    origPath: Uint8Array;
    /**
     * The XY of porcelain v2: the index's and the working tree's state, one
     * character each ("." for unmodified, "M", "A", "D", "R", "C", "T",
     * "U"); empty for untracked and ignored entries.
     *
     * @generated from field: string index_status = 4;
     */
    indexStatus: string;
    /**
     * @generated from field: string worktree_status = 5;
     */
    worktreeStatus: string;
    /**
     * "N..." or "S<c><m><u>" (porcelain v2's <sub>).
     *
     * @generated from field: string submodule = 6;
     */
    submodule: string;
    /**
     * Octal file modes, as git prints them: HEAD, index, worktree (for
     * UNMERGED: stage 1, 2, 3 and worktree).
     *
     * @generated from field: repeated string modes = 7;
     */
    modes: string[];
    /**
     * Object ids: HEAD and index (UNMERGED: stage 1, 2, 3).
     *
     * @generated from field: repeated string oids = 8;
     */
    oids: string[];
    /**
     * "R100", "C75" (RENAMED only).
     *
     * @generated from field: string score = 9;
     */
    score: string;
};
/**
 * Describes the message tk.v1.GitStatusEntry.
 * Use `create(GitStatusEntrySchema)` to create a new message.
 */
export declare const GitStatusEntrySchema: GenMessage<GitStatusEntry>;
/**
 * @generated from enum tk.v1.GitStatusEntry.Kind
 */
export declare enum GitStatusEntry_Kind {
    /**
     * @generated from enum value: KIND_UNSPECIFIED = 0;
     */
    KIND_UNSPECIFIED = 0,
    /**
     * "1": an ordinary changed entry
     *
     * @generated from enum value: CHANGED = 1;
     */
    CHANGED = 1,
    /**
     * "2": renamed or copied (see orig_path, score)
     *
     * @generated from enum value: RENAMED = 2;
     */
    RENAMED = 2,
    /**
     * "u"
     *
     * @generated from enum value: UNMERGED = 3;
     */
    UNMERGED = 3,
    /**
     * "?"
     *
     * @generated from enum value: UNTRACKED = 4;
     */
    UNTRACKED = 4,
    /**
     * "!"
     *
     * @generated from enum value: IGNORED = 5;
     */
    IGNORED = 5
}
/**
 * Describes the enum tk.v1.GitStatusEntry.Kind.
 */
export declare const GitStatusEntry_KindSchema: GenEnum<GitStatusEntry_Kind>;
/**
 * @generated from message tk.v1.GitStatusReply
 */
export type GitStatusReply = Message<"tk.v1.GitStatusReply"> & {
    /**
     * @generated from field: tk.v1.GitStatusBranch branch = 1;
     */
    branch?: GitStatusBranch;
    /**
     * @generated from field: repeated tk.v1.GitStatusEntry entries = 2;
     */
    entries: GitStatusEntry[];
};
/**
 * Describes the message tk.v1.GitStatusReply.
 * Use `create(GitStatusReplySchema)` to create a new message.
 */
export declare const GitStatusReplySchema: GenMessage<GitStatusReply>;
/**
 * @generated from message tk.v1.GitLogRequest
 */
export type GitLogRequest = Message<"tk.v1.GitLogRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * Where the walk starts; empty means HEAD.
     *
     * @generated from field: string rev = 2;
     */
    rev: string;
    /**
     * At most this many commits; 0 means the server's default, 10000. No
     * reply holds more than 10000 (the method's ceiling): a larger value is
     * served as 10000. When more commits exist than the reply holds, it is
     * a success with Status.partial set (cause LIMIT).
     *
     * @generated from field: uint32 max_count = 3;
     */
    maxCount: number;
    /**
     * Commits to leave out first (after path limiting).
     *
     * @generated from field: uint32 skip = 4;
     */
    skip: number;
    /**
     * Only commits that change one of these paths (literal; a directory
     * means everything below it), with git log's default history
     * simplification.
     *
     * @generated from field: repeated bytes paths = 5;
     */
    paths: Uint8Array[];
};
/**
 * Describes the message tk.v1.GitLogRequest.
 * Use `create(GitLogRequestSchema)` to create a new message.
 */
export declare const GitLogRequestSchema: GenMessage<GitLogRequest>;
/**
 * @generated from message tk.v1.GitSignature
 */
export type GitSignature = Message<"tk.v1.GitSignature"> & {
    /**
     * @generated from field: bytes name = 1;
     */
    name: Uint8Array;
    /**
     * @generated from field: bytes email = 2;
     */
    email: Uint8Array;
    /**
     * Seconds since the epoch, and the signer's UTC offset in minutes.
     *
     * @generated from field: int64 time = 3;
     */
    time: bigint;
    /**
     * @generated from field: int32 offset_minutes = 4;
     */
    offsetMinutes: number;
};
/**
 * Describes the message tk.v1.GitSignature.
 * Use `create(GitSignatureSchema)` to create a new message.
 */
export declare const GitSignatureSchema: GenMessage<GitSignature>;
/**
 * @generated from message tk.v1.GitCommit
 */
export type GitCommit = Message<"tk.v1.GitCommit"> & {
    /**
     * @generated from field: string oid = 1;
     */
    oid: string;
    /**
     * @generated from field: repeated string parents = 2;
     */
    parents: string[];
    /**
     * @generated from field: tk.v1.GitSignature author = 3;
     */
    author?: GitSignature;
    /**
     * @generated from field: tk.v1.GitSignature committer = 4;
     */
    committer?: GitSignature;
    /**
     * git log's %s: the first paragraph, its lines joined by spaces.
     *
     * @generated from field: bytes subject = 5;
     */
    subject: Uint8Array;
    /**
     * git log's %b: the message after the first paragraph.
     *
     * @generated from field: bytes body = 6;
     */
    body: Uint8Array;
};
/**
 * Describes the message tk.v1.GitCommit.
 * Use `create(GitCommitSchema)` to create a new message.
 */
export declare const GitCommitSchema: GenMessage<GitCommit>;
/**
 * @generated from message tk.v1.GitLogReply
 */
export type GitLogReply = Message<"tk.v1.GitLogReply"> & {
    /**
     * @generated from field: repeated tk.v1.GitCommit commits = 1;
     */
    commits: GitCommit[];
};
/**
 * Describes the message tk.v1.GitLogReply.
 * Use `create(GitLogReplySchema)` to create a new message.
 */
export declare const GitLogReplySchema: GenMessage<GitLogReply>;
/**
 * @generated from message tk.v1.GitDiffRequest
 */
export type GitDiffRequest = Message<"tk.v1.GitDiffRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * Which two sides: `from` and `to` both set: two revisions. Only `from`:
     * that revision against the working tree (or the index, with `cached`).
     * Neither: the index against the working tree (or HEAD against the index,
     * with `cached`).
     *
     * @generated from field: string from = 2;
     */
    from: string;
    /**
     * @generated from field: string to = 3;
     */
    to: string;
    /**
     * @generated from field: bool cached = 4;
     */
    cached: boolean;
    /**
     * @generated from field: repeated bytes paths = 5;
     */
    paths: Uint8Array[];
    /**
     * Lines of context (git's -U); 0 means git's default of 3.
     *
     * @generated from field: uint32 context_lines = 6;
     */
    contextLines: number;
};
/**
 * Describes the message tk.v1.GitDiffRequest.
 * Use `create(GitDiffRequestSchema)` to create a new message.
 */
export declare const GitDiffRequestSchema: GenMessage<GitDiffRequest>;
/**
 * @generated from message tk.v1.GitFileStat
 */
export type GitFileStat = Message<"tk.v1.GitFileStat"> & {
    /**
     * @generated from field: bytes path = 1;
     */
    path: Uint8Array;
    /**
     * The path before a rename or copy; empty otherwise.
     *
     * @generated from field: bytes old_path = 2;
     */
    oldPath: Uint8Array;
    /**
     * Lines added and deleted; both 0 with `binary` set for binary files.
     *
     * @generated from field: uint64 added = 3;
     */
    added: bigint;
    /**
     * @generated from field: uint64 deleted = 4;
     */
    deleted: bigint;
    /**
     * @generated from field: bool binary = 5;
     */
    binary: boolean;
};
/**
 * Describes the message tk.v1.GitFileStat.
 * Use `create(GitFileStatSchema)` to create a new message.
 */
export declare const GitFileStatSchema: GenMessage<GitFileStat>;
/**
 * @generated from message tk.v1.GitDiffReply
 */
export type GitDiffReply = Message<"tk.v1.GitDiffReply"> & {
    /**
     * The patch as git prints it (paths unquoted: core.quotepath=off).
     *
     * @generated from field: bytes patch = 1;
     */
    patch: Uint8Array;
    /**
     * @generated from field: repeated tk.v1.GitFileStat files = 2;
     */
    files: GitFileStat[];
};
/**
 * Describes the message tk.v1.GitDiffReply.
 * Use `create(GitDiffReplySchema)` to create a new message.
 */
export declare const GitDiffReplySchema: GenMessage<GitDiffReply>;
/**
 * @generated from message tk.v1.GitRevParseRequest
 */
export type GitRevParseRequest = Message<"tk.v1.GitRevParseRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * Any revision git understands: "HEAD", "v1.0^{}", "main~2:path", ...
     * One that begins with '-' names nothing (no ref name may begin with
     * '-'): NOT_FOUND BAD_REVISION before anything runs. So in every
     * revision field (Log's rev, Diff's from and to, Checkout's and
     * WorktreeAdd's rev): none reaches git, where it could be read as an
     * option.
     *
     * @generated from field: string rev = 2;
     */
    rev: string;
};
/**
 * Describes the message tk.v1.GitRevParseRequest.
 * Use `create(GitRevParseRequestSchema)` to create a new message.
 */
export declare const GitRevParseRequestSchema: GenMessage<GitRevParseRequest>;
/**
 * @generated from message tk.v1.GitRevParseReply
 */
export type GitRevParseReply = Message<"tk.v1.GitRevParseReply"> & {
    /**
     * The full hex object id.
     *
     * @generated from field: string oid = 1;
     */
    oid: string;
};
/**
 * Describes the message tk.v1.GitRevParseReply.
 * Use `create(GitRevParseReplySchema)` to create a new message.
 */
export declare const GitRevParseReplySchema: GenMessage<GitRevParseReply>;
/**
 * @generated from message tk.v1.GitGrepRequest
 */
export type GitGrepRequest = Message<"tk.v1.GitGrepRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * A literal string (never a regular expression or an option).
     *
     * @generated from field: string pattern = 2;
     */
    pattern: string;
    /**
     * @generated from field: bool ignore_case = 3;
     */
    ignoreCase: boolean;
    /**
     * @generated from field: repeated bytes paths = 4;
     */
    paths: Uint8Array[];
    /**
     * Also search untracked files that are not ignored.
     *
     * @generated from field: bool untracked = 5;
     */
    untracked: boolean;
    /**
     * At most this many matches; 0 means the server's default, 10000. No
     * reply holds more than 100000 (the method's ceiling): a larger value is
     * served as 100000. When more exist, the reply holds this many, a
     * success with Status.partial set (cause LIMIT).
     *
     * @generated from field: uint32 max_matches = 6;
     */
    maxMatches: number;
};
/**
 * Describes the message tk.v1.GitGrepRequest.
 * Use `create(GitGrepRequestSchema)` to create a new message.
 */
export declare const GitGrepRequestSchema: GenMessage<GitGrepRequest>;
/**
 * @generated from message tk.v1.GitGrepMatch
 */
export type GitGrepMatch = Message<"tk.v1.GitGrepMatch"> & {
    /**
     * @generated from field: bytes path = 1;
     */
    path: Uint8Array;
    /**
     * 1-based line and byte column of the first match in the line.
     *
     * @generated from field: uint32 line = 2;
     */
    line: number;
    /**
     * @generated from field: uint32 column = 3;
     */
    column: number;
    /**
     * @generated from field: bytes text = 4;
     */
    text: Uint8Array;
};
/**
 * Describes the message tk.v1.GitGrepMatch.
 * Use `create(GitGrepMatchSchema)` to create a new message.
 */
export declare const GitGrepMatchSchema: GenMessage<GitGrepMatch>;
/**
 * @generated from message tk.v1.GitGrepReply
 */
export type GitGrepReply = Message<"tk.v1.GitGrepReply"> & {
    /**
     * @generated from field: repeated tk.v1.GitGrepMatch matches = 1;
     */
    matches: GitGrepMatch[];
};
/**
 * Describes the message tk.v1.GitGrepReply.
 * Use `create(GitGrepReplySchema)` to create a new message.
 */
export declare const GitGrepReplySchema: GenMessage<GitGrepReply>;
/**
 * @generated from message tk.v1.GitCommitRequest
 */
export type GitCommitRequest = Message<"tk.v1.GitCommitRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * @generated from field: string message = 2;
     */
    message: string;
    /**
     * Stages these paths first (additions, changes and removals); with
     * `all`, every change to tracked files instead. Neither: commits the
     * index as it is.
     *
     * @generated from field: repeated bytes paths = 3;
     */
    paths: Uint8Array[];
    /**
     * @generated from field: bool all = 4;
     */
    all: boolean;
    /**
     * @generated from field: bool allow_empty = 5;
     */
    allowEmpty: boolean;
    /**
     * Both set, or neither (then the repository's configured identity).
     *
     * @generated from field: string author_name = 6;
     */
    authorName: string;
    /**
     * @generated from field: string author_email = 7;
     */
    authorEmail: string;
};
/**
 * Describes the message tk.v1.GitCommitRequest.
 * Use `create(GitCommitRequestSchema)` to create a new message.
 */
export declare const GitCommitRequestSchema: GenMessage<GitCommitRequest>;
/**
 * @generated from message tk.v1.GitCommitReply
 */
export type GitCommitReply = Message<"tk.v1.GitCommitReply"> & {
    /**
     * @generated from field: string oid = 1;
     */
    oid: string;
};
/**
 * Describes the message tk.v1.GitCommitReply.
 * Use `create(GitCommitReplySchema)` to create a new message.
 */
export declare const GitCommitReplySchema: GenMessage<GitCommitReply>;
/**
 * @generated from message tk.v1.GitCheckoutRequest
 */
export type GitCheckoutRequest = Message<"tk.v1.GitCheckoutRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * A branch to switch to, or any revision (which detaches HEAD).
     *
     * @generated from field: string rev = 2;
     */
    rev: string;
    /**
     * Creates `create_branch` at `rev` (HEAD when empty) and switches to it.
     * A branch name by git's rules (check-ref-format of refs/heads/NAME; not
     * beginning with '-', not "HEAD"), else INVALID_ARGUMENT
     * BAD_BRANCH_NAME before git runs.
     *
     * @generated from field: string create_branch = 3;
     */
    createBranch: string;
};
/**
 * Describes the message tk.v1.GitCheckoutRequest.
 * Use `create(GitCheckoutRequestSchema)` to create a new message.
 */
export declare const GitCheckoutRequestSchema: GenMessage<GitCheckoutRequest>;
/**
 * @generated from message tk.v1.GitCheckoutReply
 */
export type GitCheckoutReply = Message<"tk.v1.GitCheckoutReply"> & {
    /**
     * The commit HEAD names afterwards.
     *
     * @generated from field: string oid = 1;
     */
    oid: string;
};
/**
 * Describes the message tk.v1.GitCheckoutReply.
 * Use `create(GitCheckoutReplySchema)` to create a new message.
 */
export declare const GitCheckoutReplySchema: GenMessage<GitCheckoutReply>;
/**
 * @generated from message tk.v1.GitWorktreeAddRequest
 */
export type GitWorktreeAddRequest = Message<"tk.v1.GitWorktreeAddRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * The new working tree: an absolute path inside tkd's roots that does
     * not exist yet (or is an empty directory), in no repository's git dir
     * (INVALID_ARGUMENT BAD_PATH).
     *
     * @generated from field: string path = 2;
     */
    path: string;
    /**
     * What it checks out (HEAD when empty).
     *
     * @generated from field: string rev = 3;
     */
    rev: string;
    /**
     * Creates this branch at `rev` for it: a branch name by git's rules, as
     * Checkout's create_branch.
     *
     * @generated from field: string new_branch = 4;
     */
    newBranch: string;
    /**
     * Checks `rev` out detached.
     *
     * @generated from field: bool detach = 5;
     */
    detach: boolean;
};
/**
 * Describes the message tk.v1.GitWorktreeAddRequest.
 * Use `create(GitWorktreeAddRequestSchema)` to create a new message.
 */
export declare const GitWorktreeAddRequestSchema: GenMessage<GitWorktreeAddRequest>;
/**
 * @generated from message tk.v1.GitWorktreeAddReply
 */
export type GitWorktreeAddReply = Message<"tk.v1.GitWorktreeAddReply"> & {
    /**
     * The working tree's resolved path, and the commit it has checked out.
     *
     * @generated from field: string path = 1;
     */
    path: string;
    /**
     * @generated from field: string oid = 2;
     */
    oid: string;
};
/**
 * Describes the message tk.v1.GitWorktreeAddReply.
 * Use `create(GitWorktreeAddReplySchema)` to create a new message.
 */
export declare const GitWorktreeAddReplySchema: GenMessage<GitWorktreeAddReply>;
/**
 * @generated from message tk.v1.GitWorktreeRemoveRequest
 */
export type GitWorktreeRemoveRequest = Message<"tk.v1.GitWorktreeRemoveRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * The linked working tree: its path, inside tkd's roots.
     *
     * @generated from field: string path = 2;
     */
    path: string;
    /**
     * Removes it with its changes and untracked files (`--force`).
     *
     * @generated from field: bool force = 3;
     */
    force: boolean;
};
/**
 * Describes the message tk.v1.GitWorktreeRemoveRequest.
 * Use `create(GitWorktreeRemoveRequestSchema)` to create a new message.
 */
export declare const GitWorktreeRemoveRequestSchema: GenMessage<GitWorktreeRemoveRequest>;
/**
 * @generated from message tk.v1.GitWorktreeRemoveReply
 */
export type GitWorktreeRemoveReply = Message<"tk.v1.GitWorktreeRemoveReply"> & {};
/**
 * Describes the message tk.v1.GitWorktreeRemoveReply.
 * Use `create(GitWorktreeRemoveReplySchema)` to create a new message.
 */
export declare const GitWorktreeRemoveReplySchema: GenMessage<GitWorktreeRemoveReply>;
/**
 * @generated from message tk.v1.GitConfigSetRequest
 */
export type GitConfigSetRequest = Message<"tk.v1.GitConfigSetRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * "section.name" or "section.subsection.name".
     *
     * @generated from field: string key = 2;
     */
    key: string;
    /**
     * @generated from field: string value = 3;
     */
    value: string;
};
/**
 * Describes the message tk.v1.GitConfigSetRequest.
 * Use `create(GitConfigSetRequestSchema)` to create a new message.
 */
export declare const GitConfigSetRequestSchema: GenMessage<GitConfigSetRequest>;
/**
 * @generated from message tk.v1.GitConfigSetReply
 */
export type GitConfigSetReply = Message<"tk.v1.GitConfigSetReply"> & {};
/**
 * Describes the message tk.v1.GitConfigSetReply.
 * Use `create(GitConfigSetReplySchema)` to create a new message.
 */
export declare const GitConfigSetReplySchema: GenMessage<GitConfigSetReply>;
/**
 * @generated from message tk.v1.GitConfigGetRequest
 */
export type GitConfigGetRequest = Message<"tk.v1.GitConfigGetRequest"> & {
    /**
     * @generated from field: string repo = 1;
     */
    repo: string;
    /**
     * "section.name" or "section.subsection.name", as ConfigSet takes it.
     *
     * @generated from field: string key = 2;
     */
    key: string;
};
/**
 * Describes the message tk.v1.GitConfigGetRequest.
 * Use `create(GitConfigGetRequestSchema)` to create a new message.
 */
export declare const GitConfigGetRequestSchema: GenMessage<GitConfigGetRequest>;
/**
 * @generated from message tk.v1.GitConfigGetReply
 */
export type GitConfigGetReply = Message<"tk.v1.GitConfigGetReply"> & {
    /**
     * As the file holds it, git's quoting and escapes undone.
     *
     * @generated from field: bytes value = 1;
     */
    value: Uint8Array;
};
/**
 * Describes the message tk.v1.GitConfigGetReply.
 * Use `create(GitConfigGetReplySchema)` to create a new message.
 */
export declare const GitConfigGetReplySchema: GenMessage<GitConfigGetReply>;
/**
 * @generated from service tk.v1.Git
 */
export declare const Git: GenService<{
    /**
     * The working tree's state: `git status --porcelain=v2 -z
     * --branch`, parsed. At most 100000 entries (partial beyond); git's
     * output is read up to 16 MiB, and a longer one is RESOURCE_EXHAUSTED
     * OUTPUT_TOO_LARGE.
     *
     * @generated from rpc tk.v1.Git.Status
     */
    status: {
        methodKind: "unary";
        input: typeof GitStatusRequestSchema;
        output: typeof GitStatusReplySchema;
    };
    /**
     * Commits reachable from `rev`, newest first (libgit2, in process). At
     * most 10000 commits and 16 MiB of their text (names, emails,
     * subjects, bodies), and at most 2000000 commits walked to find them
     * (shown, skipped, left out by `paths`, or hidden by "A..B"): a reply
     * cut at any of these is partial, save an "A..B" whose A has more
     * ancestors than the walk may visit (RESOURCE_EXHAUSTED
     * LOG_WALK_LIMIT: no answer would be right).
     *
     * @generated from rpc tk.v1.Git.Log
     */
    log: {
        methodKind: "unary";
        input: typeof GitLogRequestSchema;
        output: typeof GitLogReplySchema;
    };
    /**
     * A patch and per-file line counts (`git diff --no-ext-diff
     * --no-textconv`). At most 100000 files (partial beyond; the patch
     * stays whole); git's output, the patch included, is read up to
     * 16 MiB, and a longer one is RESOURCE_EXHAUSTED OUTPUT_TOO_LARGE.
     *
     * @generated from rpc tk.v1.Git.Diff
     */
    diff: {
        methodKind: "unary";
        input: typeof GitDiffRequestSchema;
        output: typeof GitDiffReplySchema;
    };
    /**
     * A revision to an object id (libgit2, in process).
     *
     * @generated from rpc tk.v1.Git.RevParse
     */
    revParse: {
        methodKind: "unary";
        input: typeof GitRevParseRequestSchema;
        output: typeof GitRevParseReplySchema;
    };
    /**
     * Lines of tracked files that contain a literal string (`git grep
     * -F`). At most 100000 matches (10000 by default) and 32 MiB of their
     * paths and text (a line is cut at 64 KiB); partial beyond.
     *
     * @generated from rpc tk.v1.Git.Grep
     */
    grep: {
        methodKind: "unary";
        input: typeof GitGrepRequestSchema;
        output: typeof GitGrepReplySchema;
    };
    /**
     * Stages `paths` (or every tracked change) and commits.
     *
     * @generated from rpc tk.v1.Git.Commit
     */
    commit: {
        methodKind: "unary";
        input: typeof GitCommitRequestSchema;
        output: typeof GitCommitReplySchema;
    };
    /**
     * Switches the working tree to a branch or a revision.
     *
     * @generated from rpc tk.v1.Git.Checkout
     */
    checkout: {
        methodKind: "unary";
        input: typeof GitCheckoutRequestSchema;
        output: typeof GitCheckoutReplySchema;
    };
    /**
     * Adds a linked working tree (`git worktree add`).
     *
     * @generated from rpc tk.v1.Git.WorktreeAdd
     */
    worktreeAdd: {
        methodKind: "unary";
        input: typeof GitWorktreeAddRequestSchema;
        output: typeof GitWorktreeAddReplySchema;
    };
    /**
     * Removes a linked working tree of `repo` (`git worktree remove`):
     * never the main one, nor a path that is no worktree of that
     * repository (INVALID_ARGUMENT NOT_A_LINKED_WORKTREE, before git
     * runs). One with changes or untracked files is FAILED_PRECONDITION
     * WORKTREE_DIRTY unless `force`; a locked one is WORKTREE_LOCKED
     * (its lock is its owner's to lift).
     *
     * @generated from rpc tk.v1.Git.WorktreeRemove
     */
    worktreeRemove: {
        methodKind: "unary";
        input: typeof GitWorktreeRemoveRequestSchema;
        output: typeof GitWorktreeRemoveReplySchema;
    };
    /**
     * Sets a key in the repository's own config (never global or
     * system); only keys of an allowlist (identity, branch tracking, line
     * endings: docs/git.md), others are PERMISSION_DENIED
     * CONFIG_KEY_NOT_ALLOWED before git runs.
     *
     * @generated from rpc tk.v1.Git.ConfigSet
     */
    configSet: {
        methodKind: "unary";
        input: typeof GitConfigSetRequestSchema;
        output: typeof GitConfigSetReplySchema;
    };
    /**
     * Reads a key of the repository's own config, the file ConfigSet
     * writes and what it includes (never global or system; libgit2, in
     * process: no program runs). Only the keys ConfigSet may set, refused
     * as ConfigSet refuses them (INVALID_ARGUMENT BAD_CONFIG_KEY,
     * PERMISSION_DENIED CONFIG_KEY_NOT_ALLOWED); a key the config does not
     * set is NOT_FOUND CONFIG_KEY_NOT_SET. A key set more than once answers
     * its last value, as `git config --get` does.
     *
     * @generated from rpc tk.v1.Git.ConfigGet
     */
    configGet: {
        methodKind: "unary";
        input: typeof GitConfigGetRequestSchema;
        output: typeof GitConfigGetReplySchema;
    };
}>;
