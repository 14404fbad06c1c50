/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The memory-key map: random, unique, never-zero keys found in constant
 * time, and every outcome of the access check, windows included.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "core/sw/keymap.h"

#define REMOTE_ALL                                                    \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ | \
	 OPENRDMA_ACCESS_REMOTE_ATOMIC)

static struct sw_keymap *map;
static struct openrdma_pd pd_a, pd_b;
static uint8_t buf[4096];

static void setup(void)
{
	cr_assert_eq(sw_keymap_create(&map), 0);
}

static void teardown(void)
{
	sw_keymap_destroy(map);
}

TestSuite(keymap, .init = setup, .fini = teardown);

static uint32_t add_mr(const struct openrdma_pd *pd, void *addr, size_t len,
		       unsigned int access)
{
	struct sw_key_attr attr = {
		.type = SW_KEY_MR,
		.va = (uintptr_t)addr,
		.length = len,
		.access = access,
		.pd = pd,
	};
	uint32_t key = 0;

	cr_assert_eq(sw_keymap_add(map, &attr, &key), 0);
	return key;
}

static uint32_t add_mw(const struct openrdma_pd *pd, enum sw_key_type type)
{
	struct sw_key_attr attr = { .type = type, .pd = pd };
	uint32_t key = 0;

	cr_assert_eq(sw_keymap_add(map, &attr, &key), 0);
	return key;
}

static enum openrdma_wc_status check(uint32_t key, const struct openrdma_pd *pd,
				     uint64_t addr, uint64_t len,
				     unsigned int access)
{
	struct sw_mem mem;

	return sw_keymap_check(map, key, pd, addr, len, access, &mem);
}

static uint64_t va(size_t off)
{
	return (uintptr_t)buf + off;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

Test(keymap, keys_never_zero_and_unique)
{
	enum { N = 100000 };
	uint32_t *keys = calloc(N, sizeof(*keys));
	unsigned int ones = 0;
	int i;

	cr_assert_not_null(keys);
	for (i = 0; i < N; i++) {
		keys[i] = add_mr(&pd_a, buf, sizeof(buf), 0);
		cr_assert_neq(keys[i], 0);
		cr_assert_neq(SW_KEY_INDEX(keys[i]), 0, "index 0 is reserved");
		ones += (unsigned int)__builtin_popcount(keys[i]);
	}
	cr_assert_eq(sw_keymap_count(map), N);
	/* unique: sort and compare neighbours */
	qsort(keys, N, sizeof(*keys), cmp_u32);
	for (i = 1; i < N; i++)
		cr_assert_neq(keys[i], keys[i - 1], "duplicate key %#x",
			      keys[i]);
	/* random: about half the bits set (32 * N / 2 = 1.6M, 5 sigma ~4k) */
	cr_assert(ones > 32u * N / 2 - 20000 && ones < 32u * N / 2 + 20000,
		  "%u bits set in %d keys: not random", ones, N);
	free(keys);
}

Test(keymap, every_index_unique_over_100k)
{
	enum { N = 100000 };
	uint8_t *seen = calloc(1u << 24, 1);
	int i;

	cr_assert_not_null(seen);
	for (i = 0; i < N; i++) {
		uint32_t idx = SW_KEY_INDEX(add_mr(&pd_a, buf, 16, 0));

		cr_assert_eq(seen[idx], 0, "index %#x handed out twice", idx);
		seen[idx] = 1;
	}
	free(seen);
}

static double lookup_ns(const uint32_t *keys, int n, int rounds)
{
	struct timespec t0, t1;
	struct sw_mem mem;
	int i, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < n; i++)
			cr_assert_eq(sw_keymap_check(map, keys[i], &pd_a, va(0),
						     1, 0, &mem),
				     OPENRDMA_WC_SUCCESS);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		(double)(t1.tv_nsec - t0.tv_nsec)) /
	       ((double)n * rounds);
}

