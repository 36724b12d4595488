/* The command line of docs/core-protocol.md. One option table serves every
 * benchmark; family knobs arrive as --param key=value and are checked against
 * the benchmark's parameter rules (generated from fabriclab's registry into
 * fl_facts.h), which also hold their defaults. Numbers are plain decimal
 * integers: Python expands suffixes and ranges. */
#include "fl.h"
#include "fl_facts.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { LIST, I64, INT, REAL, FLAG, PARAM, TEXT };

static const struct opt {
    const char *name;
    enum kind kind;
    size_t off;       /* field in fl_opts */
    size_t count_off; /* LIST: its length field */
    int64_t min;      /* LIST, I64, INT: smallest accepted value */
} options[] = {
    {"--sizes", LIST, offsetof(fl_opts, sizes), offsetof(fl_opts, nsizes), 0},
    {"--buffers", LIST, offsetof(fl_opts, buffers), offsetof(fl_opts, nbuffers), 1},
    {"--strides", LIST, offsetof(fl_opts, strides), offsetof(fl_opts, nstrides), 1},
    {"--conns", LIST, offsetof(fl_opts, conns), offsetof(fl_opts, nconns), 1},
    {"--layouts", TEXT, offsetof(fl_opts, layout_text), 0, 0},
    {"--warmup", I64, offsetof(fl_opts, warmup), 0, 0},
    {"--min-samples", INT, offsetof(fl_opts, min_samples), 0, 1},
    {"--max-samples", INT, offsetof(fl_opts, max_samples), 0, 1},
    {"--target-ci", REAL, offsetof(fl_opts, target_ci), 0, 0},
    {"--point-time", REAL, offsetof(fl_opts, point_time), 0, 0},
    {"--sample-time", REAL, offsetof(fl_opts, sample_time), 0, 0},
    {"--per-op", REAL, offsetof(fl_opts, per_op), 0, 0},
    {"--validate", FLAG, offsetof(fl_opts, validate), 0, 0},
    {"--param", PARAM, 0, 0, 0},
};
#define NOPTIONS (sizeof options / sizeof options[0])

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), FL_OPTS_BAD)

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        fl_die("out of memory");
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void set_param(fl_opts *o, char *key, char *value)
{
    for (int i = 0; i < o->nparams; i++)
        if (strcmp(o->params[i].key, key) == 0) { /* the last one given wins */
            free((char *)o->params[i].value);
            o->params[i].value = value;
            free(key);
            return;
        }
    o->params[o->nparams].key = key;
    o->params[o->nparams].value = value;
    o->nparams++;
}

static int parse_list(const char *s, int64_t min, int64_t **out, int *count)
{
    int n = 1;
    for (const char *c = s; *c; c++)
        n += *c == ',';
    int64_t *v = malloc(sizeof *v * (size_t)n);
    if (!v)
        fl_die("out of memory");
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(s, ",");
        char *item = dup_n(s, len);
        int bad = fl_parse_int(item, &v[i]) != 0 || v[i] < min;
        free(item);
        if (bad) {
            free(v);
            return -1;
        }
        s += len + 1;
    }
    free(*out);
    *out = v;
    *count = n;
    return 0;
}

static int parse_one(const struct opt *op, const char *val, fl_opts *o,
                     char *err, size_t errlen)
{
    char *field = (char *)o + op->off;
    int64_t x;
    char *end;
    switch (op->kind) {
    case LIST:
        if (parse_list(val, op->min, (int64_t **)(void *)field,
                       (int *)(void *)((char *)o + op->count_off)) != 0)
            return BAD("%s: expected comma-separated integers >= %lld, got '%s'",
                       op->name, (long long)op->min, val);
        return FL_OPTS_RUN;
    case I64:
    case INT:
        if (fl_parse_int(val, &x) != 0 || x < op->min ||
            (op->kind == INT && x > 1000000000))
            return BAD("%s: expected an integer >= %lld, got '%s'", op->name,
                       (long long)op->min, val);
        if (op->kind == INT)
            *(int *)(void *)field = (int)x;
        else
            *(int64_t *)(void *)field = x;
        return FL_OPTS_RUN;
    case REAL: {
        double d = strtod(val, &end);
        if (end == val || *end != '\0' || !isfinite(d) || d <= 0)
            return BAD("%s: expected a positive number, got '%s'", op->name, val);
        *(double *)(void *)field = d;
        return FL_OPTS_RUN;
    }
    case PARAM: {
        const char *eq = strchr(val, '=');
        if (!eq || eq == val)
            return BAD("--param: expected key=value, got '%s'", val);
        if (o->nparams == FL_MAX_PARAMS)
            return BAD("--param: more than %d params", FL_MAX_PARAMS);
        set_param(o, dup_n(val, (size_t)(eq - val)), dup_n(eq + 1, strlen(eq + 1)));
        return FL_OPTS_RUN;
    }
    case TEXT:
        free(*(char **)(void *)field);
        *(char **)(void *)field = dup_n(val, strlen(val));
        return FL_OPTS_RUN;
    case FLAG:
        break;
    }
    return FL_OPTS_RUN;
}

