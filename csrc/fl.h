/* fabriclab core: the types every part of the core shares.
 *
 * The core only times loops and emits raw samples (docs/core-protocol.md);
 * every statistic is computed in Python. A benchmark ("kernel") owns only its
 * timed loop: the runner (runner.c) owns the sweep, warm-up, batching,
 * cross-rank reduction (slowest rank per sample), stopping and output. */
#ifndef FL_H
#define FL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define FL_MAX_PARAMS 32
#define FL_NOTE_LEN 256
#define FL_INFO_LEN 1024
#define FL_MAX_PHASES 4   /* app kernels: named parts of one op (pack, exchange, ...) */
#define FL_MAX_COUNTERS 1024 /* kernel counters per rank (fl_shape.counter_names) */

#if defined(__GNUC__)
#define FL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define FL_PRINTF(f, a)
#endif

typedef struct {
    const char *key;
    const char *value;
} fl_kv;

/* The role of a rank in a traffic pattern (docs/core-protocol.md, --layouts). */
enum { FL_IDLE = 'i', FL_SENDER = 's', FL_RECEIVER = 'r', FL_TARGET = 't', FL_BOTH = 'b',
       FL_VICTIM = 'v', FL_AGGRESSOR = 'a' };

/* One rank layout of a pattern: a role and a peer (-1: none) per rank. */
typedef struct {
    int active;  /* the number of active participants it stands for */
    char *role;  /* nranks role letters */
    int *peer;   /* nranks peers */
} fl_layout;

/* One option table for every benchmark (nccl-tests: "all tests support the
 * same arguments"); family-specific knobs arrive as key=value params. */
typedef struct {
    int64_t *sizes;
    int nsizes;
    int64_t *buffers;  /* per size: distinct buffers ops rotate through (cache state) */
    int nbuffers;
    int64_t *strides;  /* in 8-byte words; {1} when the benchmark has no stride axis */
    int nstrides;
    int64_t *conns;    /* connections or outstanding receives; {1} without that axis */
    int nconns;
    fl_layout *layouts; /* pattern layouts; NULL for two-rank benchmarks */
    int nlayouts;
    char *layout_text;
    int64_t warmup;    /* warm-up ops per point, run and discarded */
    int min_samples;
    int max_samples;
    double target_ci;  /* stop when the 95% CI of the median is within +-target_ci */
    double point_time; /* per-point time cap in seconds */
    double sample_time;/* minimum duration of one sample: ops are batched up to it */
    double per_op;     /* seconds of single ops timed one by one after the samples; 0: none */
    int validate;      /* run the verify pass of every point */
    fl_kv params[FL_MAX_PARAMS];
    int nparams;
} fl_opts;

typedef struct {
    MPI_Comm comm;      /* all ranks taking part */
    int rank, nranks;
    MPI_Comm node_comm; /* ranks that share memory with this one */
    int node_rank, node_size;
    const fl_opts *opts;
    double timer_overhead; /* seconds per fl_now() call, measured at start */
} fl_ctx;

/* One point of a sweep as the runner hands it to a kernel. */
typedef struct {
    int64_t size;    /* payload bytes of one transfer (memory: bytes copied) */
    int64_t stride;  /* in 8-byte words; 1 = contiguous */
    int64_t conns;   /* connections or outstanding receives; 1 without that axis */
    int64_t buffers; /* distinct buffers per side that ops rotate through (>= 1):
                      * under window_buffers=per-op at least a window's, so
                      * every op of a window has its own; few keep them
                      * cache-resident (warm), many exceed
                      * twice the last-level cache (cold); op i uses buffer
                      * i % buffers (Python plans them: suite/buffers.py) */
    const fl_layout *layout; /* pattern benchmarks: this point's roles; else NULL */
} fl_point;

