/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Segments: memfd files, so they have no name in any folder and vanish
 * with the last descriptor and mapping, even after kill -9.  The owner maps
 * its segment read-write and hands peers a read-only descriptor (a fresh
 * open of /proc/self/fd/N with O_RDONLY): a peer can neither write it nor
 * map it writable.  Segments are sealed against resizing, so a peer's
 * segment cannot shrink under our mapping.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transports/shm/shm.h"

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

int shm_seg_create(const char *name, size_t size, struct shm_seg *seg)
{
	void *addr;
	int fd, ret;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* the owner only; peers get a read-only descriptor */
	if (fchmod(fd, 0600) || ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, SEALS)) {
		ret = -errno;
		goto err_close;
	}
	addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	/* a forked child has no business with our rings */
	madvise(addr, size, MADV_DONTFORK);
	seg->addr = addr;
	seg->size = size;
	seg->fd = fd;
	return 0;

err_close:
	close(fd);
	return ret;
}

int shm_seg_ro_fd(const struct shm_seg *seg)
{
	char path[48];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", seg->fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int shm_seg_map_peer(int fd, size_t min, size_t max, struct shm_seg *seg)
{
	struct stat st;
	void *addr;
	int seals, ret;

	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	seals = fcntl(fd, F_GET_SEALS);
	ret = -OPENRDMA_EPROTO;
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || st.st_size < 0 ||
	    (size_t)st.st_size < min || (size_t)st.st_size > max)
		goto out;
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	madvise(addr, (size_t)st.st_size, MADV_DONTFORK);
	seg->addr = addr;
	seg->size = (size_t)st.st_size;
	seg->fd = -1;
	ret = 0;
out:
	close(fd);
	return ret;
}

void shm_seg_destroy(struct shm_seg *seg)
{
	if (seg->addr)
		munmap(seg->addr, seg->size);
	if (seg->fd >= 0)
		close(seg->fd);
	seg->addr = NULL;
	seg->fd = -1;
}

static size_t page_align(size_t n)
{
	return (n + SHM_PAGE - 1) & ~(size_t)(SHM_PAGE - 1);
}

int shm_chan_create(const char *name, enum shm_seg_kind kind, uint32_t nring,
		    uint32_t entries, uint64_t data, struct shm_seg *seg)
{
	size_t elems = page_align((size_t)entries * sizeof(struct shm_elem));
	size_t size = SHM_PAGE + nring * (elems + data), off = SHM_PAGE;
	struct shm_chan_hdr *hdr;
	uint32_t i;
	int ret;

	ret = shm_seg_create(name, size, seg);
	if (ret)
		return ret;
	hdr = seg->addr;
	hdr->magic = SHM_SEG_MAGIC;
	hdr->version = SHM_WIRE_VERSION;
	hdr->kind = kind;
	hdr->size = size;
	hdr->nring = nring;
	if (getrandom(&hdr->id, sizeof(hdr->id), 0) < 0)
		hdr->id = (uintptr_t)hdr;
	for (i = 0; i < nring; i++) {
		hdr->ring[i].elem_off = off;
		hdr->ring[i].nelem = entries;
		hdr->ring[i].data_off = off + elems;
		hdr->ring[i].data_size = data;
		off += elems + data;
	}
	return 0;
}

int shm_chan_check(const struct shm_chan_hdr *hdr, size_t size,
		   enum shm_seg_kind kind, uint32_t nring)
{
	if (hdr->magic != SHM_SEG_MAGIC || hdr->version != SHM_WIRE_VERSION ||
	    hdr->kind != kind || hdr->size != size || hdr->nring != nring)
		return -OPENRDMA_EPROTO;
	return 0;
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* A copy of a peer's ring description, checked against its segment: the
 * peer may change its header later, we keep using this copy. */
static int desc_get(const struct shm_chan_hdr *hdr, int ring, size_t size,
		    struct shm_ring_desc *d)
{
	uint64_t elems;

	memcpy(d, (const void *)&hdr->ring[ring], sizeof(*d));
	elems = (uint64_t)d->nelem * sizeof(struct shm_elem);
	if (!pow2(d->nelem) || d->nelem < 2 || !pow2(d->data_size) ||
	    d->data_size < SHM_PAGE || d->data_size > (1ull << 30) ||
	    d->elem_off % SHM_PAGE || d->data_off % SHM_PAGE ||
	    d->elem_off < SHM_PAGE || d->elem_off > size ||
	    elems > size - d->elem_off || d->data_off < SHM_PAGE ||
	    d->data_off > size || d->data_size > size - d->data_off)
		return -OPENRDMA_EPROTO;
	return 0;
}

void shm_chan_prod(struct shm_chan_hdr *own, int ring,
		   const struct shm_chan_hdr *peer, int head,
		   struct shm_ring_prod *p)
{
	struct shm_ring_desc *d = &own->ring[ring];
	uint8_t *base = (uint8_t *)own;

	shm_ring_prod_init(p, (struct shm_elem *)(void *)(base + d->elem_off),
			   d->nelem, base + d->data_off, d->data_size,
			   &peer->heads[head], own->id + (uint64_t)ring);
}

int shm_chan_cons(const struct shm_chan_hdr *peer, size_t size, int ring,
		  struct shm_chan_hdr *own, int head, struct shm_ring_cons *c)
{
	const uint8_t *base = (const uint8_t *)peer;
	struct shm_ring_desc d;
	int ret;

	ret = desc_get(peer, ring, size, &d);
	if (ret)
		return ret;
	shm_ring_cons_init(
		c, (const struct shm_elem *)(const void *)(base + d.elem_off),
		d.nelem, base + d.data_off, d.data_size, &own->heads[head],
		peer->id + (uint64_t)ring);
	return 0;
}
