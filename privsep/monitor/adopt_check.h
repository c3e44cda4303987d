/*
 * adopt_check.h - JOB_ADOPT's answer, taken from the worker's memfd and
 * checked before adopt.c uses any of it (adopt_check.c).
 * runs in: the monitor at its start (root, unfiltered)
 */
#ifndef SBX_ADOPT_CHECK_H
#define SBX_ADOPT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

struct adopt_found;
struct adopt_gone;
struct adopt_head;

/* An entry of JOB_ADOPT's answer, checked as hostile (unit tests too). */
bool	adopt_found_valid(const struct adopt_found *);
bool	adopt_gone_valid(const struct adopt_gone *);
/* JOB_ADOPT's whole answer in the memfd fd, mapped, its size exact and
 * every entry valid; *len is the mapping's (munmap it). NULL otherwise. */
const struct adopt_head *adopt_answer_take(int fd, size_t *len);

#endif