/* An axis not given: count values of 1 (one stride, one connection, one
 * buffer per size). */
static void ones(int64_t **list, int *n, int count)
{
    int64_t *v = malloc(sizeof *v * (size_t)(count > 0 ? count : 1));
    if (!v)
        fl_die("out of memory");
    for (int i = 0; i < count; i++)
        v[i] = 1;
    free(*list);
    *list = v;
    *n = count;
}

int fl_opts_parse(int argc, char **argv, fl_opts *o, const char **bench,
                  char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    /* the sampling defaults are fabriclab's (plan.Sampling), compiled in */
    o->warmup = FL_DEFAULT_WARMUP;
    o->min_samples = FL_DEFAULT_MIN_SAMPLES;
    o->max_samples = FL_DEFAULT_MAX_SAMPLES;
    o->target_ci = FL_DEFAULT_TARGET_CI;
    o->point_time = FL_DEFAULT_POINT_TIME;
    o->sample_time = FL_DEFAULT_SAMPLE_TIME;
    *bench = NULL;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--list") == 0)
            return FL_OPTS_LIST;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            if (*bench)
                return BAD("unexpected argument '%s'", arg);
            *bench = arg;
            continue;
        }
        const struct opt *op = NULL;
        size_t nlen = strcspn(arg, "=");
        for (size_t k = 0; k < NOPTIONS && !op; k++)
            if (strlen(options[k].name) == nlen && strncmp(options[k].name, arg, nlen) == 0)
                op = &options[k];
        if (!op)
            return BAD("unknown option '%s'", arg);
        if (op->kind == FLAG) {
            if (arg[nlen])
                return BAD("%s takes no value", op->name);
            *(int *)(void *)((char *)o + op->off) = 1;
            continue;
        }
        const char *val = arg[nlen] ? arg + nlen + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val)
            return BAD("%s needs a value", op->name);
        if (parse_one(op, val, o, err, errlen) != FL_OPTS_RUN)
            return FL_OPTS_BAD;
    }

    if (!*bench)
        return BAD("no benchmark named (see --list)");
    if (!o->nsizes)
        return BAD("--sizes is required");
    if (o->max_samples < o->min_samples)
        return BAD("--max-samples %d is below --min-samples %d", o->max_samples,
                   o->min_samples);
    if (o->nbuffers && o->nbuffers != o->nsizes)
        return BAD("--buffers has %d values for %d sizes", o->nbuffers, o->nsizes);
    if (!o->nstrides)
        ones(&o->strides, &o->nstrides, 1);
    if (!o->nconns)
        ones(&o->conns, &o->nconns, 1);
    if (!o->nbuffers)
        ones(&o->buffers, &o->nbuffers, o->nsizes);
    return FL_OPTS_RUN;
}

static const fl_param_rule *find_rule(const fl_facts *f, const char *key)
{
    for (const fl_param_rule *r = f->rules; r->key; r++)
        if (strcmp(r->key, key) == 0)
            return r;
    return NULL;
}

/* The rule's test: a listed choice, a decimal integer in range, or any text. */
static int value_fits(const fl_param_rule *r, const char *v)
{
    int64_t x;
    if (r->choices) {
        for (const char *a = r->choices; *a;) {
            size_t n = strcspn(a, "|");
            if (strlen(v) == n && strncmp(a, v, n) == 0)
                return 1;
            a += n + (a[n] == '|');
        }
        return 0;
    }
    if (r->integer)
        return fl_parse_int(v, &x) == 0 && x >= r->lo && x <= r->hi;
    return 1;
}

static int bad_value(const fl_bench *b, const fl_param_rule *r, const char *v, char *err,
                     size_t errlen)
{
    if (r->choices)
        return BAD("%s: param %s=%s is not one of %s", b->name, r->key, v, r->choices);
    return BAD("%s: param %s=%s is not a decimal integer in %lld..%lld", b->name, r->key, v,
               (long long)r->lo, (long long)r->hi);
}

/* One layout "A:r0,r1,..." where each rank's entry is a role letter and an
 * optional peer rank, e.g. "2:t,s0,s0,i". */
