/* fuzz_cli.c - libFuzzer target: the command line tool in-process, on
 * fuzzed files. tools/openinfer.c is compiled in here with its main renamed;
 * each input is written to a temporary file and the real command lines run
 * on it: verify, inspect, convert (to version 2 and 1), graph, graph --dot,
 * devices --check, plus one malformed command line picked by the first byte.
 *
 * Checked beyond "no crash": every command returns 0, 1 or 2, and a file
 * that convert wrote must pass verify (the writer's output is readable).
 * The tool's stdout and stderr go to /dev/null (sanitizer reports still
 * reach the real stderr). */
#include "../../openinfer.h" /* the library: fuzz_lib.c, with the synthesizer (openinfer synth) */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE *fuzz_cli_quiet; /* the tool's stderr */

#undef stderr
#define stderr fuzz_cli_quiet
#define main openinfer_cli_main
#include "../../tools/openinfer.c"
#undef main
#undef stderr
#define stderr stderr

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char in_path[64], out_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    fuzz_cli_quiet = fopen("/dev/null", "w");
    if (!fuzz_cli_quiet || !freopen("/dev/null", "w", stdout))
        abort();
    snprintf(in_path, sizeof in_path, "/tmp/oi_fuzz_cli_%d.in", (int)getpid());
    snprintf(out_path, sizeof out_path, "/tmp/oi_fuzz_cli_%d.out", (int)getpid());
    return 0;
}

/* Runs `openinfer ARGS...` (NULL-terminated) and returns its exit code. */
static int cli(const char *first, ...) {
    char *argv[8];
    int argc = 0;
    argv[argc++] = (char *)"openinfer";
    va_list args;
    va_start(args, first);
    for (const char *a = first; a && argc < 7; a = va_arg(args, const char *))
        argv[argc++] = (char *)a;
    va_end(args);
    argv[argc] = NULL;
    int rc = openinfer_cli_main(argc, argv);
    fflush(stdout);
    if (rc < 0 || rc > 2)
        __builtin_trap(); /* exit codes are 0, 1 or 2 */
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FILE *f = fopen(in_path, "wb");
    if (!f)
        return 0;
    bool written = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !written)
        return 0;
    cli("verify", in_path, NULL);
    cli("inspect", in_path, NULL);
    for (int version = 2; version >= 1; version--) {
        remove(out_path);
        int rc = version == 2 ? cli("convert", in_path, out_path, NULL)
                              : cli("convert", in_path, out_path, "--version", "1", NULL);
        if (rc == 0 && cli("verify", out_path, NULL) != 0)
            __builtin_trap(); /* convert wrote a file verify rejects */
    }
    cli("graph", in_path, NULL);
    cli("graph", in_path, "--dot", NULL);
    cli("devices", "--check", in_path, NULL); /* the file as a device JSON */
    /* a malformed command line around the same file */
    switch (size ? data[0] % 8 : 0) {
    case 0: cli("verify", NULL); break;
    case 1: cli("verify", in_path, in_path, NULL); break;
    case 2: cli("convert", in_path, out_path, "--version", "3", NULL); break;
    case 3: cli("convert", in_path, NULL); break;
    case 4: cli("graph", in_path, "--svg", NULL); break;
    case 5: cli("inspect", "-", NULL); break;
    case 6: cli("nonsense", in_path, NULL); break;
    default: cli("verify", "/nonexistent/oi_fuzz_cli.oinf", NULL); break;
    }
    remove(out_path);
    return 0;
}
