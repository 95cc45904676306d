import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";
/**
 * Describes the file tk/v1/search.proto.
 */
export declare const file_tk_v1_search: GenFile;
/**
 * @generated from message tk.v1.SearchRequest
 */
export type SearchRequest = Message<"tk.v1.SearchRequest"> & {
    /**
     * An absolute directory that resolves (symlinks followed) inside one of
     * tkd's --root directories; PERMISSION_DENIED otherwise.
     *
     * @generated from field: string root = 1;
     */
    root: string;
    /**
     * Matched literally (never a pattern or a flag): not empty, at most 4096
     * bytes (QUERY_TOO_LONG), no NUL, no newline. Any bytes otherwise; but rg takes no pattern that is not
     * UTF-8, so AUTO then skips rg, and a forced RG is INVALID_ARGUMENT,
     * reason QUERY_NOT_UTF8.
     *
     * @generated from field: string query = 2;
     */
    query: string;
    /**
     * Most matches (lines) in the reply; 0 means 1000. No reply holds more
     * than 100000 (the method's ceiling): a larger value is served as
     * 100000. When more exist the reply is partial; so is one whose paths
     * and text reached 32 MiB.
     *
     * @generated from field: uint32 limit = 3;
     */
    limit: number;
    /**
     * Forces one tool; FAILED_PRECONDITION when it cannot run here.
     *
     * @generated from field: tk.v1.SearchRequest.Tool tool = 4;
     */
    tool: SearchRequest_Tool;
    /**
     * Whether files and directories whose names start with "." (.github/)
     * are searched; unset means true. .git/ is never searched. (A oneof
     * because protoc-c 1.4.1 rejects proto3 `optional`.)
     *
     * @generated from oneof tk.v1.SearchRequest.hidden
     */
    hidden: {
        /**
         * @generated from field: bool include_hidden = 5;
         */
        value: boolean;
        case: "includeHidden";
    } | {
        case: undefined;
        value?: undefined;
    };
    /**
     * ASCII case folding with git grep and grep (they run in the C locale so
     * that any byte is text), Unicode case folding with rg.
     *
     * @generated from field: bool ignore_case = 6;
     */
    ignoreCase: boolean;
    /**
     * When some files or directories cannot be read, return what was found
     * (stats.unreadable_files says how many could not be read) instead of
     * FAILED_PRECONDITION, reason UNREADABLE_FILES.
     *
     * @generated from field: bool allow_unreadable = 7;
     */
    allowUnreadable: boolean;
};
/**
 * Describes the message tk.v1.SearchRequest.
 * Use `create(SearchRequestSchema)` to create a new message.
 */
export declare const SearchRequestSchema: GenMessage<SearchRequest>;
/**
 * @generated from enum tk.v1.SearchRequest.Tool
 */
export declare enum SearchRequest_Tool {
    /**
     * rg if tkd finds it, else git grep if root is inside a git work tree,
     * else grep.
     *
     * @generated from enum value: AUTO = 0;
     */
    AUTO = 0,
    /**
     * @generated from enum value: RG = 1;
     */
    RG = 1,
    /**
     * @generated from enum value: GIT_GREP = 2;
     */
    GIT_GREP = 2,
    /**
     * @generated from enum value: GREP = 3;
     */
    GREP = 3
}
/**
 * Describes the enum tk.v1.SearchRequest.Tool.
 */
export declare const SearchRequest_ToolSchema: GenEnum<SearchRequest_Tool>;
/**
 * @generated from message tk.v1.SearchReply
 */
export type SearchReply = Message<"tk.v1.SearchReply"> & {
    /**
     * @generated from field: repeated tk.v1.SearchMatch matches = 1;
     */
    matches: SearchMatch[];
    /**
     * More matches exist than the reply holds (as Status.partial): the limit
     * or the reply's byte budget was reached, or a match could not be read
     * (stats.skipped_records).
     *
     * @generated from field: bool partial = 2;
     */
    partial: boolean;
    /**
     * The tool that ran.
     *
     * @generated from field: tk.v1.SearchRequest.Tool tool = 3;
     */
    tool: SearchRequest_Tool;
    /**
     * @generated from field: tk.v1.SearchStats stats = 4;
     */
    stats?: SearchStats;
};
/**
 * Describes the message tk.v1.SearchReply.
 * Use `create(SearchReplySchema)` to create a new message.
 */
export declare const SearchReplySchema: GenMessage<SearchReply>;
/**
 * One line that contains the query. Paths and text are bytes: file names
 * and contents need not be UTF-8.
 *
 * @generated from message tk.v1.SearchMatch
 */
