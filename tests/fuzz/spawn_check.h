/*
 * spawn_check.h - fuzz_results' part for the spawner (spawn_check.c).
 */
#ifndef SBX_SPAWN_CHECK_H
#define SBX_SPAWN_CHECK_H

#include <stddef.h>
#include <stdint.h>

void	check_spawn(const uint8_t *data, size_t size);

#endif
