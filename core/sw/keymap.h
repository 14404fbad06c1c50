/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The memory-key map of a software device: the 32-bit keys that name its
 * MRs and bound memory windows, and the one access check every software
 * transport applies, to local SGEs at the initiator and to remote requests
 * at the target.
 *
 * A key is <index:24><tag:8>, as on InfiniBand hardware.  The index is
 * random, never 0 and unique in the map, so a lookup is one hash probe; the
 * tag is random for MRs and type 1 windows and chosen by the consumer for
 * type 2 windows (openrdma_inc_rkey), so a rebound window keeps its index
 * and an old key of it stops working.
 */
#ifndef CORE_SW_KEYMAP_H
#define CORE_SW_KEYMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <openrdma/verbs.h>

enum sw_key_type {
	SW_KEY_MR = 1,
	SW_KEY_MW1, /* type 1 window */
	SW_KEY_MW2, /* type 2 window */
};

#define SW_KEY_INDEX(key) ((key) >> 8)
/* A thread's cached lookups: sets, picked by the key's index, of two. */
#define SW_KEY_CACHE_SETS 4
#define SW_KEY_CACHE_SET(key) (SW_KEY_INDEX(key) % SW_KEY_CACHE_SETS)

/* What sw_keymap_add() registers. */
struct sw_key_attr {
	enum sw_key_type type;
	uint64_t va; /* MR: first byte; MW: unused until bound */
	uint64_t length;
	unsigned int access; /* OPENRDMA_ACCESS_* */
	const struct openrdma_pd *pd;
	void *owner; /* the MR or MW */
};

/* What sw_keymap_check() found: a copy, valid after the map changes. */
struct sw_mem {
	uint8_t *ptr; /* host address of the first byte asked for */
	enum sw_key_type type;
	unsigned int access;
	void *owner;
};

/* A BIND_MW request, as sw_keymap_bind() checks and applies it. */
struct sw_bind {
	uint32_t mw_key; /* the window's key; type 1: any of its keys */
	uint32_t new_key; /* type 2: the consumer's; type 1: openrdma_mw_bind()'s */
	bool type1; /* posted by openrdma_mw_bind() (type 1 windows) */
	const struct openrdma_pd *qp_pd;
	bool has_mr; /* false: unbind a type 1 window (length 0) */
	uint32_t mr_key; /* lkey of the MR to bind to */
	uint64_t addr; /* virtual address inside the MR */
	uint64_t length;
	unsigned int access; /* REMOTE_* and ZERO_BASED */
};

struct sw_keymap;

int sw_keymap_create(struct sw_keymap **map_out);
void sw_keymap_destroy(struct sw_keymap *map);

/*
 * Adds an MR (usable at once) or a window (unbound: its key is reserved but
 * no access passes until it is bound).  Returns the new key in *key_out.
 */
int sw_keymap_add(struct sw_keymap *map, const struct sw_key_attr *attr,
		  uint32_t *key_out);
/* Re-registers an MR under the same key; -OPENRDMA_EBUSY if windows are
 * bound to it. */
int sw_keymap_modify(struct sw_keymap *map, uint32_t key,
		     const struct sw_key_attr *attr);
/* Removes a key; an MR with bound windows is -OPENRDMA_EBUSY, a bound
 * window is unbound first. */
int sw_keymap_remove(struct sw_keymap *map, uint32_t key);
unsigned int sw_keymap_count(struct sw_keymap *map);

/*
 * The access check.  required is a set of OPENRDMA_ACCESS_* bits: with any
 * REMOTE_* bit it is a remote access (MR or bound window, zero-based regions
 * addressed by offset, failures REM_ACCESS_ERR), else a local one (MRs only,
 * virtual addresses, failures LOC_PROT_ERR; 0 means read).  Returns
 * OPENRDMA_WC_SUCCESS and fills *out, or the failure status.
 */
enum openrdma_wc_status sw_keymap_check(struct sw_keymap *map, uint32_t key,
					const struct openrdma_pd *pd,
					uint64_t addr, uint64_t len,
					unsigned int required,
					struct sw_mem *out);
/*
 * Checks a list of local SGEs and translates them into iov (room for num
 * entries); zero-length SGEs are checked but not listed.  *iovcnt_out and
 * *len_out receive the entries used and the total length.
 */
enum openrdma_wc_status sw_keymap_map_sges(struct sw_keymap *map,
					   const struct openrdma_pd *pd,
					   const struct openrdma_sge *sge,
					   int num, unsigned int required,
					   struct iovec *iov, int *iovcnt_out,
					   uint64_t *len_out);

/*
 * Binds a window (MW_BIND_ERR on any violation) and returns its new key:
 * type 1 gets the next tag of its key, type 2 the consumer's key, whose
 * index must not change and which must be unbound.  Each type only through
 * its own verb (bind->type1).
 */
enum openrdma_wc_status sw_keymap_bind(struct sw_keymap *map,
				       const struct sw_bind *bind,
				       uint32_t *key_out);
/* Invalidates a bound type 2 window of pd; -OPENRDMA_EINVAL for anything
 * else (unknown or stale key, MR, type 1 window, other PD). */
int sw_keymap_invalidate(struct sw_keymap *map, uint32_t key,
			 const struct openrdma_pd *pd);

#endif /* CORE_SW_KEYMAP_H */
