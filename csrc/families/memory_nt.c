/* memory: the non-temporal thresholds of memory_nt.h. */
#include "memory_nt.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__) && defined(__GLIBC__)
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#define HAVE_LDSO 1
#else
#define HAVE_LDSO 0
#endif

#if HAVE_LDSO
/* The program interpreter (PT_INTERP) of this process: the ld.so that goes
 * with the libc whose memcpy is measured. */
static int find_interp(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            *(const char **)data = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return 1; /* the first object is the program itself */
}

/* glibc.cpu.x86_non_temporal_threshold as `ld.so --list-tunables` prints it
 * (glibc >= 2.33): glibc keeps the figure in a hidden variable, and this is
 * its one public reading. The child inherits the environment, so a
 * GLIBC_TUNABLES setting counts as it does here. posix_spawn, not fork: no
 * copy of an MPI process's address space. -1 if it cannot be read. */
static int64_t ldso_nt_threshold(void)
{
    static const char key[] = "glibc.cpu.x86_non_temporal_threshold:";
    const char *ldso = NULL;
    int fd[2];
    int64_t v = -1;
    dl_iterate_phdr(find_interp, &ldso);
    if (!ldso || pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)ldso, (char *)"--list-tunables", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, ldso, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    if (!f) {
        close(fd[0]);
    } else {
        char line[256];
        while (fgets(line, sizeof line, f)) /* read to the end, so the child never blocks */
            if (v < 0 && strncmp(line, key, sizeof key - 1) == 0) {
                char *end;
                long long x = strtoll(line + sizeof key - 1, &end, 0);
                v = end != line + sizeof key - 1 && x > 0 ? x : -1;
            }
        fclose(f);
    }
    if (rc == 0) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    return v;
}
#endif

/* glibc's default rule as of 2.26..2.37, from the cache size sysconf reports
 * (glibc computes both from CPUID): 3/4 of the last-level cache, the L2 when
 * there is no L3, 64 MiB when neither is known (glibc >= 2.38's fallback). */
static int64_t sysconf_nt_threshold(void)
{
    long c = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    c = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (c <= 0)
        c = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return c > 0 ? (int64_t)c / 4 * 3 : (int64_t)64 << 20;
}

/* One line of a small sysfs file, newline dropped; 0 if unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    int ok = f && fgets(buf, (int)len, f);
    if (f)
        fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* The largest data or unified cache of the CPU this process runs on, as
 * the kernel lists it (/sys/devices/system/cpu/cpuN/cache/indexK, sizes
 * such as "32768K"); -1 if unreadable. */
static int64_t sysfs_llc(void)
{
    int cpu = sched_getcpu();
    int64_t llc = -1;
    char path[96], line[32];
    for (int k = 0; k < 16; k++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type",
                 cpu < 0 ? 0 : cpu, k);
        if (!read_line(path, line, sizeof line))
            break;
        if (strcmp(line, "Instruction") == 0)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size",
                 cpu < 0 ? 0 : cpu, k);
        char *unit;
        long long v = read_line(path, line, sizeof line) ? strtoll(line, &unit, 10) : -1;
        if (v <= 0)
            continue;
        v <<= *unit == 'K' ? 10 : *unit == 'M' ? 20 : *unit == 'G' ? 30 : 0;
        llc = v > llc ? v : llc;
    }
    return llc;
}

void fl_mem_thresholds(mem_thresholds *r)
{
#if HAVE_LDSO
    r->libc_nt_threshold = ldso_nt_threshold();
    r->libc_from = "ld.so --list-tunables";
#endif
    if (r->libc_nt_threshold < 0) {
        r->libc_nt_threshold = sysconf_nt_threshold();
        r->libc_from = "sysconf";
    }
    int64_t llc = sysfs_llc();
    r->nt_threshold = llc > 0 ? llc / 4 : r->libc_nt_threshold;
    r->from = llc > 0 ? "sysfs last-level cache / 4" : r->libc_from;
}

