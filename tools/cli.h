/* The kforge command line (DESIGN.md section 4): one function per
 * subcommand, each taking the arguments after the subcommand name and
 * returning the exit status (0 ok, 1 compile/test failure, 2 usage,
 * 3 runtime/device error). Only the CLI prints. */
#ifndef KF_CLI_H
#define KF_CLI_H

enum { KF_EXIT_OK = 0, KF_EXIT_FAIL = 1, KF_EXIT_USAGE = 2, KF_EXIT_RUNTIME = 3 };

int kf_cmd_check(int argc, char **argv);
int kf_cmd_emit(int argc, char **argv);
int kf_cmd_run(int argc, char **argv);
int kf_cmd_test(int argc, char **argv);
int kf_cmd_bench(int argc, char **argv);    /* tools/cmd_gpu.c */
int kf_cmd_cache(int argc, char **argv);    /* tools/cmd_gpu.c */
int kf_cmd_devices(int argc, char **argv);  /* tools/cmd_gpu.c */

#endif
