/* tracegen._core: the simulation of tracegen/simulate.py in C, for the runs a curve is made of.
 *
 * It is a second form of the code in engine.py, pscpu.py, link.py and simulate.py (the reference), not a second
 * model: every function below is the one of the same name there, doing the same operations on the same values
 * in the same order, so that a run gives the same result to the last bit (tests/tracegen/test_core.py compares
 * them on every bundled trace). tracegen/fastcore.py says which runs it takes (one PS shard, workers alike, the
 * conn or fifo link, nothing recorded) and hands it what simulate.py's _Run computed before its first event.
 * Seeded randomness continues numpy's PCG64 stream from the state the run left it in: the same draws
 * (Generator.integers, Generator.permutation) as the reference makes, in the same order.
 *
 * Time is integer nanoseconds (int64); rates, byte counts and CPU clocks are doubles, as Python's floats are.
 * Built by setup.py when a C compiler is at hand (-ffp-contract=off: no fused multiply-add, whose rounding
 * differs from Python's); without it simulate.py runs every simulation.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;
typedef unsigned __int128 u128;

/* ------------------------------------------------------------------ numpy's PCG64 stream */

typedef struct {
    u128 state, inc;
    int has_uint32;
    uint32_t uinteger;
} Pcg;

static const u128 PCG_MULT = (((u128)0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

static uint64_t pcg_next64(Pcg *p) {
    p->state = p->state * PCG_MULT + p->inc;
    uint64_t hi = (uint64_t)(p->state >> 64), lo = (uint64_t)p->state;
    uint64_t x = hi ^ lo;
    unsigned r = (unsigned)(hi >> 58);
    return (x >> r) | (x << ((64 - r) & 63));
}

static uint32_t pcg_next32(Pcg *p) {
    if (p->has_uint32) {
        p->has_uint32 = 0;
        return p->uinteger;
    }
    uint64_t v = pcg_next64(p);
    p->has_uint32 = 1;
    p->uinteger = (uint32_t)(v >> 32);
    return (uint32_t)(v & 0xffffffffULL);
}

/* Generator.integers(n) for 1 < n <= 2**32: Lemire's bounded draw on 32-bit values (all of one for 2**32) */
static i64 pcg_below(Pcg *p, i64 n) {
    if (n - 1 == 0xffffffffLL) return (i64)pcg_next32(p);
    uint32_t rng = (uint32_t)(n - 1), excl = rng + 1;
    uint64_t m = (uint64_t)pcg_next32(p) * excl;
    uint32_t left = (uint32_t)m;
    if (left < excl) {
        uint32_t threshold = (UINT32_MAX - rng) % excl;
        while (left < threshold) {
            m = (uint64_t)pcg_next32(p) * excl;
            left = (uint32_t)m;
        }
    }
    return (i64)(m >> 32);
}

/* a value in [0, max] by masked rejection, as numpy's shuffle draws */
static uint64_t pcg_interval(Pcg *p, uint64_t max) {
    if (max == 0) return 0;
    uint64_t mask = max, v;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4;
    mask |= mask >> 8; mask |= mask >> 16; mask |= mask >> 32;
    if (max <= 0xffffffffULL) {
        while ((v = (pcg_next32(p) & mask)) > max) {}
    } else {
        while ((v = (pcg_next64(p) & mask)) > max) {}
    }
    return v;
}

/* Generator.permutation(n) into perm */
static void pcg_permutation(Pcg *p, i64 n, i64 *perm) {
    for (i64 i = 0; i < n; i++) perm[i] = i;
    for (i64 i = n - 1; i > 0; i--) {
        i64 j = (i64)pcg_interval(p, (uint64_t)i);
        i64 t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
}

/* ------------------------------------------------------------------ growable arrays */

static int grow_to(void **data, i64 *cap, i64 need, size_t item) {
    i64 c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    void *d = realloc(*data, (size_t)c * item);
    if (!d) return -1;
    *data = d;
    *cap = c;
    return 0;
}
#define GROW(arr, cap, need) ((need) <= (cap) ? 0 : grow_to((void **)&(arr), &(cap), (need), sizeof(*(arr))))

/* ------------------------------------------------------------------ the engine (engine.py's Engine) */

enum { P_DONE = 0, P_ARRIVE = 1, P_START = 2, P_LAUNCH = 3 };
enum { H_RUN = 0, H_LINK = 1, H_PS = 2, H_POOL = 3 }; /* H_POOL + w: worker w's CPU pool */
static const i64 MAX_TIME_NS = (((i64)1) << 61) - 1;

/* an event: its order (time << 2 | priority, then seq: one 128-bit number compared without a branch), then what
 * it calls */
typedef struct { u128 order; i64 handler, arg; } Ev;
typedef struct { i64 handler, arg; } Call;

/* the heap in two arrays side by side: the orders it compares (a node's four children in 64 bytes, half what they
 * took with their calls beside them) and what each calls, moved with its order but never read while sifting */
typedef struct {
    u128 *key;
    Call *call;
    i64 n, cap, seq, now, n_events;
} Engine;

typedef struct Sim Sim;
static void fail(Sim *s, int code);

static void engine_at(Sim *s, Engine *e, i64 time_ns, i64 priority, i64 handler, i64 arg);

static Ev engine_pop(Engine *e) {
    u128 *key = e->key;
    Call *call = e->call;
    Ev first = {key[0], call[0].handler, call[0].arg};
    i64 n = --e->n;
    if (n) { /* a 4-ary heap: half the levels of a binary one */
        u128 last = key[n];
        Call last_call = call[n];
        i64 i = 0, c = 1;
        while (c < n) {
            i64 best = c, end = c + 4 < n ? c + 4 : n;
            u128 low = key[c];
            for (i64 k = c + 1; k < end; k++)
                if (key[k] < low) {
                    best = k;
                    low = key[k];
                }
            if (last < low) break;
            key[i] = low;
            call[i] = call[best];
            i = best;
            c = 4 * i + 1;
        }
        key[i] = last;
        call[i] = last_call;
    }
    e->now = (i64)(first.order >> 66);
    return first;
}

/* ------------------------------------------------------------------ small heaps of integers and records */

/* a min-heap of distinct ints (heapq on a list of thread numbers) */
typedef struct { i64 *a; i64 n, cap; } IntHeap;

static int intheap_push(IntHeap *h, i64 v) {
    if (GROW(h->a, h->cap, h->n + 1)) return -1;
    i64 i = h->n++;
    while (i > 0) {
        i64 p = (i - 1) >> 1;
        if (h->a[p] <= v) break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = v;
    return 0;
}

static i64 intheap_pop(IntHeap *h) {
    i64 first = h->a[0], n = --h->n;
    if (n) {
        i64 last = h->a[n], i = 0, c = 1;
        while (c < n) {
            if (c + 1 < n && h->a[c + 1] < h->a[c]) c++;
            if (last < h->a[c]) break;
            h->a[i] = h->a[c];
            i = c;
            c = 2 * i + 1;
        }
        h->a[i] = last;
    }
    return first;
}

/* A binary heap of records of type T, ordered by BEFORE(a, b): every order used is total (a seq breaks ties), so
 * any correct heap takes them out in the order the reference's structures do. */
#define HEAP_FUNCS(NAME, T, BEFORE)                                                                 \
    typedef struct { T *a; i64 n, cap; } NAME;                                                      \
    static int NAME##_push(NAME *h, T v) {                                                          \
        if (GROW(h->a, h->cap, h->n + 1)) return -1;                                                \
        i64 i = h->n++;                                                                             \
        while (i > 0) {                                                                             \
            i64 p = (i - 1) >> 1;                                                                   \
            if (!BEFORE(&v, &h->a[p])) break;                                                       \
            h->a[i] = h->a[p];                                                                      \
            i = p;                                                                                  \
        }                                                                                           \
        h->a[i] = v;                                                                                \
        return 0;                                                                                   \
    }                                                                                               \
    static T NAME##_pop(NAME *h) {                                                                  \
        T first = h->a[0];                                                                          \
        i64 n = --h->n;                                                                             \
        if (n) {                                                                                    \
            T last = h->a[n];                                                                       \
            i64 i = 0, c = 1;                                                                       \
            while (c < n) {                                                                         \
                if (c + 1 < n && BEFORE(&h->a[c + 1], &h->a[c])) c++;                               \
                if (BEFORE(&last, &h->a[c])) break;                                                 \
                h->a[i] = h->a[c];                                                                  \
                i = c;                                                                              \
                c = 2 * i + 1;                                                                      \
            }                                                                                       \
            h->a[i] = last;                                                                         \
        }                                                                                           \
        return first;                                                                               \
    }

/* ------------------------------------------------------------------ a worker's CPU (engine.py's CpuPool) */

typedef struct { i64 key, seq, dur, token; } Wait;
static inline int wait_before(const Wait *a, const Wait *b) {
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}
HEAP_FUNCS(WaitHeap, Wait, wait_before)

typedef struct {
    IntHeap free;
    WaitHeap queue;
    i64 seq;
    i64 *token; /* per thread: what it runs (the reference also keeps when it began, for recorded tasks) */
} Pool;

/* ------------------------------------------------------------------ the PS's CPU (pscpu.py's PsCpu) */

typedef struct {
    i64 work, token, seq, slot;
    double v_end;
    int op; /* an op (its client is the run); else a request's handling (the run is told when it starts) */
} Item;
static inline int item_before(const Item *a, const Item *b) {
    return a->v_end < b->v_end || (a->v_end == b->v_end && a->seq < b->seq);
}
HEAP_FUNCS(ItemHeap, Item, item_before)

typedef struct { Item *a; i64 head, n, cap; } Ring; /* a deque used as a FIFO */

static int ring_push(Ring *r, Item v) {
    if (r->n == r->cap) {
        i64 c = r->cap ? 2 * r->cap : 16;
        Item *a = malloc((size_t)c * sizeof(Item));
        if (!a) return -1;
        for (i64 i = 0; i < r->n; i++) a[i] = r->a[(r->head + i) % r->cap];
        free(r->a);
        r->a = a;
        r->head = 0;
        r->cap = c;
    }
    r->a[(r->head + r->n) % r->cap] = v;
    r->n++;
    return 0;
}

static Item ring_pop(Ring *r) {
    Item v = r->a[r->head];
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return v;
}

typedef struct {
    double speed, quota_ns, budget, v, rate, busy;
    i64 period_ns; /* 0: no quota (the reference's None) */
    i64 period_end, t, seq, version, free_handlers;
    IntHeap free_threads;
    Ring waiting, handles;
    ItemHeap items;
} Ps;

/* ------------------------------------------------------------------ the link (link.py's FlowLink, one group) */

typedef struct { i64 requested_ns, priority, seq, size, token, key; double v_end; } Tr;
static inline int queued_before(const Tr *a, const Tr *b) {
    if (a->requested_ns != b->requested_ns) return a->requested_ns < b->requested_ns;
    if (a->priority != b->priority) return a->priority < b->priority;
    return a->seq < b->seq;
}
static inline int head_before(const Tr *a, const Tr *b) {
    return a->v_end < b->v_end || (a->v_end == b->v_end && a->seq < b->seq);
}
/* Transfers in order, sorted from `first` on (link.py's _SortedFront): a queue's waiting transfers
 * (queued_before) and a direction's moving ones (head_before). They mostly join in order, so joining is mostly an
 * append and leaving a step of `first`. */
typedef struct { Tr *a; i64 first, n, cap; int exists; } Front;

#define FRONT_ADD(NAME, BEFORE)                                                                     \
    static int NAME(Front *q, Tr tr) {                                                              \
        if (q->n == q->cap && q->first) { /* the spent front makes room */                          \
            memmove(q->a, q->a + q->first, (size_t)(q->n - q->first) * sizeof(Tr));                  \
            q->n -= q->first;                                                                       \
            q->first = 0;                                                                           \
        }                                                                                           \
        if (GROW(q->a, q->cap, q->n + 1)) return -1;                                                \
        i64 at = q->n;                                                                              \
        if (q->n > q->first && !BEFORE(&q->a[q->n - 1], &tr)) {                                     \
            i64 lo = q->first, hi = q->n;                                                           \
            while (lo < hi) {                                                                       \
                i64 mid = (lo + hi) >> 1;                                                           \
                if (BEFORE(&tr, &q->a[mid])) hi = mid;                                              \
                else lo = mid + 1;                                                                  \
            }                                                                                       \
            at = lo;                                                                                \
            memmove(q->a + at + 1, q->a + at, (size_t)(q->n - at) * sizeof(Tr));                    \
        }                                                                                           \
        q->a[at] = tr;                                                                              \
        q->n++;                                                                                     \
        return 0;                                                                                   \
    }
FRONT_ADD(queue_add, queued_before)
FRONT_ADD(heads_add, head_before)

static inline i64 front_len(const Front *q) { return q->n - q->first; }
static inline Tr *front_first(Front *q) { return &q->a[q->first]; }

static Tr front_take(Front *q) {
    Tr tr = q->a[q->first++];
    if (q->first == q->n) q->first = q->n = 0;
    return tr;
}

typedef Front Queue;

typedef struct { i64 n; i64 *k; double *r; } Table;

typedef struct {
    Queue *queues; /* by key: the worker (conn), or 0 (fifo) */
    i64 *pending;
    i64 n_pending, cap_pending;
    double limit, v, rate;
    Front heads;
    double moved;
    i64 version;
} Dir;

typedef struct {
    Dir dirs[2];
    i64 seq, t, latency_ns;
    double connection[2];
    Table alone[2], both[2], queue_delay[2];
    int fifo;
} Link;

/* ------------------------------------------------------------------ the run (simulate.py's _Run) */

enum { K_STEP = 0, K_READY = 1, K_PULL_REQUESTED = 2, K_PUSH_REQUESTED = 3, K_PULL_HANDLED = 4,
       K_PUSH_HANDLED = 5 };
enum { K_DONE = 0, K_PUSHED = 1 };
enum { W_WORKER = 0, W_PS = 1, W_PULL = 2, W_PUSH = 3 };
enum { PULL = 0, PUSH = 1 };

typedef struct {
    i64 *remaining, *read_version, *read_ns, *starts, *ends;
    i64 done_count, step, n_starts, n_ends;
    const i64 *dur, *delay;
    const i64 *prio;
} Wk;

struct Sim {
    Engine engine;
    Pool *pools;
    Ps ps;
    Link link;
    Wk *workers;
    Pcg pcg;
    int error; /* 0, or what failed: 1 no memory, 2 time past the engine's last instant */
    i64 bad_time;
    i64 n_workers, n_tasks, n_transfers, n_variables, n_variants, warmup_steps, total_steps, gap_ns;
    i64 worker_threads, ps_threads;
    i64 rpc_cpu_ns[2];
    int random_policy;
    i64 *indeg, *succ, *succ_at, *roots, *where, *rank, *size_bytes, *var_of, *apply_var, *transfer_of;
    i64 *transfers, *fixed_prio, *durs, *delays; /* durs/delays: n_variants x n_tasks */
    i64 n_roots;
    i64 *version, *perm, *step_prio; /* step_prio: per worker, its step's transfer order */
    i64 *work; /* finish()'s work list */
    i64 n_work, cap_work;
    i64 *snap_t; double *snap_v; /* per step end: time, pull bytes, push bytes, PS busy core-ns */
    i64 n_snaps;
    i64 *stale; /* (read_ns, apply_ns, staleness) triples */
    i64 n_stale, cap_stale;
    Item *done; /* ps_fire's ops done, kept between calls (handlers are never re-entered) */
    i64 cap_done;
    Tr *finished; /* link_wake's transfers finished, likewise */
    i64 cap_finished;
};

static void fail(Sim *s, int code) {
    if (!s->error) s->error = code;
}

static void engine_at(Sim *s, Engine *e, i64 time_ns, i64 priority, i64 handler, i64 arg) {
    if (time_ns < e->now) time_ns = e->now;
    if (time_ns > MAX_TIME_NS) {
        if (!s->error) s->bad_time = time_ns;
        fail(s, 2);
        return;
    }
    if (e->n + 1 > e->cap) { /* the two arrays grow alike; cap is the calls' */
        i64 key_cap = e->cap;
        if (GROW(e->key, key_cap, e->n + 1) || GROW(e->call, e->cap, e->n + 1)) {
            fail(s, 1);
            return;
        }
    }
    u128 v = ((u128)(uint64_t)(time_ns << 2 | priority) << 64) | (uint64_t)e->seq++;
    i64 i = e->n++;
    while (i > 0) {
        i64 p = (i - 1) >> 2;
        if (e->key[p] < v) break; /* (every earlier event has a lower seq) */
        e->key[i] = e->key[p];
        e->call[i] = e->call[p];
        i = p;
    }
    e->key[i] = v;
    e->call[i] = (Call){handler, arg};
}

static void run_done(Sim *s, i64 token);
static void run_fire(Sim *s, i64 argument);

/* --- CpuPool */

static void pool_run(Sim *s, i64 w, i64 dur_ns, i64 token) {
    Pool *p = &s->pools[w];
    i64 thread = intheap_pop(&p->free);
    p->token[thread] = token;
    engine_at(s, &s->engine, s->engine.now + dur_ns, P_DONE, H_POOL + w, thread);
}

static void pool_dispatch(Sim *s, i64 w) {
    Pool *p = &s->pools[w];
    while (p->queue.n && p->free.n) {
        Wait x = WaitHeap_pop(&p->queue);
        pool_run(s, w, x.dur, x.token);
    }
}

static inline int pool_idle(Pool *p) { return p->free.n && !p->queue.n; }

static void pool_request(Sim *s, i64 w, i64 key, i64 dur_ns, i64 token) {
    Pool *p = &s->pools[w];
    if (p->free.n && !p->queue.n) {
        pool_run(s, w, dur_ns, token);
        return;
    }
    Wait x = {key, p->seq, dur_ns, token};
    if (WaitHeap_push(&p->queue, x)) {
        fail(s, 1);
        return;
    }
    p->seq++;
    pool_dispatch(s, w);
}

static void pool_fire(Sim *s, i64 w, i64 thread) {
    Pool *p = &s->pools[w];
    if (intheap_push(&p->free, thread)) {
        fail(s, 1);
        return;
    }
    run_done(s, p->token[thread]);
    if (p->queue.n) pool_dispatch(s, w);
}

/* --- PsCpu */

static void ps_renew(Ps *c) {
    if (c->period_ns && c->t >= c->period_end) {
        c->period_end = (c->t / c->period_ns + 1) * c->period_ns; /* t >= 0: floor division */
        c->budget = c->quota_ns;
    }
}

static void ps_advance(Sim *s) {
    Ps *c = &s->ps;
    i64 now = s->engine.now;
    if (!c->items.n) {
        c->t = now;
        ps_renew(c);
        return;
    }
    ps_renew(c);
    while (c->t < now) {
        i64 end = !c->period_ns ? now : (now < c->period_end ? now : c->period_end);
        i64 n = c->items.n;
        if (n && c->budget > 0) {
            double using = ((double)n < c->speed) ? (double)n : c->speed; /* min(n, speed): n when equal */
            double a = (double)(end - c->t), b = c->budget / using;
            double dt = (b < a) ? b : a;
            c->v += c->rate * dt;
            c->busy += using * dt;
            c->budget -= using * dt;
        }
        c->t = end;
        ps_renew(c);
    }
}

static void ps_start(Sim *s, Item item, i64 slot) {
    Ps *c = &s->ps;
    c->seq++;
    item.v_end = c->v + (double)item.work;
    item.seq = c->seq;
    item.slot = slot;
    if (ItemHeap_push(&c->items, item)) fail(s, 1);
}

static void ps_take(Sim *s) {
    Ps *c = &s->ps;
    while (c->waiting.n && c->free_threads.n) {
        Item item = ring_pop(&c->waiting);
        ps_start(s, item, intheap_pop(&c->free_threads));
    }
    while (c->handles.n && c->free_handlers) {
        Item item = ring_pop(&c->handles);
        c->free_handlers--;
        ps_start(s, item, -1);
        engine_at(s, &s->engine, s->engine.now, P_ARRIVE, H_RUN, item.token);
    }
}

static void ps_reschedule(Sim *s) {
    Ps *c = &s->ps;
    c->version++;
    i64 n = c->items.n;
    if (!n) return;
    double share = c->speed / (double)n;
    c->rate = (share < 1.0) ? share : 1.0;
    double need = c->items.a[0].v_end - c->v;
    i64 at;
    if (need <= 1e-6) {
        at = c->t;
    } else if (c->budget <= 1e-6) {
        at = c->period_end;
    } else {
        double using = ((double)n < c->speed) ? (double)n : c->speed;
        double x = need / c->rate, y = c->budget / using;
        double m = (y < x) ? y : x;
        i64 wait = (i64)ceil(m - 1e-9);
        at = c->t + (wait > 1 ? wait : 1);
        if (c->period_ns) {
            i64 edge = c->t + 1 > c->period_end ? c->t + 1 : c->period_end;
            at = at < edge ? at : edge;
        }
    }
    engine_at(s, &s->engine, at, P_DONE, H_PS, c->version);
}

static void ps_admit(Sim *s) {
    Ps *c = &s->ps;
    if (!((c->waiting.n && c->free_threads.n) || (c->handles.n && c->free_handlers))) return;
    ps_advance(s);
    ps_take(s);
    ps_reschedule(s);
}

static inline int ps_idle(Ps *c) { return c->free_threads.n && !c->waiting.n; }

/* an op (request: the run is told when it ends) or a request's handling (handle: the run is told when it
 * starts) joins its line */
static void ps_enqueue(Sim *s, Ring *line, i64 work_ns, i64 token, int op) {
    Item item = {work_ns, token, 0, -1, 0.0, op};
    if (ring_push(line, item)) {
        fail(s, 1);
        return;
    }
    ps_admit(s);
}

static void ps_request(Sim *s, i64 dur_ns, i64 token) { ps_enqueue(s, &s->ps.waiting, dur_ns, token, 1); }

static void ps_handle(Sim *s, i64 work_ns, i64 token) { ps_enqueue(s, &s->ps.handles, work_ns, token, 0); }

static void ps_fire(Sim *s, i64 version) {
    Ps *c = &s->ps;
    if (version != c->version) return;
    ps_advance(s);
    /* the ops done, in the order they finish (handlings tell no one) */
    i64 n_done = 0;
    while (c->items.n && c->items.a[0].v_end <= c->v + 1e-6) {
        Item item = ItemHeap_pop(&c->items);
        if (item.slot >= 0) {
            if (intheap_push(&c->free_threads, item.slot)) fail(s, 1);
        } else {
            c->free_handlers++;
        }
        if (item.op) {
            if (GROW(s->done, s->cap_done, n_done + 1)) {
                fail(s, 1);
                break;
            }
            s->done[n_done++] = item;
        }
    }
    ps_take(s);
    ps_reschedule(s);
    for (i64 i = 0; i < n_done && !s->error; i++) run_done(s, s->done[i].token);
}

static double ps_busy_ns(Sim *s) {
    ps_advance(s);
    return s->ps.busy;
}

/* --- FlowLink */

static double interpolate(const Table *t, i64 k) {
    if (k <= t->k[0]) return t->r[0];
    for (i64 i = 0; i + 1 < t->n; i++) {
        i64 k0 = t->k[i], k1 = t->k[i + 1];
        double r0 = t->r[i], r1 = t->r[i + 1];
        if (k <= k1) return r0 + (r1 - r0) * (double)(k - k0) / (double)(k1 - k0);
    }
    return t->r[t->n - 1];
}

static i64 link_crossing_delay(Link *l, int direction) {
    i64 k = front_len(&l->dirs[direction].heads);
    if (!k) return 0;
    return (i64)nearbyint(interpolate(&l->queue_delay[direction], k)); /* round(): ties to even */
}

static i64 link_request_delay(Link *l, int crosses) {
    return l->latency_ns + (crosses < 0 ? 0 : link_crossing_delay(l, crosses));
}

static double link_moved_bytes(Sim *s, int direction) {
    Link *l = &s->link;
    Dir *d = &l->dirs[direction];
    i64 dt = s->engine.now - l->t;
    /* the one group's heads at its rate since the last change (none: nothing, as the reference's empty sum) */
    i64 n = front_len(&d->heads);
    return n ? d->moved + d->rate * (double)n * (double)dt / 1e9 : d->moved;
}

static void link_advance(Sim *s) {
    Link *l = &s->link;
    i64 now = s->engine.now, dt = now - l->t;
    if (dt) {
        for (int direction = 0; direction < 2; direction++) {
            Dir *d = &l->dirs[direction];
            if (front_len(&d->heads)) {
                d->v += d->rate * (double)dt / 1e9;
                d->moved += d->rate * (double)front_len(&d->heads) * (double)dt / 1e9;
            }
        }
        l->t = now;
    }
}

static void link_reshare(Sim *s, int changed, int was_busy) {
    Link *l = &s->link;
    int flipped = was_busy != (front_len(&l->dirs[changed].heads) > 0);
    for (int direction = 0; direction < 2; direction++) {
        if (direction != changed && !flipped) continue;
        Dir *d = &l->dirs[direction];
        i64 k = front_len(&d->heads);
        d->version++;
        if (!k) continue;
        int other_busy = front_len(&l->dirs[1 - direction].heads) > 0;
        double capacity = interpolate(other_busy ? &l->both[direction] : &l->alone[direction], k);
        double share = capacity / (double)k;
        d->rate = (share < d->limit) ? share : d->limit;
        double need = front_first(&d->heads)->v_end - d->v;
        i64 due;
        if (need <= 1e-3) {
            due = l->t;
        } else {
            i64 wait = (i64)ceil(need * 1e9 / d->rate - 1e-6);
            due = l->t + (wait > 1 ? wait : 1);
        }
        engine_at(s, &s->engine, due, P_DONE, H_LINK, (d->version << 2) | (direction << 1) | 1);
    }
}

static void link_start(Sim *s, int direction, i64 worker, i64 size_bytes, i64 priority, i64 token) {
    Link *l = &s->link;
    l->seq++;
    i64 now = s->engine.now;
    if (size_bytes <= 0) {
        run_done(s, token);
        return;
    }
    Dir *d = &l->dirs[direction];
    i64 key = l->fifo ? 0 : worker;
    Queue *q = &d->queues[key];
    Tr tr = {now, priority, l->seq, size_bytes, token, key, 0.0};
    if (!q->exists) {
        q->exists = 1;
        if (queue_add(q, tr)) {
            fail(s, 1);
            return;
        }
        if (!d->n_pending) engine_at(s, &s->engine, now, P_LAUNCH, H_LINK, direction << 1);
        if (GROW(d->pending, d->cap_pending, d->n_pending + 1)) {
            fail(s, 1);
            return;
        }
        d->pending[d->n_pending++] = key;
    } else if (queue_add(q, tr)) {
        fail(s, 1);
    }
}

static void link_begin(Sim *s, Dir *d, Tr tr) {
    tr.v_end = d->v + (double)tr.size;
    if (heads_add(&d->heads, tr)) fail(s, 1);
}

static void link_launch(Sim *s, int direction) {
    link_advance(s);
    Dir *d = &s->link.dirs[direction];
    int was_busy = front_len(&d->heads) > 0;
    for (i64 i = 0; i < d->n_pending; i++) link_begin(s, d, front_take(&d->queues[d->pending[i]]));
    d->n_pending = 0;
    link_reshare(s, direction, was_busy);
}

static void link_wake(Sim *s, int direction, i64 version) {
    Link *l = &s->link;
    Dir *d = &l->dirs[direction];
    if (version != d->version) return;
    link_advance(s);
    int was_busy = front_len(&d->heads) > 0;
    i64 n_finished = 0;
    while (front_len(&d->heads) && front_first(&d->heads)->v_end <= d->v + 1e-3) {
        Tr head = front_take(&d->heads);
        Queue *q = &d->queues[head.key];
        if (front_len(q)) {
            link_begin(s, d, front_take(q));
        } else {
            q->exists = 0;
        }
        if (GROW(s->finished, s->cap_finished, n_finished + 1)) {
            fail(s, 1);
            break;
        }
        s->finished[n_finished++] = head;
    }
    link_reshare(s, direction, was_busy);
    for (i64 i = 0; i < n_finished && !s->error; i++) run_done(s, s->finished[i].token);
}

static void link_fire(Sim *s, i64 argument) {
    int direction = (int)((argument >> 1) & 1);
    if (argument & 1) {
        link_wake(s, direction, argument >> 2);
    } else {
        link_launch(s, direction);
    }
}

/* --- the run */

/* what a run's event or a resource's call carries: the worker, the task and what happened (no division to read
 * back; the reference packs worker * n_tasks + task, which only the run itself reads) */
static inline i64 token_of(Sim *s, i64 w, i64 t, i64 what) {
    (void)s;
    return ((w << 32) | t) << 3 | what;
}

static void run_finish(Sim *s, i64 w, i64 t);
static void run_dispatch(Sim *s, i64 w, i64 t);

static int run_instant(Sim *s, i64 w, i64 t) {
    i64 where = s->where[t];
    if (where >= W_PULL || s->workers[w].dur[t]) return 0;
    if (where == W_PS) return ps_idle(&s->ps);
    return pool_idle(&s->pools[w]);
}

static void run_ready(Sim *s, i64 w, i64 t, i64 at) {
    i64 now = s->engine.now;
    if (at > now) {
        engine_at(s, &s->engine, at, P_ARRIVE, H_RUN, token_of(s, w, t, K_READY));
    } else if (run_instant(s, w, t)) {
        run_finish(s, w, t);
    } else {
        run_dispatch(s, w, t);
    }
}

static void run_start_step(Sim *s, i64 w) {
    Wk *wk = &s->workers[w];
    i64 now = s->engine.now;
    memcpy(wk->remaining, s->indeg, (size_t)s->n_tasks * sizeof(i64));
    wk->done_count = 0;
    wk->starts[wk->n_starts++] = now;
    i64 variant = s->n_variants > 1 ? pcg_below(&s->pcg, s->n_variants) : 0;
    if (s->random_policy) { /* Generator.permutation(n_tasks)[transfers] */
        i64 *prio = s->step_prio + w * s->n_transfers;
        pcg_permutation(&s->pcg, s->n_tasks, s->perm);
        for (i64 i = 0; i < s->n_transfers; i++) prio[i] = s->perm[s->transfers[i]];
        wk->prio = prio;
    } else {
        wk->prio = s->fixed_prio;
    }
    for (i64 v = 0; v < s->n_variables; v++) wk->read_version[v] = -1;
    wk->dur = s->durs + variant * s->n_tasks;
    wk->delay = s->delays + variant * s->n_tasks;
    for (i64 i = 0; i < s->n_roots && !s->error; i++) {
        i64 t = s->roots[i];
        run_ready(s, w, t, now + wk->delay[t]);
    }
}

static void run_dispatch(Sim *s, i64 w, i64 t) {
    Wk *wk = &s->workers[w];
    i64 now = s->engine.now, where = s->where[t];
    if (where == W_WORKER) {
        pool_request(s, w, s->rank[t], wk->dur[t], token_of(s, w, t, K_DONE));
    } else if (where == W_PS) {
        ps_request(s, wk->dur[t], token_of(s, w, t, K_DONE));
    } else if (where == W_PULL) {
        i64 v = s->var_of[t];
        if (v >= 0 && wk->read_version[v] < 0) {
            wk->read_version[v] = s->version[v];
            wk->read_ns[v] = now;
        }
        engine_at(s, &s->engine, now + link_request_delay(&s->link, PUSH), P_ARRIVE, H_RUN,
                  token_of(s, w, t, K_PULL_REQUESTED));
    } else {
        engine_at(s, &s->engine, now + link_request_delay(&s->link, -1), P_ARRIVE, H_RUN,
                  token_of(s, w, t, K_PUSH_REQUESTED));
    }
}

static void run_send_pull(Sim *s, i64 w, i64 t) {
    link_start(s, PULL, w, s->size_bytes[t], s->workers[w].prio[s->transfer_of[t]], token_of(s, w, t, K_DONE));
}

static void run_pull_requested(Sim *s, i64 w, i64 t) {
    if (s->rpc_cpu_ns[PULL]) {
        ps_handle(s, s->rpc_cpu_ns[PULL], token_of(s, w, t, K_PULL_HANDLED));
    } else {
        run_send_pull(s, w, t);
    }
}

static void run_push_requested(Sim *s, i64 w, i64 t) {
    link_start(s, PUSH, w, s->size_bytes[t], s->workers[w].prio[s->transfer_of[t]], token_of(s, w, t, K_PUSHED));
}

static void run_pushed(Sim *s, i64 w, i64 t) {
    if (s->rpc_cpu_ns[PUSH]) {
        i64 token = token_of(s, w, t, K_PUSH_HANDLED);
        ps_handle(s, s->rpc_cpu_ns[PUSH], token);
    } else {
        run_finish(s, w, t);
    }
}

static i64 run_applied(Sim *s, i64 w, i64 v) {
    Wk *wk = &s->workers[w];
    i64 read = wk->read_version[v];
    i64 stale = read >= 0 ? s->version[v] - read : -1;
    s->version[v] += 1;
    if (stale >= 0 && wk->step >= s->warmup_steps) {
        if (GROW(s->stale, s->cap_stale, 3 * (s->n_stale + 1))) {
            fail(s, 1);
            return stale;
        }
        i64 *row = s->stale + 3 * s->n_stale++;
        row[0] = wk->read_ns[v];
        row[1] = s->engine.now;
        row[2] = stale;
    }
    return stale;
}

static void run_end_step(Sim *s, i64 w) {
    Wk *wk = &s->workers[w];
    i64 now = s->engine.now;
    wk->ends[wk->n_ends++] = now;
    double pull = link_moved_bytes(s, PULL), push = link_moved_bytes(s, PUSH), busy = ps_busy_ns(s);
    s->snap_t[s->n_snaps] = now;
    s->snap_v[3 * s->n_snaps] = pull;
    s->snap_v[3 * s->n_snaps + 1] = push;
    s->snap_v[3 * s->n_snaps + 2] = busy;
    s->n_snaps++;
    wk->step++;
    if (wk->step < s->total_steps) {
        i64 done = link_crossing_delay(&s->link, PULL);
        engine_at(s, &s->engine, now + s->gap_ns + done, P_START, H_RUN, w << 3 | K_STEP);
    }
}

static void run_finish(Sim *s, i64 w, i64 t) {
    Wk *wk = &s->workers[w];
    i64 now = s->engine.now;
    i64 *rem = wk->remaining;
    const i64 *delay = wk->delay;
    i64 base = s->n_work; /* this call's part of the work list (a nested finish uses the part after it) */
    i64 task = t, n_done = 0;
    for (;;) {
        if (s->apply_var[task] >= 0) run_applied(s, w, s->apply_var[task]);
        for (i64 i = s->succ_at[task]; i < s->succ_at[task + 1]; i++) {
            i64 succ = s->succ[i];
            i64 left = rem[succ] - 1;
            rem[succ] = left;
            if (left == 0) {
                i64 at = now + delay[succ];
                if (at > now) {
                    engine_at(s, &s->engine, at, P_ARRIVE, H_RUN, token_of(s, w, succ, K_READY));
                } else if (run_instant(s, w, succ)) {
                    if (GROW(s->work, s->cap_work, s->n_work + 1)) {
                        fail(s, 1);
                        return;
                    }
                    s->work[s->n_work++] = succ;
                } else {
                    run_dispatch(s, w, succ);
                }
            }
        }
        n_done++;
        if (s->n_work == base || s->error) break;
        task = s->work[--s->n_work];
    }
    wk->done_count += n_done;
    if (wk->done_count == s->n_tasks) run_end_step(s, w);
}

static void run_done(Sim *s, i64 token) {
    i64 w = token >> 35, t = (token >> 3) & 0xffffffffLL;
    if ((token & 7) == K_PUSHED) {
        run_pushed(s, w, t);
    } else {
        run_finish(s, w, t);
    }
}

static void run_fire(Sim *s, i64 argument) {
    i64 what = argument & 7;
    if (what == K_STEP) {
        run_start_step(s, argument >> 3);
        return;
    }
    i64 w = argument >> 35, t = (argument >> 3) & 0xffffffffLL;
    switch (what) {
    case K_READY: run_ready(s, w, t, s->engine.now); break;
    case K_PULL_REQUESTED: run_pull_requested(s, w, t); break;
    case K_PUSH_REQUESTED: run_push_requested(s, w, t); break;
    case K_PULL_HANDLED: run_send_pull(s, w, t); break;
    default: run_finish(s, w, t); break;
    }
}

/* ------------------------------------------------------------------ the module */

/* a sequence of ints as a new C array of n items (n: its length, or -1 for any); NULL with an exception set */
static i64 *ints_of(PyObject *obj, i64 *n, const char *what) {
    PyObject *seq = PySequence_Fast(obj, what);
    if (!seq) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (*n >= 0 && len != *n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd items, not %lld", what, len, (long long)*n);
        Py_DECREF(seq);
        return NULL;
    }
    i64 *out = malloc((size_t)(len ? len : 1) * sizeof(i64));
    if (!out) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < len; i++) {
        out[i] = PyLong_AsLongLong(items[i]);
        if (out[i] == -1 && PyErr_Occurred()) {
            free(out);
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    *n = len;
    return out;
}

/* a rate table: a sequence of (connections, bytes/s) pairs */
static int table_of(PyObject *obj, Table *t) {
    PyObject *seq = PySequence_Fast(obj, "a link table");
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    t->n = len;
    t->k = malloc((size_t)(len ? len : 1) * sizeof(i64));
    t->r = malloc((size_t)(len ? len : 1) * sizeof(double));
    if (!t->k || !t->r || !len) {
        Py_DECREF(seq);
        if (!PyErr_Occurred()) {
            if (!len) PyErr_SetString(PyExc_ValueError, "an empty link table");
            else PyErr_NoMemory();
        }
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
        long long k;
        double r;
        if (!PyArg_ParseTuple(pair, "Ld", &k, &r)) {
            Py_DECREF(seq);
            return -1;
        }
        t->k[i] = k;
        t->r[i] = r;
    }
    Py_DECREF(seq);
    return 0;
}

static void table_free(Table *t) {
    free(t->k);
    free(t->r);
}

static void sim_free(Sim *s) {
    free(s->engine.key);
    free(s->engine.call);
    if (s->pools) {
        for (i64 w = 0; w < s->n_workers; w++) {
            free(s->pools[w].free.a);
            free(s->pools[w].queue.a);
            free(s->pools[w].token);
        }
        free(s->pools);
    }
    free(s->ps.free_threads.a);
    free(s->ps.waiting.a);
    free(s->ps.handles.a);
    free(s->ps.items.a);
    for (int d = 0; d < 2; d++) {
        Dir *dir = &s->link.dirs[d];
        if (dir->queues) {
            i64 nq = s->link.fifo ? 1 : s->n_workers;
            for (i64 q = 0; q < nq; q++) free(dir->queues[q].a);
            free(dir->queues);
        }
        free(dir->pending);
        free(dir->heads.a);
        table_free(&s->link.alone[d]);
        table_free(&s->link.both[d]);
        table_free(&s->link.queue_delay[d]);
    }
    if (s->workers) {
        for (i64 w = 0; w < s->n_workers; w++) {
            Wk *wk = &s->workers[w];
            free(wk->remaining);
            free(wk->read_version);
            free(wk->read_ns);
            free(wk->starts);
            free(wk->ends);
        }
        free(s->workers);
    }
    free(s->indeg); free(s->succ); free(s->succ_at); free(s->roots); free(s->where); free(s->rank);
    free(s->size_bytes); free(s->var_of); free(s->apply_var); free(s->transfer_of); free(s->transfers);
    free(s->fixed_prio); free(s->durs); free(s->delays);
    free(s->version); free(s->perm); free(s->step_prio); free(s->work);
    free(s->snap_t); free(s->snap_v); free(s->stale); free(s->done); free(s->finished);
}

static PyObject *tuple_of_ints(const i64 *a, i64 n) {
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    if (!t) return NULL;
    for (i64 i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLongLong(a[i]);
        if (!v) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
    }
    return t;
}

static PyObject *results(Sim *s) {
    PyObject *starts = PyTuple_New((Py_ssize_t)s->n_workers), *ends = PyTuple_New((Py_ssize_t)s->n_workers);
    PyObject *snaps = PyTuple_New((Py_ssize_t)s->n_snaps);
    /* the (read_ns, apply_ns, staleness) triples packed, as SimResult.staleness holds them: one copy, no objects */
    PyObject *stale = PyBytes_FromStringAndSize(s->n_stale ? (const char *)s->stale : "",
                                                (Py_ssize_t)(3 * s->n_stale * (i64)sizeof(i64)));
    PyObject *out = NULL;
    if (!starts || !ends || !snaps || !stale) goto done;
    for (i64 w = 0; w < s->n_workers; w++) {
        PyObject *a = tuple_of_ints(s->workers[w].starts, s->workers[w].n_starts);
        if (!a) goto done;
        PyTuple_SET_ITEM(starts, (Py_ssize_t)w, a);
        PyObject *b = tuple_of_ints(s->workers[w].ends, s->workers[w].n_ends);
        if (!b) goto done;
        PyTuple_SET_ITEM(ends, (Py_ssize_t)w, b);
    }
    for (i64 i = 0; i < s->n_snaps; i++) {
        PyObject *row = Py_BuildValue("(Lddd)", (long long)s->snap_t[i], s->snap_v[3 * i], s->snap_v[3 * i + 1],
                                      s->snap_v[3 * i + 2]);
        if (!row) goto done;
        PyTuple_SET_ITEM(snaps, (Py_ssize_t)i, row);
    }
    out = Py_BuildValue("(OOLLOO)", starts, ends, (long long)s->engine.now, (long long)s->engine.n_events, snaps,
                        stale);
done:
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(snaps);
    Py_XDECREF(stale);
    return out;
}

static int sim_alloc(Sim *s) {
    i64 W = s->n_workers, N = s->n_tasks, S = s->total_steps;
    s->pools = calloc((size_t)W, sizeof(Pool));
    s->workers = calloc((size_t)W, sizeof(Wk));
    s->version = calloc((size_t)(s->n_variables ? s->n_variables : 1), sizeof(i64));
    s->perm = malloc((size_t)(N ? N : 1) * sizeof(i64));
    s->step_prio = s->random_policy ? malloc((size_t)(W * (s->n_transfers ? s->n_transfers : 1)) * sizeof(i64)) : NULL;
    s->snap_t = malloc((size_t)(W * S) * sizeof(i64));
    s->snap_v = malloc((size_t)(3 * W * S) * sizeof(double));
    if (!s->pools || !s->workers || !s->version || !s->perm || !s->snap_t || !s->snap_v
        || (s->random_policy && !s->step_prio))
        return -1;
    for (i64 w = 0; w < W; w++) {
        Pool *p = &s->pools[w];
        p->token = calloc((size_t)s->worker_threads, sizeof(i64));
        if (!p->token) return -1;
        for (i64 i = 0; i < s->worker_threads; i++)
            if (intheap_push(&p->free, i)) return -1;
        Wk *wk = &s->workers[w];
        i64 nv = s->n_variables ? s->n_variables : 1;
        wk->remaining = malloc((size_t)(N ? N : 1) * sizeof(i64));
        wk->read_version = malloc((size_t)nv * sizeof(i64));
        wk->read_ns = calloc((size_t)nv, sizeof(i64));
        wk->starts = malloc((size_t)S * sizeof(i64));
        wk->ends = malloc((size_t)S * sizeof(i64));
        if (!wk->remaining || !wk->read_version || !wk->read_ns || !wk->starts || !wk->ends) return -1;
        for (i64 v = 0; v < nv; v++) wk->read_version[v] = -1;
        wk->dur = s->durs;
        wk->delay = s->delays;
        wk->prio = s->fixed_prio;
    }
    for (i64 i = 0; i < s->ps_threads; i++)
        if (intheap_push(&s->ps.free_threads, i)) return -1;
    for (int d = 0; d < 2; d++) {
        i64 nq = s->link.fifo ? 1 : W;
        s->link.dirs[d].queues = calloc((size_t)nq, sizeof(Queue));
        if (!s->link.dirs[d].queues) return -1;
        s->link.dirs[d].limit = s->link.connection[d];
    }
    return 0;
}

PyDoc_STRVAR(simulate_doc, "simulate(scalars, arrays, tables) -> (step starts, step ends, end_ns, n_events, "
                           "snapshots, staleness): tracegen/fastcore.py says what each holds.");

static PyObject *core_simulate(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *scalars, *arrays, *tables;
    if (!PyArg_ParseTuple(args, "OOO", &scalars, &arrays, &tables)) return NULL;
    Sim *s = calloc(1, sizeof(Sim));
    if (!s) return PyErr_NoMemory();
    PyObject *out = NULL;
    long long n_workers, n_tasks, n_variables, warmup, total, gap, wthreads, pthreads, rpc_pull, rpc_push, random_policy,
        fifo, latency, period, free_handlers;
    unsigned long long st_hi, st_lo, inc_hi, inc_lo, uinteger;
    int has_uint32;
    double conn_pull, conn_push, speed, quota;
    if (!PyArg_ParseTuple(scalars, "LLLLLLLLLLLLLddddLLKKKKpK", &n_workers, &n_tasks, &n_variables, &warmup, &total,
                          &gap, &wthreads, &pthreads, &rpc_pull, &rpc_push, &random_policy, &fifo, &latency,
                          &conn_pull, &conn_push, &speed, &quota, &period, &free_handlers, &st_hi,
                          &st_lo, &inc_hi, &inc_lo, &has_uint32, &uinteger))
        goto done;
    s->n_workers = n_workers; s->n_tasks = n_tasks; s->n_variables = n_variables; s->warmup_steps = warmup;
    s->total_steps = total; s->gap_ns = gap; s->worker_threads = wthreads; s->ps_threads = pthreads;
    s->rpc_cpu_ns[PULL] = rpc_pull; s->rpc_cpu_ns[PUSH] = rpc_push; s->random_policy = (int)random_policy;
    s->link.fifo = (int)fifo; s->link.latency_ns = latency;
    s->link.connection[PULL] = conn_pull; s->link.connection[PUSH] = conn_push;
    s->ps.speed = speed; s->ps.quota_ns = quota; s->ps.budget = quota;
    s->ps.period_ns = period; s->ps.period_end = period; s->ps.free_handlers = free_handlers;
    s->ps.rate = 1.0; s->ps.v = 0.0;
    s->pcg.state = ((u128)st_hi << 64) | st_lo;
    s->pcg.inc = ((u128)inc_hi << 64) | inc_lo;
    s->pcg.has_uint32 = has_uint32;
    s->pcg.uinteger = (uint32_t)uinteger;
    if (n_workers < 1 || n_workers >= (1LL << 27) || n_tasks < 1 || n_tasks >= (1LL << 32) || total < 1
        || wthreads < 1 || pthreads < 1 || n_variables < 0) {
        PyErr_SetString(PyExc_ValueError, "simulate: a count out of range (workers below 2**27, tasks 2**32)");
        goto done;
    }
    PyObject *offsets_obj, *a[14];
    if (!PyArg_ParseTuple(arrays, "OOOOOOOOOOOOOOO", &offsets_obj, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6],
                          &a[7], &a[8], &a[9], &a[10], &a[11], &a[12], &a[13]))
        goto done;
    i64 n_offsets = n_workers;
    i64 *offsets = ints_of(offsets_obj, &n_offsets, "offsets");
    if (!offsets) goto done;
    /* the task graph's tables, in fastcore.Settings' order: each of the length given (-1: any) */
    struct { const char *name; i64 **into; i64 length; } tables_of_tasks[14] = {
        {"indeg", &s->indeg, n_tasks}, {"succ", &s->succ, -1}, {"succ_at", &s->succ_at, n_tasks + 1},
        {"roots", &s->roots, -1}, {"where", &s->where, n_tasks}, {"rank", &s->rank, n_tasks},
        {"size_bytes", &s->size_bytes, n_tasks}, {"var_of", &s->var_of, n_tasks},
        {"apply_var", &s->apply_var, n_tasks}, {"transfer_of", &s->transfer_of, n_tasks},
        {"transfers", &s->transfers, -1}, {"fixed_prio", &s->fixed_prio, -1}, {"durs", &s->durs, -1},
        {"delays", &s->delays, -1}};
    i64 found[14];
    for (int i = 0; i < 14; i++) {
        found[i] = tables_of_tasks[i].length;
        *tables_of_tasks[i].into = ints_of(a[i], &found[i], tables_of_tasks[i].name);
        if (!*tables_of_tasks[i].into) {
            free(offsets);
            goto done;
        }
    }
    i64 n_roots = found[3], n_transfers = found[10], n_fixed = found[11], n_durs = found[12], n_delays = found[13];
    s->n_roots = n_roots;
    s->n_transfers = n_transfers;
    s->n_variants = n_durs / n_tasks;
    if (n_durs != s->n_variants * n_tasks || n_delays != n_durs || s->n_variants < 1
        || (!random_policy && n_fixed != n_transfers)) {
        PyErr_SetString(PyExc_ValueError, "simulate: the timing tables or the transfer order do not fit the tasks");
        free(offsets);
        goto done;
    }
    PyObject *t[6];
    if (!PyArg_ParseTuple(tables, "OOOOOO", &t[0], &t[1], &t[2], &t[3], &t[4], &t[5])
        || table_of(t[0], &s->link.alone[PULL]) || table_of(t[1], &s->link.alone[PUSH])
        || table_of(t[2], &s->link.both[PULL]) || table_of(t[3], &s->link.both[PUSH])
        || table_of(t[4], &s->link.queue_delay[PULL]) || table_of(t[5], &s->link.queue_delay[PUSH])) {
        free(offsets);
        goto done;
    }
    if (sim_alloc(s)) {
        free(offsets);
        PyErr_NoMemory();
        goto done;
    }
    for (i64 w = 0; w < n_workers; w++) engine_at(s, &s->engine, offsets[w], P_START, H_RUN, w << 3 | K_STEP);
    free(offsets);
    int interrupted = 0;
    while (s->engine.n && !s->error) { /* a million events at a time, then Python's signal handlers (Ctrl-C) */
        Py_BEGIN_ALLOW_THREADS
        for (i64 left = 1 << 20; left && s->engine.n && !s->error; left--) {
            Ev e = engine_pop(&s->engine);
            s->engine.n_events++;
            switch (e.handler) {
            case H_RUN: run_fire(s, e.arg); break;
            case H_LINK: link_fire(s, e.arg); break;
            case H_PS: ps_fire(s, e.arg); break;
            default: pool_fire(s, e.handler - H_POOL, e.arg); break;
            }
        }
        Py_END_ALLOW_THREADS
        if (PyErr_CheckSignals() < 0) {
            interrupted = 1;
            break;
        }
    }
    if (interrupted) {
        /* the handler's exception (KeyboardInterrupt, or what tracegen's handlers raise) is set */
    } else if (s->error == 1) {
        PyErr_NoMemory();
    } else if (s->error == 2) {
        PyErr_Format(PyExc_OverflowError, "an event at %lld ns is past the engine's last instant (%lld ns)",
                     (long long)s->bad_time, (long long)MAX_TIME_NS);
    } else {
        out = results(s);
    }
done:
    sim_free(s);
    free(s);
    return out;
}

static PyObject *core_stream(PyObject *self, PyObject *args) {
    (void)self;
    unsigned long long st_hi, st_lo, inc_hi, inc_lo, uinteger;
    int has_uint32;
    long long below, permute;
    if (!PyArg_ParseTuple(args, "KKKKpKLL", &st_hi, &st_lo, &inc_hi, &inc_lo, &has_uint32, &uinteger, &below,
                          &permute))
        return NULL;
    if (below < 2 || below > 0x100000000LL || permute < 1 || permute > 1000000) {
        PyErr_SetString(PyExc_ValueError, "stream: 2 <= below <= 2**32, 1 <= permute <= 10**6");
        return NULL;
    }
    Pcg p = {((u128)st_hi << 64) | st_lo, ((u128)inc_hi << 64) | inc_lo, has_uint32, (uint32_t)uinteger};
    i64 *perm = malloc((size_t)permute * sizeof(i64));
    if (!perm) return PyErr_NoMemory();
    i64 first = pcg_below(&p, below);
    pcg_permutation(&p, permute, perm);
    PyObject *ints = tuple_of_ints(perm, permute);
    free(perm);
    if (!ints) return NULL;
    return Py_BuildValue("(LN)", (long long)first, ints);
}

PyDoc_STRVAR(stream_doc, "stream(state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger, below, permute) -> "
                         "(Generator.integers(below), Generator.permutation(permute)) from that PCG64 state: what "
                         "fastcore checks against numpy before it lets this module draw a run's numbers.");

static PyMethodDef methods[] = {
    {"simulate", core_simulate, METH_VARARGS, simulate_doc},
    {"stream", core_stream, METH_VARARGS, stream_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tracegen._core",
                                    "The simulation of tracegen/simulate.py in C (tracegen/fastcore.py).", -1,
                                    methods, NULL, NULL, NULL, NULL};

#ifndef CORE_SOURCE_DIGEST
#define CORE_SOURCE_DIGEST "" /* setup.py defines it: the sha256 of this file as built */
#endif

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "SOURCE_DIGEST", CORE_SOURCE_DIGEST)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