export type SearchMatch = Message<"tk.v1.SearchMatch"> & {
    /**
     * Relative to root, as the file system spells it.
     *
     * @generated from field: bytes path = 1;
     */
    path: Uint8Array;
    /**
     * 1-based.
     *
     * @generated from field: uint64 line = 2;
     */
    line: bigint;
    /**
     * 1-based byte offset of the first occurrence in the line; 0 when it
     * lies beyond the text kept (see truncated), whichever tool ran.
     *
     * @generated from field: uint32 column = 3;
     */
    column: number;
    /**
     * The line without its line terminator, at most 1 MiB.
     *
     * @generated from field: bytes text = 4;
     */
    text: Uint8Array;
    /**
     * Every occurrence within text, left to right, not overlapping.
     *
     * @generated from field: repeated tk.v1.SearchSubmatch submatches = 5;
     */
    submatches: SearchSubmatch[];
    /**
     * The line was longer than 1 MiB: text holds its first 1 MiB. Also set
     * when rg (with ignore_case) wrote a record for the line too large to
     * read whole (a line of MiBs with very many occurrences): text is whole
     * then, but submatches may miss some occurrences.
     *
     * @generated from field: bool truncated = 6;
     */
    truncated: boolean;
};
/**
 * Describes the message tk.v1.SearchMatch.
 * Use `create(SearchMatchSchema)` to create a new message.
 */
export declare const SearchMatchSchema: GenMessage<SearchMatch>;
/**
 * Byte offsets into SearchMatch.text, end exclusive.
 *
 * @generated from message tk.v1.SearchSubmatch
 */
export type SearchSubmatch = Message<"tk.v1.SearchSubmatch"> & {
    /**
     * @generated from field: uint32 start = 1;
     */
    start: number;
    /**
     * @generated from field: uint32 end = 2;
     */
    end: number;
};
/**
 * Describes the message tk.v1.SearchSubmatch.
 * Use `create(SearchSubmatchSchema)` to create a new message.
 */
export declare const SearchSubmatchSchema: GenMessage<SearchSubmatch>;
/**
 * @generated from message tk.v1.SearchStats
 */
export type SearchStats = Message<"tk.v1.SearchStats"> & {
    /**
     * Lines with a match in the reply, and the files they are in.
     *
     * @generated from field: uint32 matched_lines = 1;
     */
    matchedLines: number;
    /**
     * @generated from field: uint32 files_with_matches = 2;
     */
    filesWithMatches: number;
    /**
     * Files or directories the tool could not read (the lines of its
     * stderr that say so; a lower bound when stderr was longer than tkd
     * keeps).
     *
     * @generated from field: uint32 unreadable_files = 3;
     */
    unreadableFiles: number;
    /**
     * Lines longer than 1 MiB, cut.
     *
     * @generated from field: uint32 truncated_lines = 4;
     */
    truncatedLines: number;
    /**
     * Output records that could not be parsed; they are not in matches,
     * and a match lost so makes the reply partial. (A line of tens of MiB is
     * not lost: every tool answers it as a truncated match.)
     *
     * @generated from field: uint32 skipped_records = 5;
     */
    skippedRecords: number;
    /**
     * Time spent waiting for a search slot, and running the tool.
     *
     * @generated from field: uint32 slot_wait_ms = 6;
     */
    slotWaitMs: number;
    /**
     * @generated from field: uint32 tool_ms = 7;
     */
    toolMs: number;
};
/**
 * Describes the message tk.v1.SearchStats.
 * Use `create(SearchStatsSchema)` to create a new message.
 */
export declare const SearchStatsSchema: GenMessage<SearchStats>;
/**
 * @generated from service tk.v1.Search
 */
export declare const Search: GenService<{
    /**
     * Every line of the files under `root` that contains `query`, as the
     * search tool reports it. It follows its caller (cancel and deadline
     * end it, and it then answers CANCELLED or DEADLINE_EXCEEDED, never an
     * empty list), and no search runs past the method's ceiling.
     * Reaching `limit` is a success with partial results (Status.partial,
     * cause LIMIT). At most a few searches run at once (tkd --search-slots);
     * the others wait, and a caller that gives up while waiting never starts
     * a tool.
     *
     * @generated from rpc tk.v1.Search.Search
     */
    search: {
        methodKind: "unary";
        input: typeof SearchRequestSchema;
        output: typeof SearchReplySchema;
    };
}>;
