/* JSON lines on stdout (docs/core-protocol.md): one object per line, flushed
 * at once so a killed run keeps every line it printed. */
#include "fl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One write(2) a line where the kernel takes it whole: N singletons that a
 * launcher did not wire up share one stdout, and stdio would split a line at
 * its buffer's size (1 KiB on the socket slurmstepd hands a task), so their
 * hello lines would interleave and none would be read. A pipe keeps a write
 * of up to PIPE_BUF (4 KiB) whole. */
void fl_emit(const char *json_line)
{
    size_t n = strlen(json_line);
    char *line = malloc(n + 1);
    if (!line) {
        fputs(json_line, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        return;
    }
    memcpy(line, json_line, n);
    line[n] = '\n';
    fflush(stdout); /* what stdio holds goes first */
    for (size_t done = 0; done < n + 1;) {
        ssize_t w = write(STDOUT_FILENO, line + done, n + 1 - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    free(line);
}

/* The error line carries the size of MPI_COMM_WORLD: N ranks that each see a
 * world of 1 (a launcher that did not wire them up) all fail the same way,
 * and Python tells that apart from a real error by it. */
void fl_emit_error(const char *message)
{
    fl_buf b = {0};
    int up = 0, down = 0, nranks = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    fl_buf_printf(&b, "{\"type\":\"error\",\"message\":");
    fl_buf_str(&b, message);
    if (nranks > 0)
        fl_buf_printf(&b, ",\"ranks\":%d", nranks);
    fl_buf_printf(&b, "}");
    fl_emit(b.p);
    fl_buf_free(&b);
}

static void reserve(fl_buf *b, size_t more)
{
    if (b->len + more < b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap <= b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        /* not fl_die: it builds its line with this buffer */
        fputs("{\"type\":\"error\",\"message\":\"out of memory\"}\n", stdout);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    b->p = p;
    b->cap = cap;
}

void fl_buf_printf(fl_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* RFC 8259 section 7: escape '"', '\\' and control characters; other bytes
 * pass through (hostnames and MPI version strings are ASCII in practice). */
void fl_buf_str(fl_buf *b, const char *s)
{
    fl_buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fl_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            fl_buf_printf(b, "\\n");
        else if (c == '\t')
            fl_buf_printf(b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            fl_buf_printf(b, "\\u%04x", c);
        else
            fl_buf_printf(b, "%c", c);
    }
    fl_buf_printf(b, "\"");
}

/* The shortest of %.15g and %.17g that reads back as the same double (0.025,
 * not 0.025000000000000001); JSON has no inf or nan. */
void fl_buf_num(fl_buf *b, double x)
{
    char s[32];
    if (!isfinite(x)) {
        fl_buf_printf(b, "null");
        return;
    }
    snprintf(s, sizeof s, "%.15g", x);
    if (strtod(s, NULL) != x)
        snprintf(s, sizeof s, "%.17g", x);
    fl_buf_printf(b, "%s", s);
}

void fl_buf_nums(fl_buf *b, const double *x, int64_t n)
{
    fl_buf_printf(b, "[");
    for (int64_t i = 0; i < n; i++) {
        if (i)
            fl_buf_printf(b, ",");
        fl_buf_num(b, x[i]);
    }
    fl_buf_printf(b, "]");
}

void fl_buf_ints(fl_buf *b, const int64_t *x, int64_t n)
{
    fl_buf_printf(b, "[");
    for (int64_t i = 0; i < n; i++)
        fl_buf_printf(b, "%s%lld", i ? "," : "", (long long)x[i]);
    fl_buf_printf(b, "]");
}

void fl_buf_free(fl_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
