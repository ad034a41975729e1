/* kforge: the command line over the compiler, the interpreter and the GPU
 * runtime (DESIGN.md section 4). This file only dispatches: one table of
 * subcommands, each a kf_cmd_* function in tools/cmd_*.c taking the
 * arguments after its name and returning the exit status (tools/cli.h):
 * 0 success, 1 compile or test failure, 2 usage error, 3 runtime/device
 * error. Output that never reaches stdout makes any command fail (exit 3). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../ir/base.h"
#include "cli.h"
#include "cmd_common.h"

/* X(name, function, synopsis) */
#define KF_SUBCOMMANDS(X) \
    X("check", kf_cmd_check, "check [-D NAME=VALUE]... FILE...\n                parse and check; diagnostics only") \
    X("emit", kf_cmd_emit, "emit [--target ptx|cuda|ir|cubin] [--arch sm_90] [-D NAME=VALUE]... [-O0|-O1] [-g]\n" \
      "                [-k KERNEL] [-o OUT] [--verify] [--stats] [--pdl-trigger] FILE (.kf, or .cu/.ptx for ptx|cubin)") \
    X("run", kf_cmd_run, "run FILE|FILE.cu|FILE.ptx [-k KERNEL] [--backend cpu|cuda|ptx] [-D NAME=VALUE]... [-O0|-O1] [--count N]\n" \
      "                [--time] [--grid X,Y,Z] [--block X,Y,Z] [--shared BYTES]\n" \
      "                [NAME=VALUE | NAME=@in.npy | NAME=zeros(N) | NAME=rand(N,SEED)\n" \
      "                | NAME=iota(N)]... [-o NAME=out.npy]...") \
    X("test", kf_cmd_test, "test [--backend cpu|cuda|ptx]... [-O0|-O1] [--same-as-O0] [-k PATTERN] [-j N] [PATH...]\n" \
      "                golden-output cases (default kernels/cases)") \
    X("bench", kf_cmd_bench, "bench FILE [-k KERNEL] [ARGS as for run]... | bench [BENCH|FILE.bench]...\n" \
      "                GPU timings (event-timed, L2 flushed) as ratios to copy bandwidth") \
    X("cache", kf_cmd_cache, "cache (stats|clear|verify [--remove])    the compiled-kernel cache") \
    X("devices", kf_cmd_devices, "devices                       list GPUs and backends")

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *synopsis;
} commands[] = {
#define X(n, f, s) {n, f, s},
    KF_SUBCOMMANDS(X)
#undef X
};

static void usage(FILE *f)
{
    fputs("kforge " KF_VERSION ": a kernel compiler and GPU runtime\n\nusage:\n", f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  kforge %s\n", commands[i].synopsis);
    fputs("  kforge help [COMMAND]         this text, or the usage of COMMAND (as COMMAND --help)\n"
          "\nFILE '-' is standard input, '-o -' standard output; '--' ends the options.\n"
          "exit status: 0 success, 1 compile or test failure, 2 usage error, 3 runtime or device error\n", f);
}

/* Output that never reached stdout (`> /dev/full`, a closed pipe) is a
 * failure of the command, not a success with nothing shown. */
static int stdout_checked(const char *cmd, int rc)
{
    errno = 0;
    bool flushed = fflush(stdout) == 0;
    if (flushed && !ferror(stdout)) return rc;
    fprintf(stderr, "kforge %s: error: writing to stdout failed: %s\n", cmd,
            !flushed && errno ? strerror(errno) : "an earlier write failed");
    return rc == KF_EXIT_OK ? KF_EXIT_RUNTIME : rc;
}

static int find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name)) return (int)i;
    return -1;
}

/* An unknown command: the closest name, the list, the usage; exit 2. */
static int unknown_command(const char *what, const char *name)
{
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[i] = commands[i].name;
    const char *near = kf_cli_suggest(name, names, sizeof names / sizeof names[0]);
    fprintf(stderr, "kforge: error: unknown %s '%s'", what, name);
    if (near) fprintf(stderr, " (did you mean '%s'?)", near);
    fprintf(stderr, "; expected one of check, emit, run, test, bench, cache, devices\n\n");
    usage(stderr);
    return KF_EXIT_USAGE;
}

/* kforge help [CMD]: the whole usage, or CMD's (what `kforge CMD --help`
 * prints), on stdout. */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        usage(stdout);
        return KF_EXIT_OK;
    }
    if (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help") || !strcmp(argv[2], "help")) {
        usage(stdout);
        return KF_EXIT_OK;
    }
    if (argc > 3) {
        fprintf(stderr, "kforge help: error: one topic at a time ('%s' and '%s' given)\n", argv[2], argv[3]);
        return KF_EXIT_USAGE;
    }
    int c = find_command(argv[2]);
    if (c < 0) return unknown_command("help topic", argv[2]);
    char *args[] = {"--help", NULL};
    return stdout_checked(argv[2], commands[c].fn(1, args));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KF_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) return stdout_checked("help", help(argc, argv));
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        puts("kforge " KF_VERSION);
        return stdout_checked(cmd, KF_EXIT_OK);
    }
    int c = find_command(cmd);
    if (c < 0) return unknown_command("command", cmd);
    return stdout_checked(cmd, commands[c].fn(argc - 2, argv + 2));
}
