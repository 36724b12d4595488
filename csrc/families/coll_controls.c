/* Family "coll" (coll.h): the MPI library's algorithm controls, read
 * through the MPI tool interface (MPI_T, MPI 3's control variables).
 *
 * Each operation and form has at most one control, named by the library's
 * documented convention: MPICH's MPIR_CVAR_<OP>_INTRA_ALGORITHM for the
 * blocking form and MPIR_CVAR_I<OP>_INTRA_ALGORITHM for the non-blocking one
 * (its persistent collectives are built from the same schedules); Open MPI's
 * coll_tuned_<op>_algorithm and coll_libnbc_i<op>_algorithm. The probe
 * (--probe coll) lists every control this library has, with the names it
 * accepts, without initialising MPI; a point reads back the value in force
 * (docs/collectives.md, "Algorithms"). Setting a control is the launch's
 * business: measure/coll_algorithms.py puts it in the environment. */
#include "coll.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define DESC_LEN 4096

/* The control of op in form, in buf; 0 when the library is not one whose
 * convention is known. */
static int control_name(int op, int form, char *buf, size_t len)
{
    char key[48];
    const char *name = coll_name(op) + 4; /* "MPI_Allreduce" -> "Allreduce" */
    size_t k = 0;
    for (; name[k] && k < sizeof key - 1; k++)
        key[k] = (char)tolower((unsigned char)name[k]);
    key[k] = '\0';
    const char *i = form == FORM_BLOCKING ? "" : "i";
#if defined(OPEN_MPI)
    snprintf(buf, len, form == FORM_BLOCKING ? "coll_tuned_%s%s_algorithm" : "coll_libnbc_%s%s_algorithm", i, key);
#elif defined(MPICH_VERSION)
    for (k = 0; key[k]; k++)
        key[k] = (char)toupper((unsigned char)key[k]);
    snprintf(buf, len, "MPIR_CVAR_%s%s_INTRA_ALGORITHM", *i ? "I" : "", key);
#else
    (void)i, (void)len;
    buf[0] = '\0';
    return 0;
#endif
    return 1;
}

/* The name of value `want` of control idx: its enum item (Open MPI), or the
 * word that starts line want + 1 of its description (MPICH lists its values
 * one per line after a title, in the order of their numbers). 0 if none. */
static int value_name(int idx, int want, char *out, size_t len)
{
    char name[CONTROL_LEN], desc[DESC_LEN];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    if (MPI_T_cvar_get_info(idx, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS)
        return 0;
    if (en != MPI_T_ENUM_NULL) {
        int items = 0, l = (int)len;
        char title[CONTROL_LEN];
        int tl = sizeof title;
        MPI_T_enum_get_info(en, &items, title, &tl);
        for (int j = 0; j < items; j++) {
            int v;
            l = (int)len;
            if (MPI_T_enum_get_item(en, j, &v, out, &l) == MPI_SUCCESS && v == want)
                return 1;
        }
        return 0;
    }
    const char *line = desc;
    for (int j = 0; j <= want && line; j++)
        line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    if (!line || want < 0)
        return 0;
    size_t n = 0; /* a name: letters, digits and '_' (it goes into JSON unescaped) */
    while (isalnum((unsigned char)line[n]) || line[n] == '_')
        n++;
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), line);
    return n > 0;
}

/* Appends the names control idx accepts as a JSON array. */
static void add_names(fl_buf *o, int idx)
{
    char word[CONTROL_LEN];
    fl_buf_printf(o, "[");
    for (int v = 0, first = 1; v < 256; v++) {
        if (!value_name(idx, v, word, sizeof word)) {
            if (v > 0) /* enum values may start at 0 or 1; a gap after that ends them */
                break;
            continue;
        }
        fl_buf_printf(o, first ? "" : ",");
        fl_buf_str(o, word);
        first = 0;
    }
    fl_buf_printf(o, "]");
}