/* What a kernel's setup tells the runner about a point. */
typedef struct {
    int64_t bytes_per_op; /* payload bytes actually moved by one op, all legs together */
    int legs_per_op;      /* one-way transfers per op (ping-pong round trip: 2) */
    int timed;            /* 1 if this rank's time counts; passive targets set 0 */
    char note[FL_NOTE_LEN]; /* reason for FL_SKIP / FL_ERROR */
    char info[FL_INFO_LEN]; /* optional JSON object text recorded with the point */
    int64_t batch_multiple; /* batch is rounded up to a multiple of this, so a
                             * windowed kernel times whole windows; 0 = any */
    double min_sample_s;    /* a sample lasts at least this, where the run's
                             * sample time is shorter (0: the run's); rank 0's counts */
    /* Pattern benchmarks, per rank: payload bytes this rank sends and
     * receives per op, and messages it sends per op (message rate). */
    int64_t sent_bytes, recv_bytes, messages;
    int64_t buffers; /* buffers this kernel really rotates through, when it
                      * cannot follow the point's (0: the point's) */
    int64_t working_set; /* bytes of the largest region one side of this rank's
                          * ops rotates through, when not buffers x size
                          * (0: that; -1: none, an app's op) */
    /* App kernels: the parts one op is made of, "pack,exchange,unpack"
     * (NULL: none); the kernel's `phases` reports their times. */
    const char *phase_names;
    /* Kernels with counters (datagrams sent, lost, ...): their names,
     * "sent,received,lost" (NULL: none on this rank); the kernel's `counters`
     * reports their current values (docs/core-protocol.md, "counters"). */
    const char *counter_names;
    int self_synced; /* the kernel starts every op together itself (a barrier before
                      * each: coll's sync=barrier), so the runner adds no barrier
                      * before a round or a pattern's sample: a second barrier
                      * just before an op read MPICH's 64 KiB allgather 5% faster
                      * than the one barrier of IMB's and OSU's convention. The
                      * barrier is the kernel's, on its active ranks alone; the
                      * runner takes the flag from any rank that sets it and
                      * applies it on every rank, idle ones too */
    int mean_timed;  /* a sample is the mean over the timed ranks of their times,
                      * not the slowest rank's (osu_mbw_mr: the senders' mean);
                      * taken from any rank that sets it */
} fl_shape;

enum { FL_OK = 0, FL_SKIP = 1, FL_ERROR = -1 };
enum { FL_AXIS_SIZE = 1, FL_AXIS_STRIDE = 2, FL_AXIS_ACTIVE = 4, FL_AXIS_CONNS = 8 };

/* What one --param accepts (facts.Param): one of the listed choices,
 * a decimal integer in lo..hi, or (neither) any text; a value other than the
 * default only while param only_key is only_value. Python sends
 * only values that pass; fl_opts_bind checks them again. */
typedef struct {
    const char *key;
    const char *dflt;    /* as the core receives values: "64", "flush" */
    const char *choices; /* "flush|fence", or NULL */
    int integer;
    int64_t lo, hi;
    const char *only_key, *only_value; /* "variant", "concurrent"; or NULL */
} fl_param_rule;

/* The facts of a benchmark, generated from fabriclab's registry
 * (src/fabriclab/suite/benchmarks.py) into fl_facts.h at build time: they
 * are written once, in Python, and compiled in. */
typedef struct {
    const char *name;
    const char *summary;
    const char *params;  /* for --list: "window=64 sync=flush|fence" */
    const fl_param_rule *rules; /* one per param, ended by key == NULL */
    int min_ranks;
    int even_ranks;      /* pair patterns split the ranks in halves */
    unsigned axes;       /* FL_AXIS_* */
    int legs;            /* one-way transfers per op, in a row */
    int concurrent;      /* an op's transfers overlap */
    int pattern;         /* takes --layouts and reports per-rank results */
    int threads;         /* runs several threads per rank: MPI_THREAD_MULTIPLE (main.c) */
} fl_facts;

/* A kernel: registration is data (registry.c), never a strcmp chain; its
 * facts come from the generated table, joined by name.
 * setup/teardown/verify/init/fini are collective over ctx->comm; measure is
 * called by every rank with the same iters and returns this rank's elapsed
 * seconds for iters operations. The runner zeroes the shape before setup.
 * setup must return the same status on every rank (a mixed outcome aborts);
 * teardown runs only after FL_OK. */