static int parse_layout(const char *text, size_t len, int nranks, fl_layout *l)
{
    char *s = dup_n(text, len), *colon = strchr(s, ':'), *p, *end;
    int ok = colon != NULL;
    l->role = calloc((size_t)nranks, 1);
    l->peer = malloc(sizeof *l->peer * (size_t)nranks);
    if (!l->role || !l->peer)
        fl_die("out of memory");
    if (ok) {
        l->active = (int)strtol(s, &end, 10);
        ok = end == colon && l->active >= 0;
        p = colon + 1;
    }
    for (int r = 0; ok && r < nranks; r++) {
        char c = *p;
        ok = c == FL_IDLE || c == FL_SENDER || c == FL_RECEIVER || c == FL_TARGET || c == FL_BOTH ||
             c == FL_VICTIM || c == FL_AGGRESSOR;
        if (!ok)
            break;
        l->role[r] = c;
        l->peer[r] = -1;
        p++;
        if (*p >= '0' && *p <= '9') {
            long v = strtol(p, &end, 10);
            ok = v >= 0 && v < nranks && v != r;
            l->peer[r] = (int)v;
            p = end;
        }
        if (ok && r + 1 < nranks)
            ok = *p++ == ',';
    }
    ok = ok && *p == '\0';
    free(s);
    return ok ? 0 : -1;
}

static int parse_layouts(fl_opts *o, int nranks, char *err, size_t errlen)
{
    const char *t = o->layout_text;
    int n = 1;
    for (const char *c = t; *c; c++)
        n += *c == ';';
    o->layouts = calloc((size_t)n, sizeof *o->layouts);
    if (!o->layouts)
        fl_die("out of memory");
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(t, ";");
        if (parse_layout(t, len, nranks, &o->layouts[i]) != 0) {
            o->nlayouts = i + 1;
            return BAD("--layouts: entry %d ('%.*s') is not ACTIVE:ROLE[PEER],... with %d "
                       "ranks, roles i s r t b v a and peers in 0..%d", i + 1, (int)(len > 80 ? 80 : len),
                       t, nranks, nranks - 1);
        }
        t += len + (t[len] == ';');
    }
    o->nlayouts = n;
    return FL_OPTS_RUN;
}

/* A rule's param away from its default needs param only_key at only_value
 * (window=8 needs variant=concurrent). Checked once the defaults are in. */
static int condition_met(const fl_opts *o, const fl_param_rule *r)
{
    const char *v = fl_param_find(o, r->key), *other;
    if (!r->only_key || !v || strcmp(v, r->dflt) == 0)
        return 1;
    other = fl_param_find(o, r->only_key);
    return other && strcmp(other, r->only_value) == 0;
}

int fl_opts_bind(const fl_bench *b, fl_opts *o, char *err, size_t errlen)
{
    const fl_facts *f = b->facts;

    for (int i = 0; i < o->nparams; i++) {
        const fl_param_rule *r = find_rule(f, o->params[i].key);
        if (!r)
            return BAD("%s has no param '%s' (accepted: %s)", b->name,
                       o->params[i].key, *f->params ? f->params : "none");
        if (!value_fits(r, o->params[i].value))
            return bad_value(b, r, o->params[i].value, err, errlen);
    }
    for (const fl_param_rule *r = f->rules; r->key; r++)
        if (!fl_param_find(o, r->key)) {
            if (o->nparams == FL_MAX_PARAMS)
                return BAD("%s: more than %d params", b->name, FL_MAX_PARAMS);
            set_param(o, dup_n(r->key, strlen(r->key)), dup_n(r->dflt, strlen(r->dflt)));
        }
    for (const fl_param_rule *r = f->rules; r->key; r++)
        if (!condition_met(o, r))
            return BAD("%s: param %s=%s applies only with %s=%s", b->name, r->key,
                       fl_param_find(o, r->key), r->only_key, r->only_value);

    if (!(f->axes & FL_AXIS_STRIDE) && (o->nstrides != 1 || o->strides[0] != 1))
        return BAD("%s has no stride axis", b->name);
    if (!(f->axes & FL_AXIS_CONNS) && (o->nconns != 1 || o->conns[0] != 1))
        return BAD("%s has no conns axis", b->name);
    int nranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < f->min_ranks)
        return BAD("%s needs at least %d ranks, got %d", b->name, f->min_ranks, nranks);
    if (f->even_ranks && nranks % 2)
        return BAD("%s needs an even number of ranks, got %d", b->name, nranks);
    if (f->pattern && !o->layout_text)
        return BAD("%s is a traffic pattern: --layouts is required", b->name);
    if (!f->pattern && o->layout_text)
        return BAD("%s takes no --layouts", b->name);
    if (o->layout_text)
        return parse_layouts(o, nranks, err, errlen);
    return FL_OPTS_RUN;
}

void fl_opts_free(fl_opts *o)
{
    free(o->sizes);
    free(o->buffers);
    free(o->strides);
    free(o->conns);
    for (int i = 0; i < o->nlayouts; i++) {
        free(o->layouts[i].role);
        free(o->layouts[i].peer);
    }
    free(o->layouts);
    free(o->layout_text);
    for (int i = 0; i < o->nparams; i++) {
        free((char *)o->params[i].key);
        free((char *)o->params[i].value);
    }
    memset(o, 0, sizeof *o);
}