int fl_coll_probe(void)
{
    int provided, idx;
    char control[CONTROL_LEN];
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fl_emit_error("MPI_T_init_thread failed: this MPI offers no tool interface");
        return 3;
    }
    static const char *const forms[] = {"blocking", "nonblocking", "persistent"};
    for (int op = C_ALLREDUCE; op <= C_BARRIER; op++)
        for (int form = FORM_BLOCKING; form <= FORM_PERSISTENT; form++) {
            if (!control_name(op, form, control, sizeof control) ||
                MPI_T_cvar_get_index(control, &idx) != MPI_SUCCESS)
                continue;
            fl_buf o = {0};
            fl_buf_printf(&o, "{\"type\":\"control\",\"call\":\"%s\",\"form\":\"%s\",\"control\":", coll_name(op),
                          forms[form]);
            fl_buf_str(&o, control);
            fl_buf_printf(&o, ",\"names\":");
            add_names(&o, idx);
            fl_buf_printf(&o, "}");
            fl_emit(o.p);
            fl_buf_free(&o);
        }
    MPI_T_finalize();
    return 0;
}

/* Whether control idx holds one int (what both libraries' algorithm controls are). */
static int int_control(int idx)
{
    char name[CONTROL_LEN], desc[DESC_LEN];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    return MPI_T_cvar_get_info(idx, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) == MPI_SUCCESS &&
           dt == MPI_INT;
}

void coll_control_read(const coll_state *s, char *control, char *value, size_t len)
{
    int provided, idx, count, v = -1;
    MPI_T_cvar_handle h;
    control[0] = value[0] = '\0';
    if (!control_name(s->op, s->form, control, CONTROL_LEN) ||
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    if (MPI_T_cvar_get_index(control, &idx) == MPI_SUCCESS && int_control(idx) &&
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
        if (count == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS && !value_name(idx, v, value, len))
            snprintf(value, len, "%d", v);
        MPI_T_cvar_handle_free(&h);
    } else {
        control[0] = '\0';
    }
    MPI_T_finalize();
}

/* The variable naming the library's collective-selection file, as MPI_T
 * names it and as the environment sets it: MPICH's JSON tree (its csel, for
 * the algorithms of MPIR_CVAR_<OP>_INTRA_ALGORITHM), Open MPI's coll_tuned
 * dynamic rules; 0 for another library. */
static int selection_control(const char **control, const char **env)
{
#if defined(OPEN_MPI)
    *control = "coll_tuned_dynamic_rules_filename";
    *env = "OMPI_MCA_coll_tuned_dynamic_rules_filename";
    return 1;
#elif defined(MPICH_VERSION)
    *control = *env = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE";
    return 1;
#else
    (void)control, (void)env;
    return 0;
#endif
}

/* The string value of control through MPI_T, in out ("" if none). */
static void read_string(const char *control, char *out, size_t len)
{
    int provided, idx, count;
    MPI_T_cvar_handle h;
    char name[CONTROL_LEN], desc[DESC_LEN];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    out[0] = '\0';
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    if (MPI_T_cvar_get_index(control, &idx) == MPI_SUCCESS &&
        MPI_T_cvar_get_info(idx, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) == MPI_SUCCESS &&
        dt == MPI_CHAR && MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
        char *buf = count > 0 ? fl_alloc((size_t)count + 1) : NULL; /* count: the string's buffer */
        if (buf && MPI_T_cvar_read(h, buf) == MPI_SUCCESS) {
            buf[count] = '\0';
            if (strlen(buf) < len)   /* a path that does not fit is not half-recorded */
                snprintf(out, len, "%s", buf);
        }
        if (buf)
            fl_free(buf);
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
}

/* Whether this process maps the file at path (/proc/self/maps names it). */
static int mapped(const char *path)
{
    char real[PATH_MAX], line[PATH_MAX + 128];
    FILE *f;
    int found = 0;
    if (!realpath(path, real) || !(f = fopen("/proc/self/maps", "r")))
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *at = strchr(line, '/');
        if (at) {
            at[strcspn(at, "\n")] = '\0';
            found = strcmp(at, real) == 0;
        }
    }
    fclose(f);
    return found;
}

void coll_selection_read(char *path, size_t len, int *read)
{
    const char *control, *env;
    *read = 0;
    path[0] = '\0';
    if (!selection_control(&control, &env))
        return;
    read_string(control, path, len);
    if (path[0]) {           /* the library reports the file it took */
        *read = 1;
        return;
    }
    /* MPICH's MPI_T gives a string variable's default, not the value it took
     * from the environment; but it maps the file it parses and keeps it
     * mapped, so the file in this process's map is the library's word. */
    const char *given = getenv(env);
    if (given && strlen(given) < len) {
        snprintf(path, len, "%s", given);
        *read = mapped(given);
    }
}
