/* Internals of kforge-difftest's process side: the worker that runs one
 * batch (batch.c), the one that shrinks and saves a failure (reduce.c),
 * and the parent that schedules them (driver.c). Workers talk to the
 * parent through a pipe, one line per event (batch.c lists the lines). */
#ifndef KF_DT_DRIVER_H
#define KF_DT_DRIVER_H

#include "dt_impl.h"

/* Exit statuses of a worker. */
enum {
    DT_EXIT_OK = 0,
    DT_EXIT_ERROR = 2,   /* the run cannot go on (an E line says why) */
    DT_EXIT_FAULT = 42,  /* a launch failed: the CUDA context is gone */
    DT_EXIT_HANG = 43,   /* a launch did not finish in time */
};

#define DT_ALL UINT64_MAX   /* a poison entry for every program of the task */

/* A (program, backend) not to run again: it faulted, hung or crashed. */
typedef struct {
    uint64_t index;
    uint8_t backend;
} dt_poison;

enum { DT_MAX_POISON = 32 };

/* What a worker does: a batch of programs, or the shrinking of one failure. */
typedef struct {
    bool shrink;
    uint64_t first, count;       /* batch: programs [first, first + count) */
    dt_poison poison[DT_MAX_POISON];
    uint32_t npoison;
    uint64_t index;              /* shrink: the program, */
    uint8_t backend, status;     /* the back end and the failure */
    char detail[600];            /* and how it failed */
} dt_task;

/* One line to the parent (newlines in the text become spaces). */
void dt_say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* batch.c: runs a batch task, reporting on fd. */
void dt_run_batch(const kf_dt_options *o, const dt_task *task, int fd);
/* reduce.c: shrinks the failure of a shrink task and saves it under
 * o->save_dir; reports "W <dir> <nodes before> <nodes after>" on fd. */
void dt_run_shrink(const kf_dt_options *o, const dt_task *task, int fd);

#endif
