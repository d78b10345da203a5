/* node_list.h - THE node-kind table. One row per kind of graph node; the
 * internal enum (oi__node_kind), the graph JSON's "kind" names and allowed
 * keys (json.c), the trace's event names (exec_trace.c) and the DSL
 * statement that makes each node (dsl.c) are generated from it. A new kind
 * (a fused kernel, say) is one row here plus its parse, check and run.
 *
 * OI__NODE_LIST columns, X(kind, event, dsl, json, trace, keys):
 *   kind   OI__NODE_<kind> is the enum value
 *   event  OI_EVENT_<event>, its public event kind (openinfer.h). The rows
 *          are in the order of oi_event_kind, so a node kind converts to its
 *          event kind by a cast (exec_trace.c asserts it, row by row)
 *   dsl    OI_DSL_<dsl>, the statement that makes the node (OI_<dsl> is its
 *          macro; OP and LOOP take more than one statement)
 *   json   its "kind" in graph JSON (docs/graph-json.md)
 *   trace  its "kind" in the trace (docs/simulator.md#trace)
 *   keys   the graph JSON keys it may carry besides index, uuid, kind, src,
 *          each followed by a comma */
#ifndef OPENINFER_NODE_LIST_H
#define OPENINFER_NODE_LIST_H

/* clang-format off */
#define OI__NODE_LIST(X) \
    X(ASSIGN,          ASSIGN,          ASSIGN,          "assign",          "Assign",         ("name", "typed_by_op", "dtype", "dims",)) \
    X(OP,              OP_EXECUTE,      OP,              "op",              "OpExecute",      ("op", "inputs", "attrs", "hints", "output",)) \
    X(CACHE_READ,      CACHE_READ,      CACHE_READ,      "cache_read",      "CacheRead",      ("cache", "var",)) \
    X(CACHE_WRITE,     CACHE_WRITE,     CACHE_WRITE,     "cache_write",     "CacheWrite",     ("cache", "var",)) \
    X(CACHE_INCREMENT, CACHE_INCREMENT, CACHE_INCREMENT, "cache_increment", "CacheIncrement", ("cache", "amount",)) \
    X(CACHE_DECREMENT, CACHE_DECREMENT, CACHE_DECREMENT, "cache_decrement", "CacheDecrement", ("cache", "amount",)) \
    X(CACHE_RESET,     CACHE_RESET,     CACHE_RESET,     "cache_reset",     "CacheReset",     ("cache",)) \
    X(BARRIER,         BARRIER,         BARRIER,         "barrier",         "Barrier",        ()) \
    X(DEP,             DEP,             DEP,             "dep",             "Dep",            ("after", "before",)) \
    X(TRANSFER,        TRANSFER,        TRANSFER,        "transfer",        "Transfer",       ("from", "to",)) \
    X(YIELD,           YIELD,           YIELD,           "yield",           "Yield",          ("vars",)) \
    X(AWAIT,           AWAIT,           AWAIT,           "await",           "Await",          ("vars",)) \
    X(BRANCH,          BRANCH,          BRANCH,          "branch",          "Branch",         ("cond", "then", "else",)) \
    X(LOOP,            LOOP,            LOOP,            "loop",            "Loop",           ("name", "var", "start", "end", "body",)) \
    X(RETURN,          RETURN,          RETURN,          "return",          "Return",         ())
/* clang-format on */

#define OI__NODE_ARGS(...) __VA_ARGS__ /* unwraps the keys column */

typedef enum oi__node_kind {
#define OI__NODE_ENUM(kind, event, dsl, json, trace, keys) OI__NODE_##kind,
    OI__NODE_LIST(OI__NODE_ENUM)
#undef OI__NODE_ENUM
} oi__node_kind;

/* Kept out of the enum so that switches over a node's kind stay complete. */
#define OI__NODE_ONE(kind, event, dsl, json, trace, keys) +1
enum { OI__NODE_COUNT = 0 OI__NODE_LIST(OI__NODE_ONE) };
#undef OI__NODE_ONE

#endif /* OPENINFER_NODE_LIST_H */