struct fl_buf; /* output.c: a growing string (fl_buf) */
typedef struct fl_kernel {
    const char *name;    /* "family.kernel", e.g. "message.pingpong" */
    int (*init)(const fl_ctx *ctx, void **bench_state);            /* optional, once per run */
    void (*fini)(const fl_ctx *ctx, void *bench_state);            /* optional */
    int (*setup)(const fl_ctx *ctx, void *bench_state, const fl_point *pt,
                 void **state, fl_shape *shape);                   /* FL_OK, FL_SKIP, FL_ERROR */
    double (*measure)(const fl_ctx *ctx, void *state, int64_t iters);
    /* optional: one op with pattern-filled send data; returns mismatched
     * bytes on this rank and adds the bytes it checked to *checked */
    int64_t (*verify)(const fl_ctx *ctx, void *state, int64_t *checked);
    void (*teardown)(const fl_ctx *ctx, void *state);
    /* optional (app kernels): this rank's seconds spent so far in each of the
     * shape's phases, summed over every op since setup, into out[] */
    void (*phases)(const void *state, double *out);
    /* optional: this rank's counters' current values, one per name of the
     * shape's counter_names, into out[]: cumulative sums or current levels,
     * as the kernel keeps them; the runner reads them before the first sample
     * and after each, and Python derives every figure from them */
    void (*counters)(const void *state, double *out);
    /* optional (per-op timing of a kernel whose op needs what surrounds it
     * kept running: the congestion tests' aggressors load through a whole
     * call): `timings` timings in one call, each of `unit` ops timed alone,
     * its seconds per op into each[i] on the ranks that time */
    void (*measure_each)(const fl_ctx *ctx, void *state, int64_t timings, int64_t unit, double *each);
    /* optional (the noise kernels, families/noise.c): a record of the kernel's
     * own after the samples and per-op timings, before verify; collective, and
     * rank 0 appends ,"key":{...} to j, which the point line carries */
    void (*record)(const fl_ctx *ctx, void *state, struct fl_buf *j);
} fl_kernel;

/* A benchmark: its facts and its kernel. */
typedef struct fl_bench {
    const char *name;
    const fl_facts *facts;
    const fl_kernel *k;
} fl_bench;

/* opts.c: the command line of docs/core-protocol.md. Bad input leaves a
 * one-line reason in err; the caller prints it on rank 0 and exits 2. */
enum { FL_OPTS_RUN = 0, FL_OPTS_LIST = 1, FL_OPTS_BAD = 2 };
int fl_opts_parse(int argc, char **argv, fl_opts *o, const char **bench,
                  char *err, size_t errlen);
/* Checks --param keys and values against the benchmark's rules and fills in
 * defaults, so that fl_param finds every listed key with a valid value; checks
 * strides, min_ranks and even_ranks. */
int fl_opts_bind(const fl_bench *b, fl_opts *o, char *err, size_t errlen);
void fl_opts_free(fl_opts *o);

/* runner.c: hello, then every point (layout x conns x stride x size), then end. */
int fl_run(const fl_bench *b, const fl_opts *o);

/* registry.c: the benchmark named into *out; NULL, or the reason it has no facts or no kernel. */
const char *fl_find_bench(const char *name, fl_bench *out);
void fl_list_benches(void);
extern const fl_facts fl_facts_table[]; /* fl_facts.h, ended by name == NULL */

/* Families: each file exports a table ended by an entry with name == NULL
 * (csrc/README.md maps every benchmark to its file and functions). */
