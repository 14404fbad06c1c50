/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * it_rdma: one-sided operations over IT-API.  The server exposes a
 * region (its address and key travel in the accept's private data); the
 * client writes it n times and measures the bandwidth, reads it back,
 * then runs fetch-and-add and compare-and-swap on a counter in it.  The
 * client checks what it reads, the server what it was written.
 *
 *   it_rdma [-d interface] [-p port] [-n iters] [-s size] [-l] [server]
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "examples/itapi_common.h"

#define DEPTH 32
#define WINDOW 16
#define SWAP_VALUE 0x0123456789abcdefull

/* What the accept tells the client, in network byte order. */
struct region {
	uint64_t addr;
	uint64_t rkey;
	uint64_t len;
};

static unsigned char pattern(size_t k)
{
	return (unsigned char)(k * 31 + 7);
}

static int server(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep)
{
	struct itx_buf target, msg;
	struct region r;
	it_lmr_triplet_t seg;
	it_listen_handle_t l;
	uint64_t *counter, want;
	unsigned char ok = 1;
	size_t k;

	/* the region, then the counter the atomics work on */
	if (itx_buf(x, &target, o->size + 8, IT_PRIV_ALL) ||
	    itx_buf(x, &msg, 8, IT_PRIV_LOCAL))
		return -1;
	seg = itx_seg(&msg, 0, 8);
	if (it_post_recv(ep, &seg, 1, 0, IT_COMPLETION_FLAG))
		return -1;
	r.addr = htobe64((uint64_t)(uintptr_t)target.p);
	r.rkey = htobe64(target.rkey);
	r.len = htobe64(o->size);
	if (itx_listen(x, o, &l) || itx_accept(x, ep, &r, sizeof(r)))
		return -1;
	/* the client says when it is done, and what the counter holds */
	if (itx_wait(x->rq, IT_DTO_RC_RECV_CMPL_EVENT, NULL))
		return -1;
	memcpy(&want, msg.p, 8);
	counter = (uint64_t *)(target.p + o->size);
	for (k = 0; k < o->size; k++)
		if (target.p[k] != pattern(k))
			ok = 0;
	if (*counter != be64toh(want))
		ok = 0;
	msg.p[0] = ok;
	seg = itx_seg(&msg, 0, 1);
	/* unsignaled: the client disconnects once it has the verdict */
	if (it_post_send(ep, &seg, 1, 0, 0))
		return -1;
	if (!ok)
		fprintf(stderr, "server: the region does not hold what was "
				"written\n");
	else if (itx_disconnect(x, &ep, 1, true))
		ok = 0;
	itx_buf_free(&target);
	itx_buf_free(&msg);
	return ok ? 0 : -1;
}

static int writes(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep,
		  struct itx_buf *src, const struct region *r)
{
	it_lmr_triplet_t seg = itx_seg(src, 0, o->size);
	unsigned int posted = 0, done = 0;
	it_status_t st;
	double t0, us;

	t0 = itx_now_us();
	while (done < o->iters) {
		while (posted < o->iters && posted - done < WINDOW) {
			st = it_post_rdma_write(ep, &seg, 1, posted,
						IT_COMPLETION_FLAG, r->addr,
						r->rkey);
			if (st)
				return itx_fail("it_post_rdma_write", st);
			posted++;
		}
		if (itx_wait(x->sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, NULL))
			return -1;
		done++;
	}
	us = itx_now_us() - t0;
	printf("write bandwidth %.3f GB/s (%u writes of %zu bytes, %d in flight)\n",
	       (double)o->size * o->iters / us / 1e3, o->iters, o->size,
	       WINDOW);
	return 0;
}

static int atomics(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep,
		   const struct region *r)
{
	it_rdma_addr_t counter = r->addr + r->len;
	struct itx_buf res;
	it_lmr_triplet_t seg;
	uint64_t *old;
	unsigned int i;
	it_status_t st;

	if (!x->info->atomic_support) {
		printf("atomics        not supported by %s\n", o->dev);
		return 0;
	}
	if (itx_buf(x, &res, 8, IT_PRIV_LOCAL))
		return -1;
	old = (uint64_t *)res.p;
	seg = itx_seg(&res, 0, 8);
	for (i = 0; i < o->iters; i++) {
		st = it_post_atomic(ep, IT_FETCH_AND_ADD, 1, 0, &seg, i,
				    IT_COMPLETION_FLAG, counter, r->rkey);
		if (st)
			return itx_fail("it_post_atomic", st);
		if (itx_wait(x->sq, IT_DTO_FETCH_ADD_CMPL_EVENT, NULL))
			return -1;
		if (*old != i) {
			fprintf(stderr, "fetch-and-add %u returned %llu\n", i,
				(unsigned long long)*old);
			return -1;
		}
	}
	st = it_post_atomic(ep, IT_COMPARE_AND_SWAP, SWAP_VALUE, o->iters, &seg,
			    0, IT_COMPLETION_FLAG, counter, r->rkey);
	if (st)
		return itx_fail("it_post_atomic", st);
	if (itx_wait(x->sq, IT_DTO_CMP_SWAP_CMPL_EVENT, NULL))
		return -1;
	if (*old != o->iters) {
		fprintf(stderr, "compare-and-swap found %llu\n",
			(unsigned long long)*old);
		return -1;
	}
	printf("atomics        %u fetch-and-add and one compare-and-swap ok\n",
	       o->iters);
	itx_buf_free(&res);
	return 0;
}

static int client(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep)
{
	struct itx_buf src, back, msg, done;
	it_lmr_triplet_t seg;
	struct region r;
	it_event_t ev;
	uint64_t want;
	size_t k;

	if (itx_buf(x, &src, o->size, IT_PRIV_LOCAL) ||
	    itx_buf(x, &back, o->size, IT_PRIV_LOCAL) ||
	    itx_buf(x, &msg, 8, IT_PRIV_LOCAL) ||
	    itx_buf(x, &done, 8, IT_PRIV_LOCAL))
		return -1;
	for (k = 0; k < o->size; k++)
		src.p[k] = pattern(k);
	/* the receive for the server's verdict, after the connect: a
	 * retried connect resets the endpoint and its receives */
	seg = itx_seg(&msg, 0, 1);
	if (itx_connect(x, o, ep, &ev) ||
	    it_post_recv(ep, &seg, 1, 0, IT_COMPLETION_FLAG))
		return -1;
	if (!ev.conn.private_data_present) {
		fprintf(stderr, "no region in the accept\n");
		return -1;
	}
	memcpy(&r, ev.conn.private_data, sizeof(r));
	r.addr = be64toh(r.addr);
	r.rkey = be64toh(r.rkey);
	r.len = be64toh(r.len);
	if (r.len != o->size) {
		fprintf(stderr, "the server's region has %llu bytes\n",
			(unsigned long long)r.len);
		return -1;
	}
	if (writes(x, o, ep, &src, &r))
		return -1;
	seg = itx_seg(&back, 0, o->size);
	if (it_post_rdma_read(ep, &seg, 1, 0, IT_COMPLETION_FLAG, r.addr,
			      r.rkey) ||
	    itx_wait(x->sq, IT_DTO_RDMA_READ_CMPL_EVENT, NULL))
		return -1;
	if (memcmp(back.p, src.p, o->size)) {
		fprintf(stderr, "the read does not return what was written\n");
		return -1;
	}
	printf("read check     ok (%zu bytes)\n", o->size);
	if (atomics(x, o, ep, &r))
		return -1;
	/* tell the server what the counter holds now */
	want = htobe64(x->info->atomic_support ? SWAP_VALUE : 0);
	memcpy(done.p, &want, 8);
	seg = itx_seg(&done, 0, 8);
	if (it_post_send(ep, &seg, 1, 0, IT_COMPLETION_FLAG) ||
	    itx_wait(x->sq, IT_DTO_SEND_CMPL_EVENT, NULL))
		return -1;
	if (itx_wait(x->rq, IT_DTO_RC_RECV_CMPL_EVENT, NULL))
		return -1;
	if (msg.p[0] != 1) {
		fprintf(stderr, "the server found the region wrong\n");
		return -1;
	}
	printf("server check   ok\n");
	if (itx_disconnect(x, &ep, 1, false))
		return -1;
	itx_buf_free(&src);
	itx_buf_free(&back);
	itx_buf_free(&msg);
	itx_buf_free(&done);
	return 0;
}

static int rdma(const struct itx_opts *o, bool is_server)
{
	it_ep_attributes_t attr;
	it_ep_handle_t ep;
	struct itx x;
	int ret;

	if (itx_open(&x, o, 4 * DEPTH))
		return -1;
	attr = itx_rc_attr(&x, DEPTH);
	if (it_ep_rc_create(x.pz, x.sq, x.rq, x.cmsg, IT_EP_NO_FLAG, &attr,
			    &ep)) {
		itx_close(&x);
		return itx_fail("it_ep_rc_create", IT_ERR_RESOURCES);
	}
	ret = is_server ? server(&x, o, ep) : client(&x, o, ep);
	itx_close(&x);
	return ret;
}

int main(int argc, char **argv)
{
	struct itx_opts o = {
		.port = 18526,
		.iters = 1000,
		.size = 65536,
		.max_size = 1 << 28,
	};
	int ret = itx_parse(argc, argv, &o);

	if (ret)
		return ret;
	if (o.server || o.local)
		printf("interface      %s\n", o.dev);
	return itx_main(&o, rdma);
}
