/* Placeholder: bench, cache and devices subcommands (runtime side). */
#include <stdio.h>
#include "cli.h"
int kf_cmd_bench(int argc, char **argv) { fputs("kforge bench: not built yet\n", stderr); return KF_EXIT_RUNTIME; }
int kf_cmd_cache(int argc, char **argv) { fputs("kforge cache: not built yet\n", stderr); return KF_EXIT_RUNTIME; }
int kf_cmd_devices(int argc, char **argv) { fputs("kforge devices: not built yet\n", stderr); return KF_EXIT_RUNTIME; }