extern const fl_kernel fl_memory_kernels[];
extern const fl_kernel fl_deposit_kernels[];
extern const fl_kernel fl_deposit_strided_kernels[];
extern const fl_kernel fl_deposit_pattern_kernels[];
extern const fl_kernel fl_deposit_atomic_kernels[];
extern const fl_kernel fl_message_kernels[];
extern const fl_kernel fl_message_pattern_kernels[];
extern const fl_kernel fl_message_congestion_kernels[];
extern const fl_kernel fl_message_victim_kernels[];
extern const fl_kernel fl_message_ring_kernels[];
extern const fl_kernel fl_message_conns_kernels[];
extern const fl_kernel fl_message_scatter_kernels[];
extern const fl_kernel fl_message_mt_kernels[];
extern const fl_kernel fl_message_halo_kernels[];
extern const fl_kernel fl_message_rate_kernels[];
extern const fl_kernel fl_tcp_kernels[];
extern const fl_kernel fl_tcp_conns_kernels[];
extern const fl_kernel fl_tcp_scatter_kernels[];
extern const fl_kernel fl_tcp_streams_kernels[];
extern const fl_kernel fl_tcp_crr_kernels[];
extern const fl_kernel fl_udp_underload_kernels[];
extern const fl_kernel fl_udp_kernels[];
/* The levels below MPI, compiled only where their library was found
 * (FL_HAVE_FABRIC, FL_HAVE_UCX: measure/libraries.py). Each has a probe that
 * runs without MPI (main.c: --probe LEVEL) and prints what the library offers
 * as JSON lines: Python chooses the provider or checks the transports from it. */
extern const fl_kernel fl_app_transpose_kernels[];
extern const fl_kernel fl_app_matmul_kernels[];
extern const fl_kernel fl_app_sort_kernels[];
extern const fl_kernel fl_coll_kernels[];
extern const fl_kernel fl_coll_neighbor_kernels[];
extern const fl_kernel fl_noise_kernels[];
/* The MPI library's collective algorithm controls, through MPI_T without
 * MPI_Init (--probe coll; families/coll_controls.c): exit code 0, or 3. */
int fl_coll_probe(void);
#ifdef FL_HAVE_FABRIC
extern const fl_kernel fl_fabric_kernels[];
extern const fl_kernel fl_fabric_pattern_kernels[];
extern const fl_kernel fl_fabric_via_kernels[];
extern const fl_kernel fl_fabric_atomic_kernels[];
extern const fl_kernel fl_fabric_rate_kernels[];
int fl_fabric_probe(void);  /* exit code: 0, or 3 when the library fails */
#endif
#ifdef FL_HAVE_UCX
extern const fl_kernel fl_ucx_kernels[];
extern const fl_kernel fl_ucx_atomic_kernels[];
extern const fl_kernel fl_ucx_rate_kernels[];
extern const fl_kernel fl_ucx_mt_kernels[];
int fl_ucx_probe(void);
#endif

/* layouts.c: the rules of the pattern layouts shared by the families that
 * run them; NULL, or the reason a layout cannot run. */
const char *fl_exchange_fault(const fl_layout *l, int nranks);  /* bibw, bisection */
const char *fl_pairs_fault(const fl_layout *l, int nranks);     /* saturation */
const char *fl_hotspot_fault(const fl_layout *l, int nranks);
int fl_pattern_point(const fl_point *pt, fl_shape *shape, const char *bad);

/* util.c */
double fl_now(void);                           /* monotonic seconds */
/* The median of x[0..n-1], which it sorts: a kernel's calibration at setup
 * (the samples' statistics are Python's). */
double fl_median(double *x, int n);
void *fl_alloc(size_t bytes);                  /* page-aligned, zeroed and touched; dies on failure */
void fl_free(void *p);
/* What this rank's kernel holds: every fl_alloc (its whole pages; the
 * regions UCX maps and libfabric registers come from it) and what a library
 * allocates on the kernel's behalf, which the kernel adds with fl_account
 * (+bytes when allocated, -bytes when freed: an MPI window).
 * fl_held_mark starts a high-water mark (the runner: before a point's
 * setup) and returns the bytes held then; fl_held_peak is the most held
 * since. */
void fl_account(int64_t bytes);
int64_t fl_held_mark(void);
int64_t fl_held_peak(void);
/* MPI_Win_allocate (or, `shared`, MPI_Win_allocate_shared) of `bytes`,
 * counted as held; fl_win_free frees a window and takes its bytes off. */
void fl_win_allocate(MPI_Aint bytes, int disp_unit, MPI_Info info, MPI_Comm comm, int shared,
                     void *base, MPI_Win *win);