Test(keymap, lookups_are_constant_time)
{
	enum { SMALL = 1000, LARGE = 100000 };
	uint32_t *keys = calloc(LARGE, sizeof(*keys));
	double small, large;
	int i;

	cr_assert_not_null(keys);
	for (i = 0; i < SMALL; i++)
		keys[i] = add_mr(&pd_a, buf, sizeof(buf), 0);
	small = lookup_ns(keys, SMALL, 100);
	for (; i < LARGE; i++)
		keys[i] = add_mr(&pd_a, buf, sizeof(buf), 0);
	large = lookup_ns(keys, SMALL, 100);
	/* a list would be 100 times slower; allow cache effects */
	cr_assert_lt(large, small * 8 + 200,
		     "lookup %.0f ns with %d keys, %.0f ns with %d", large,
		     LARGE, small, SMALL);
	free(keys);
}

Test(keymap, local_check_outcomes)
{
	uint32_t ro = add_mr(&pd_a, buf, 1024, 0);
	uint32_t rw = add_mr(&pd_a, buf, 1024, OPENRDMA_ACCESS_LOCAL_WRITE);
	struct sw_mem mem;

	cr_assert_eq(sw_keymap_check(map, ro, &pd_a, va(16), 32, 0, &mem),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(mem.ptr, buf + 16);
	cr_assert_eq(mem.type, SW_KEY_MR);
	/* unknown key, stale tag, other PD */
	cr_assert_eq(check(ro ^ 0x5a5a5a00, &pd_a, va(0), 1, 0),
		     OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert_eq(check(ro ^ 0x01, &pd_a, va(0), 1, 0),
		     OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert_eq(check(ro, &pd_b, va(0), 1, 0), OPENRDMA_WC_LOC_PROT_ERR);
	/* bounds: before, across the end, exactly to the end */
	cr_assert_eq(check(ro, &pd_a, va(0) - 1, 2, 0),
		     OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert_eq(check(ro, &pd_a, va(1000), 25, 0),
		     OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert_eq(check(ro, &pd_a, va(1000), 24, 0), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(ro, &pd_a, va(1024), 0, 0), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(ro, &pd_a, va(1025), 0, 0),
		     OPENRDMA_WC_LOC_PROT_ERR);
	/* writing needs LOCAL_WRITE */
	cr_assert_eq(check(ro, &pd_a, va(0), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert_eq(check(rw, &pd_a, va(0), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_SUCCESS);
}

Test(keymap, remote_check_outcomes)
{
	uint32_t w = add_mr(&pd_a, buf, 1024,
			    OPENRDMA_ACCESS_LOCAL_WRITE |
				    OPENRDMA_ACCESS_REMOTE_WRITE);
	uint32_t r = add_mr(&pd_a, buf, 1024, OPENRDMA_ACCESS_REMOTE_READ);
	uint32_t all = add_mr(&pd_a, buf, 1024,
			      OPENRDMA_ACCESS_LOCAL_WRITE | REMOTE_ALL);

	cr_assert_eq(check(w, &pd_a, va(0), 64, OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(w, &pd_a, va(0), 64, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(r, &pd_a, va(0), 64, OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(r, &pd_a, va(0), 8, OPENRDMA_ACCESS_REMOTE_ATOMIC),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(all, &pd_a, va(8), 8, OPENRDMA_ACCESS_REMOTE_ATOMIC),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(all, &pd_b, va(8), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(all, &pd_a, va(1020), 8,
			   OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(0, &pd_a, va(0), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
}

Test(keymap, overflow_of_addr_plus_len)
{
	uint32_t k = add_mr(&pd_a, buf, 1024,
			    OPENRDMA_ACCESS_REMOTE_READ |
				    OPENRDMA_ACCESS_ZERO_BASED);
	uint32_t v = add_mr(&pd_a, buf, 1024, OPENRDMA_ACCESS_REMOTE_READ);

	cr_assert_eq(check(k, &pd_a, 16, UINT64_MAX - 8,
			   OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(k, &pd_a, UINT64_MAX, 2,
			   OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(v, &pd_a, va(512), UINT64_MAX,
			   OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(v, &pd_a, UINT64_MAX - 1, 4, 0),
		     OPENRDMA_WC_LOC_PROT_ERR);
}

Test(keymap, zero_based_is_offset_remotely_address_locally)
{
	uint32_t k = add_mr(&pd_a, buf + 64, 1024,
			    OPENRDMA_ACCESS_LOCAL_WRITE |
				    OPENRDMA_ACCESS_REMOTE_WRITE |
				    OPENRDMA_ACCESS_ZERO_BASED);
	struct sw_mem mem;

	cr_assert_eq(sw_keymap_check(map, k, &pd_a, 100, 8,
				     OPENRDMA_ACCESS_REMOTE_WRITE, &mem),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(mem.ptr, buf + 64 + 100);
	/* the virtual address is no offset of a zero-based region */
	cr_assert_eq(check(k, &pd_a, va(64 + 100), 8,
			   OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(k, &pd_a, 1020, 5, OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	/* local SGEs keep virtual addresses */
	cr_assert_eq(sw_keymap_check(map, k, &pd_a, va(64), 8,
				     OPENRDMA_ACCESS_LOCAL_WRITE, &mem),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(mem.ptr, buf + 64);
}

Test(keymap, map_sges)
{
	uint32_t k =
		add_mr(&pd_a, buf, sizeof(buf), OPENRDMA_ACCESS_LOCAL_WRITE);
	struct openrdma_sge sge[3] = { { va(0), 10, k },
				       { va(100), 0, k },
				       { va(200), 20, k } };
	struct iovec iov[3];
	uint64_t len;
	int n;

	cr_assert_eq(sw_keymap_map_sges(map, &pd_a, sge, 3,
					OPENRDMA_ACCESS_LOCAL_WRITE, iov, &n,
					&len),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(n, 2, "zero-length SGEs are not listed");
	cr_assert_eq(len, 30);
	cr_assert_eq(iov[1].iov_base, buf + 200);
	sge[1].lkey ^= 0x100;
	cr_assert_eq(sw_keymap_map_sges(map, &pd_a, sge, 3, 0, iov, &n, &len),
		     OPENRDMA_WC_LOC_PROT_ERR,
		     "zero-length SGEs are still checked");
}

static enum openrdma_wc_status do_bind(uint32_t mw, uint32_t new_key,
				       bool type1, uint32_t mr, uint64_t addr,
				       uint64_t len, unsigned int access,
				       uint32_t *key_out)
{
	struct sw_bind b = {
		.mw_key = mw,
		.new_key = new_key,
		.type1 = type1,
		.qp_pd = &pd_a,
		.has_mr = true,
		.mr_key = mr,
		.addr = addr,
		.length = len,
		.access = access,
	};

	return sw_keymap_bind(map, &b, key_out);
}

Test(keymap, type2_window_index_and_tag)
{
	uint32_t mr =
		add_mr(&pd_a, buf, 1024,
		       OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND);
	uint32_t mw = add_mw(&pd_a, SW_KEY_MW2), key = 0, key2 = 0;

	/* reserved, unusable until bound */
	cr_assert_eq(check(mw, &pd_a, va(0), 1, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(do_bind(mw, openrdma_inc_rkey(mw), false, mr, va(256), 256,
			     OPENRDMA_ACCESS_REMOTE_READ, &key),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(key, openrdma_inc_rkey(mw));
	cr_assert_eq(SW_KEY_INDEX(key), SW_KEY_INDEX(mw));
	cr_assert_eq(check(key, &pd_a, va(256), 256,
			   OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(key, &pd_a, va(255), 2, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR, "outside the window");
	cr_assert_eq(check(key, &pd_a, va(256), 8,
			   OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_REM_ACCESS_ERR, "the window's rights rule");
	cr_assert_eq(check(key, &pd_a, va(256), 8, 0), OPENRDMA_WC_LOC_PROT_ERR,
		     "windows are not lkeys");
	cr_assert_eq(check(mw, &pd_a, va(256), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR, "the old tag is dead");

	/* bound: no rebind before invalidation; the MR is held */
	cr_assert_eq(do_bind(key, openrdma_inc_rkey(key), false, mr, va(0), 8,
			     OPENRDMA_ACCESS_REMOTE_READ, &key2),
		     OPENRDMA_WC_MW_BIND_ERR);
	cr_assert_eq(sw_keymap_remove(map, mr), -OPENRDMA_EBUSY);
	cr_assert_eq(sw_keymap_invalidate(map, key, &pd_b), -OPENRDMA_EINVAL);
	cr_assert_eq(sw_keymap_invalidate(map, key, &pd_a), 0);
	cr_assert_eq(sw_keymap_invalidate(map, key, &pd_a), -OPENRDMA_EINVAL,
		     "already invalid");
	cr_assert_eq(check(key, &pd_a, va(256), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);

	/* a new tag, same index: fine; another index: MW_BIND_ERR */
	cr_assert_eq(do_bind(key, openrdma_inc_rkey(key) ^ 0x100, false, mr,
			     va(0), 8, OPENRDMA_ACCESS_REMOTE_READ, &key2),
		     OPENRDMA_WC_MW_BIND_ERR);
	cr_assert_eq(do_bind(key, openrdma_inc_rkey(key), false, mr, va(0), 8,
			     OPENRDMA_ACCESS_REMOTE_READ, &key2),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(sw_keymap_remove(map, key2), 0, "dealloc unbinds");
	cr_assert_eq(sw_keymap_remove(map, mr), 0, "the MR is free again");
}

Test(keymap, type1_window)
{
	uint32_t mr =
		add_mr(&pd_a, buf, 1024,
		       OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND);
	uint32_t mw = add_mw(&pd_a, SW_KEY_MW1), k1 = 0, k2 = 0;
	struct sw_bind unbind = { .type1 = true, .qp_pd = &pd_a };

	cr_assert_eq(do_bind(mw, 0, false, mr, va(0), 64,
			     OPENRDMA_ACCESS_REMOTE_READ, &k1),
		     OPENRDMA_WC_MW_BIND_ERR, "type 1 only through its verb");
	/* as the transports do: the window named by the key the bind gave it
	 * when it was posted (the same index) */
	cr_assert_eq(do_bind(openrdma_inc_rkey(mw), openrdma_inc_rkey(mw), true,
			     mr, va(0), 64, OPENRDMA_ACCESS_REMOTE_WRITE, &k1),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(k1, openrdma_inc_rkey(mw));
	cr_assert_eq(check(k1, &pd_a, va(0), 64, OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_SUCCESS);
	/* type 1 rebinds in place, the old key dies */
	cr_assert_eq(do_bind(k1, openrdma_inc_rkey(k1), true, mr, va(64), 64,
			     OPENRDMA_ACCESS_REMOTE_READ, &k2),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_neq(k1, k2);
	cr_assert_eq(check(k1, &pd_a, va(0), 8, OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	/* not invalidated by LOCAL_INV or SEND_WITH_INV */
	cr_assert_eq(sw_keymap_invalidate(map, k2, &pd_a), -OPENRDMA_EINVAL);
	/* the zero-length bind without an MR unbinds */
	unbind.mw_key = k2;
	unbind.new_key = openrdma_inc_rkey(k2);
	cr_assert_eq(sw_keymap_bind(map, &unbind, &k1), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(k1, &pd_a, va(64), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(sw_keymap_remove(map, mr), 0, "unbound: the MR is free");
}

Test(keymap, bind_errors)
{
	uint32_t plain = add_mr(&pd_a, buf, 1024, OPENRDMA_ACCESS_LOCAL_WRITE);
	uint32_t ro = add_mr(&pd_a, buf, 1024, OPENRDMA_ACCESS_MW_BIND);
	uint32_t ok =
		add_mr(&pd_a, buf, 1024,
		       OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND);
	uint32_t other =
		add_mr(&pd_b, buf, 1024,
		       OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND);
	uint32_t mw = add_mw(&pd_a, SW_KEY_MW2);
	uint32_t mw_b = add_mw(&pd_b, SW_KEY_MW2);
	uint32_t nk = openrdma_inc_rkey(mw), key;
	unsigned int rd = OPENRDMA_ACCESS_REMOTE_READ;

	cr_assert_eq(do_bind(mw, nk, false, plain, va(0), 8, rd, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "MR without MW_BIND");
	cr_assert_eq(do_bind(mw, nk, false, ok, va(1000), 25, rd, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "outside the MR");
	cr_assert_eq(do_bind(mw, nk, false, other, va(0), 8, rd, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "MR of another PD");
	cr_assert_eq(do_bind(mw_b, openrdma_inc_rkey(mw_b), false, ok, va(0), 8,
			     rd, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "window of another PD");
	cr_assert_eq(do_bind(mw, nk, false, ro, va(0), 8,
			     OPENRDMA_ACCESS_REMOTE_WRITE, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "remote write, MR not writable");
	cr_assert_eq(do_bind(mw, nk, false, ok, va(0), 8,
			     OPENRDMA_ACCESS_MW_BIND, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "not a window right");
	cr_assert_eq(do_bind(plain, nk, false, ok, va(0), 8, rd, &key),
		     OPENRDMA_WC_MW_BIND_ERR, "an MR is no window");
	cr_assert_eq(do_bind(mw, nk, false, ok, va(0), 8, rd, &key),
		     OPENRDMA_WC_SUCCESS);
}

Test(keymap, modify_and_remove)
{
	uint32_t k = add_mr(&pd_a, buf, 64, OPENRDMA_ACCESS_REMOTE_READ);
	struct sw_key_attr attr = {
		.type = SW_KEY_MR,
		.va = va(128),
		.length = 128,
		.access = OPENRDMA_ACCESS_REMOTE_READ,
		.pd = &pd_b,
	};

	cr_assert_eq(sw_keymap_modify(map, k, &attr), 0);
	cr_assert_eq(check(k, &pd_a, va(128), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(k, &pd_b, va(128), 128, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(sw_keymap_modify(map, k ^ 1, &attr), -OPENRDMA_ENOENT);
	cr_assert_eq(sw_keymap_remove(map, k ^ 1), -OPENRDMA_ENOENT);
	cr_assert_eq(sw_keymap_remove(map, k), 0);
	cr_assert_eq(check(k, &pd_b, va(128), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(sw_keymap_count(map), 0);
	attr.access = 0x400;
	cr_assert_eq(sw_keymap_add(map, &attr, &k), -OPENRDMA_EINVAL);
}

/*
 * A thread's checks of a key it checked before take no lock: every change
 * to the map (re-registration, removal, bind, invalidation), made here or
 * by another thread, must still be seen by the next check.
 */
struct change_arg {
	uint32_t key;
	struct sw_key_attr attr;
};

static void *modify_elsewhere(void *p)
{
	struct change_arg *a = p;

	cr_assert_eq(sw_keymap_modify(map, a->key, &a->attr), 0);
	return NULL;
}

Test(keymap, checks_see_every_change_after_a_cached_one)
{
	uint32_t mr =
		add_mr(&pd_a, buf, 256,
		       OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND |
			       OPENRDMA_ACCESS_REMOTE_READ);
	uint32_t mw = add_mw(&pd_a, SW_KEY_MW2), bound = 0;
	struct change_arg a = {
		.key = mr,
		.attr = { .type = SW_KEY_MR,
			  .va = va(1024),
			  .length = 64,
			  .access = OPENRDMA_ACCESS_REMOTE_READ,
			  .pd = &pd_a },
	};
	struct sw_keymap *old = map;
	pthread_t t;
	int i;

	/* a few checks make it the thread's copy */
	for (i = 0; i < 3; i++)
		cr_assert_eq(check(mr, &pd_a, va(0), 256,
				   OPENRDMA_ACCESS_REMOTE_READ),
			     OPENRDMA_WC_SUCCESS);
	/* re-registered by another thread: the old range is gone */
	cr_assert_eq(pthread_create(&t, NULL, modify_elsewhere, &a), 0);
	pthread_join(t, NULL);
	cr_assert_eq(check(mr, &pd_a, va(0), 8, OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(check(mr, &pd_a, va(1024), 64,
			   OPENRDMA_ACCESS_REMOTE_READ),
		     OPENRDMA_WC_SUCCESS);

	/* a window checked, then invalidated: no access through it */
	a.attr.va = va(0);
	a.attr.length = 256;
	a.attr.access = OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND;
	cr_assert_eq(sw_keymap_modify(map, mr, &a.attr), 0);
	cr_assert_eq(do_bind(mw, mw, false, mr, va(0), 128,
			     OPENRDMA_ACCESS_REMOTE_WRITE, &bound),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(check(bound, &pd_a, va(0), 128,
			   OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(sw_keymap_invalidate(map, bound, &pd_a), 0);
	cr_assert_eq(check(bound, &pd_a, va(0), 8,
			   OPENRDMA_ACCESS_REMOTE_WRITE),
		     OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(sw_keymap_remove(map, bound), 0);

	/* removed: its key names nothing */
	cr_assert_eq(check(mr, &pd_a, va(0), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_SUCCESS);
	cr_assert_eq(sw_keymap_remove(map, mr), 0);
	cr_assert_eq(check(mr, &pd_a, va(0), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_LOC_PROT_ERR);

	/* a new map, perhaps where the old one was, knows none of its keys */
	mr = add_mr(&pd_a, buf, 256, OPENRDMA_ACCESS_LOCAL_WRITE);
	cr_assert_eq(check(mr, &pd_a, va(0), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_SUCCESS);
	sw_keymap_destroy(old);
	cr_assert_eq(sw_keymap_create(&map), 0);
	cr_assert_eq(check(mr, &pd_a, va(0), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_LOC_PROT_ERR);
}

/* A key of a new MR whose cache set is set's (UINT32_MAX: any). */
static uint32_t add_mr_in_set(unsigned int set, size_t off)
{
	uint32_t key;
	int i;

	for (i = 0; i < 1000; i++) {
		key = add_mr(&pd_a, buf + off, 256,
			     OPENRDMA_ACCESS_LOCAL_WRITE |
				     OPENRDMA_ACCESS_REMOTE_READ);
		if (set == UINT32_MAX || SW_KEY_CACHE_SET(key) == set)
			return key;
		cr_assert_eq(sw_keymap_remove(map, key), 0);
	}
	cr_assert_fail("no key in cache set %u in 1000 tries", set);
	return 0;
}

/* A remote read of len bytes at buf + off through key, on pd_a. */
static enum openrdma_wc_status read_at(uint32_t key, size_t off, uint64_t len)
{
	return check(key, &pd_a, va(off), len, OPENRDMA_ACCESS_REMOTE_READ);
}

/*
 * Keys that share a set of the thread's cache, used by turns: each check
 * sees its own key's entry and every change made since, with two and
 * with three keys to a set of two ways.
 */
Test(keymap, keys_of_one_cache_set_see_their_own_changes)
{
	uint32_t a = add_mr_in_set(UINT32_MAX, 0);
	uint32_t b = add_mr_in_set(SW_KEY_CACHE_SET(a), 512);
	uint32_t c = add_mr_in_set(SW_KEY_CACHE_SET(a), 1024);
	struct change_arg ch = {
		.key = a,
		.attr = { .type = SW_KEY_MR,
			  .va = va(2048),
			  .length = 64,
			  .access = OPENRDMA_ACCESS_REMOTE_READ,
			  .pd = &pd_a },
	};
	pthread_t t;
	int i;

	for (i = 0; i < 4; i++) {
		cr_assert_eq(read_at(a, 0, 256), OPENRDMA_WC_SUCCESS);
		cr_assert_eq(read_at(b, 512, 256), OPENRDMA_WC_SUCCESS);
		/* each key's own range, not the other's */
		cr_assert_eq(read_at(b, 0, 8), OPENRDMA_WC_REM_ACCESS_ERR);
	}
	/* a moved by another thread: its old range is gone, b's stays */
	cr_assert_eq(pthread_create(&t, NULL, modify_elsewhere, &ch), 0);
	pthread_join(t, NULL);
	cr_assert_eq(read_at(a, 0, 8), OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(read_at(a, 2048, 64), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(read_at(b, 512, 256), OPENRDMA_WC_SUCCESS);
	/* three keys to the set's two ways, by turns */
	for (i = 0; i < 4; i++) {
		cr_assert_eq(read_at(c, 1024, 256), OPENRDMA_WC_SUCCESS);
		cr_assert_eq(read_at(a, 2048, 64), OPENRDMA_WC_SUCCESS);
		cr_assert_eq(read_at(b, 512, 256), OPENRDMA_WC_SUCCESS);
	}
	/* b removed while cached: its key names nothing, the others stay */
	cr_assert_eq(sw_keymap_remove(map, b), 0);
	cr_assert_eq(check(b, &pd_a, va(512), 8, OPENRDMA_ACCESS_LOCAL_WRITE),
		     OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert_eq(read_at(a, 2048, 8), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(read_at(c, 1024, 8), OPENRDMA_WC_SUCCESS);
}
