/* usable_cpus.h - how many threads "every core" means for this process.
 *
 * The processors online, or fewer where the process may use fewer: an
 * affinity mask (taskset, a container's cpuset: Cpus_allowed_list in
 * /proc/self/status) or a cgroup v2 CPU quota (docker --cpus, systemd's
 * CPUQuota: cpu.max of the process's cgroup, rounded up). A pool sized past
 * that starts threads that poll for each other's tasks on the few cores
 * there are: on 2 allowed cores of a 16-core machine, 16 threads.
 * Only Linux says, and only cgroup v2 quotas count (v1's cpu.cfs_quota_us
 * does not); elsewhere it is the processors online.
 *
 * Shared by openinfer_impl/threadpool.c and the emitted folders'
 * oi_runtime.h (scripts/embed_synth_sources.py pastes it in); POSIX only
 * (sysconf). */
#ifndef OI_USABLE_CPUS_H
#define OI_USABLE_CPUS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How many CPUs a list such as "0-3,8,10-11" names; 0 if it is not one. */
static inline int oi__cpu_list_count(const char *list) {
    int n = 0;
    const char *p = list;
    while (*p >= '0' && *p <= '9') {
        char *end;
        long first = strtol(p, &end, 10), last = first;
        if (*end == '-')
            last = strtol(end + 1, &end, 10);
        if (last < first)
            return 0;
        n += (int)(last - first + 1);
        if (*end != ',')
            break;
        p = end + 1;
    }
    return n;
}

/* The rest of the first line of file `path` that starts with `key`
 * (without its newline) into out; false if there is none. */
static inline bool oi__read_keyed_line(const char *path, const char *key, char *out, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t key_len = strlen(key);
    bool found = false, line_start = true;
    while (!found && fgets(out, (int)size, f)) {
        size_t len = strlen(out);
        found = line_start && strncmp(out, key, key_len) == 0;
        line_start = len > 0 && out[len - 1] == '\n';
    }
    fclose(f);
    if (!found)
        return false;
    memmove(out, out + key_len, strlen(out + key_len) + 1);
    out[strcspn(out, "\n")] = '\0';
    return true;
}

/* The CPUs of this process's affinity mask; 0 if unknown. */
static inline int oi__affinity_cpus(void) {
    char list[4096];
    if (!oi__read_keyed_line("/proc/self/status", "Cpus_allowed_list:", list, sizeof list))
        return 0;
    return oi__cpu_list_count(list + strspn(list, " \t"));
}

/* Whole CPUs of a cgroup v2 cpu.max line, "QUOTA PERIOD" (microseconds of
 * CPU time a period), rounded up; 0 for "max PERIOD" (no quota) or junk. */
static inline int oi__cpu_max_cpus(const char *line) {
    char *end;
    long quota = strtol(line, &end, 10), period = end != line ? strtol(end, NULL, 10) : 0;
    if (quota <= 0 || period <= 0)
        return 0;
    return (int)((quota + period - 1) / period);
}

/* Whole CPUs of this process's cgroup v2 quota; 0 if none. */
static inline int oi__quota_cpus(void) {
    char group[2048], path[2200], max[64];
    if (!oi__read_keyed_line("/proc/self/cgroup", "0::", group, sizeof group))
        return 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", group);
    return oi__read_keyed_line(path, "", max, sizeof max) ? oi__cpu_max_cpus(max) : 0;
}

/* The threads a pool asked for every core should start (at least 1). */
static inline int oi__usable_cpus(void) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = online > 0 ? (int)online : 1;
#if defined(__linux__)
    int allowed = oi__affinity_cpus(), quota = oi__quota_cpus();
    if (allowed > 0 && allowed < n)
        n = allowed;
    if (quota > 0 && quota < n)
        n = quota;
#endif
    return n;
}

#endif /* OI_USABLE_CPUS_H */