void fl_win_free(MPI_Win *win);
void fl_fill(void *buf, size_t n, uint64_t seed);                 /* deterministic pattern */
int64_t fl_check(const void *buf, size_t n, uint64_t seed);       /* bytes differing from pattern */
/* Params: opts.c has checked every value against its rule and filled in the
 * defaults, so each key the benchmark's facts list is present and valid, and
 * no kernel repeats a default. fl_param and fl_param_int end the run for a
 * key the facts do not list (a kernel bug); fl_param_find returns NULL for
 * it, and fl_param_is 0. */
const char *fl_param(const fl_opts *o, const char *key);
int64_t fl_param_int(const fl_opts *o, const char *key); /* decimal */
const char *fl_param_find(const fl_opts *o, const char *key);
int fl_param_is(const fl_opts *o, const char *key, const char *value);
_Noreturn void fl_die(const char *fmt, ...) FL_PRINTF(1, 2); /* error line, then MPI_Abort(3) */
int fl_peer(const fl_ctx *ctx);                /* pairwise partner: rank ^ 1, or -1 if none */
/* A kernel's measure, as the verify passes that run one op or window
 * through it take it (families/pair.h, families/via.h). */
typedef double (*fl_measure_fn)(const fl_ctx *ctx, void *state, int64_t iters);
/* Whether any rank's machine holds more of comm's ranks than it has CPUs
 * (collective; the same answer on every rank). Waiting ranks then sleep
 * FL_NAP_NS between polls (fl_nap) rather than spin: eight ranks spinning
 * on two CPUs take turns of a scheduler slice each, and a rank that should
 * answer (an ack, the next window) waits for its turn; measured on the
 * emulated testbed, healthy pairs of message.shift read 0.4-0.75 of their
 * cable's rate with windows of 4 x 256 KiB spinning. */
#define FL_NAP_NS 50000
int fl_crowded(MPI_Comm comm);
void fl_nap(void);
/* A kernel's init that keeps fl_crowded's answer, an int, as its bench state, once per run;
 * and the fini that frees it. */
int fl_crowded_init(const fl_ctx *ctx, void **bs);
void fl_crowded_fini(const fl_ctx *ctx, void *bs);
/* Bytes to ask MPI_Win_allocate for: whole pages, at least one. With MPICH
 * 5.0 on one host, puts of 8-128 KiB into windows whose sizes were a page
 * multiple plus 8 bytes ran 10-14x slower (45 against 4.2 us per 128 KiB
 * put), presumably because the next rank's segment of the shared allocation
 * then starts off its page. */
static inline MPI_Aint fl_win_bytes(MPI_Aint n)
{
    return n <= 0 ? 4096 : (n + 4095) / 4096 * 4096;
}

/* Slots per unit of a region whose op takes `units` slot-sized pieces at
 * once (a hotspot target's messages from `units` senders, an all-to-all
 * array of `units` blocks, a scatter message of `units` segments): the
 * point's rotation of `buffers` slots shared among them, ceil(buffers /
 * units), so the working set stays what the cache state chose instead of
 * growing with the units, and at least `own`, so that every op of a window
 * that takes a buffer of its own still has a unit of its own (`own` from
 * fl_own_slots; suite/buffers.py states the rule). */
static inline int64_t fl_unit_slots(int64_t buffers, int64_t units, int64_t own)
{
    int64_t k = units > 1 ? (buffers + units - 1) / units : buffers;
    if (k < own)
        k = own;
    return k > 0 ? k : 1;
}

/* The ops of a window of `window` that each take a slot of their own: all
 * of them under window_buffers=per-op (one-sided windows by default), else
 * one, the window's ops sharing the rotation (two-sided windows, as osu_bw). */
static inline int64_t fl_own_slots(const fl_opts *o, int64_t window)
{
    return fl_param_is(o, "window_buffers", "per-op") ? window : 1;
}

/* Buffer i of a region of `buffers` slots of `size` bytes (op i % buffers). */
static inline char *fl_slot(char *base, int64_t size, int64_t buffers, int64_t i)
{
    return base + (size_t)(i % buffers) * (size_t)size;
}
/* The whole string as a decimal integer (digits, an optional leading '-'):
 * 0, or -1. No suffixes: Python sends plain integers (docs/core-protocol.md). */
int fl_parse_int(const char *s, int64_t *out);

/* output.c: JSON lines on stdout, rank 0 only (the caller checks rank) */
void fl_emit(const char *json_line);           /* writes one line and flushes */
void fl_emit_error(const char *message);       /* {"type":"error","message":...} */

/* A growing string for building one JSON line; dies if memory runs out. */
typedef struct fl_buf {
    char *p;
    size_t len, cap;
} fl_buf;
void fl_buf_printf(fl_buf *b, const char *fmt, ...) FL_PRINTF(2, 3);
void fl_buf_str(fl_buf *b, const char *s);     /* quoted, JSON-escaped */
void fl_buf_num(fl_buf *b, double x);          /* exact (%.17g at most); null if not finite */
void fl_buf_nums(fl_buf *b, const double *x, int64_t n);   /* [x0,x1,...] */
void fl_buf_ints(fl_buf *b, const int64_t *x, int64_t n);
void fl_buf_free(fl_buf *b);

/* hello.c: the run's first line, and the CPUs the ranks are on */
double fl_timer_overhead(void);                /* seconds per fl_now() call */
double fl_timer_resolution(void);              /* the smallest step fl_now() shows */
void fl_gather_cpus(const fl_ctx *c, int *cpus);  /* every rank's current CPU, on rank 0 */
char *fl_hello(const fl_ctx *c, const fl_opts *o, const char *bench, double resolution);
/* The thread level a benchmark's facts need (MPI_THREAD_MULTIPLE for `threads`,
 * else MPI_THREAD_SINGLE, MPI_Init's), and a level's name ("multiple"). */
int fl_thread_level(const fl_facts *f);
const char *fl_thread_level_name(int level);
void fl_buf_int_list(fl_buf *j, const char *key, const int *x, int n);  /* ,"key":[...] */

/* cpu.c: this process's CPU seconds (getrusage(RUSAGE_SELF): all its threads)
 * and the wall seconds they were taken over, summed over a point's rounds */
typedef struct {
    double user_s, sys_s, wall_s;
} fl_cpu_use;
fl_cpu_use fl_cpu_now(void);                    /* user, system and fl_now() seconds now */
void fl_cpu_add_since(fl_cpu_use *sum, fl_cpu_use since);   /* sum += now - since */
void fl_cpu_gather(const fl_ctx *c, const fl_cpu_use *mine, fl_buf *j); /* ,"rank_cpu":[...] on rank 0 */
void fl_cpu_clock(fl_buf *j);                   /* ,"cpu":{...}: how the hello's timer reads CPU */

/* per_op.c: single operations timed one by one into a log-bucketed histogram
 * (HDR Histogram's idea, Tene: every value within FL_HIST_ERROR of its
 * bucket's lower edge), for percentiles of single ops rather than of batched
 * samples (docs/statistics.md, "Per-operation timing"). */
#define FL_HIST_BASE 1e-9         /* seconds at bucket 0's lower edge; shorter ops count there */
#define FL_HIST_ERROR 0.01        /* bucket i spans [BASE (1+E)^i, BASE (1+E)^(i+1)) */
#define FL_HIST_BUCKETS 2800      /* up to about 1.2e3 s; longer ops count in the last */
typedef struct {
    int64_t n;
    double min, max;
    int64_t *counts;             /* FL_HIST_BUCKETS */
} fl_hist;
void fl_hist_init(fl_hist *h);
void fl_hist_add(fl_hist *h, double seconds);
void fl_hist_free(fl_hist *h);
/* Collective over comm: every rank's histogram to rank 0, which appends
 * ,"op_histogram":{...} (the ranks that timed an op, each with its sparse
 * buckets, and the ops each timing spanned, `unit`) to j. */
void fl_hist_gather(fl_buf *j, const fl_hist *h, MPI_Comm comm, double timer_cost, int64_t unit);
/* Collective: a point's single ops after its samples (`samples`, rank 0's
 * n of them, give the ops' count), into ,"op_histogram":{...} on rank 0's j. */
void fl_per_op(const fl_ctx *c, const fl_kernel *k, void *state, const fl_shape *sh, const double *samples,
               int n, fl_buf *j);

#endif
