/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * it_ud: datagrams over IT-API.  The client finds the server's UD
 * endpoint by UD service resolution on the port, makes an address handle
 * from the reply's path and sends datagrams; the server answers each one
 * through an address handle made from the path it came from.  The client
 * checks every answer and prints the round-trip time.
 *
 *   it_ud [-d interface] [-p port] [-n iters] [-s size] [-l] [server]
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "examples/itapi_common.h"

#define DEPTH 16
#define QKEY 0x11223344u

static int ud_ep(struct itx *x, size_t size, it_ep_handle_t *ep)
{
	it_ep_attributes_t a;
	it_status_t st;

	memset(&a, 0, sizeof(a));
	a.max_dto_payload_size = size;
	a.max_request_dtos = DEPTH;
	a.max_recv_dtos = DEPTH;
	a.max_send_segments = 1;
	a.max_recv_segments = 1;
	a.srv.ud.ep_info.ud_ep_key = QKEY;
	st = it_ep_ud_create(x->pz, x->sq, x->rq, &a, 0, ep);
	return st ? itx_fail("it_ep_ud_create", st) : 0;
}

static int post_recv(it_ep_handle_t ep, struct itx_buf *b, unsigned int slot,
		     size_t size)
{
	it_lmr_triplet_t seg = itx_seg(b, slot * size, size);
	it_status_t st;

	st = it_post_recvfrom(ep, &seg, 1, slot, IT_COMPLETION_FLAG);
	return st ? itx_fail("it_post_recvfrom", st) : 0;
}

static int send_dg(it_ep_handle_t ep, struct itx_buf *b, size_t size,
		   it_addr_handle_t ah, it_ud_ep_id_t id, bool signaled)
{
	it_lmr_triplet_t seg = itx_seg(b, 0, size);
	it_dg_remote_ep_addr_t dst;
	it_status_t st;

	memset(&dst, 0, sizeof(dst));
	dst.type = IT_DG_TYPE_IB_UD;
	dst.addr.ud.addr = ah;
	dst.addr.ud.ep_info.ud_ep_id = id;
	dst.addr.ud.ep_info.ud_ep_key = QKEY;
	st = it_post_sendto(ep, &seg, 1, 0, signaled ? IT_COMPLETION_FLAG : 0,
			    &dst);
	return st ? itx_fail("it_post_sendto", st) : 0;
}

static int server(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep,
		  struct itx_buf *rbuf, struct itx_buf *sbuf)
{
	it_addr_handle_t ah = NULL;
	it_listen_handle_t l;
	it_remote_ep_info_t me;
	it_ep_param_t p;
	it_event_t ev;
	unsigned int i, slot;
	it_status_t st;

	if (itx_buf(x, rbuf, DEPTH * o->size, IT_PRIV_LOCAL) ||
	    itx_buf(x, sbuf, o->size, IT_PRIV_LOCAL))
		return -1;
	for (i = 0; i < DEPTH; i++)
		if (post_recv(ep, rbuf, i, o->size))
			return -1;
	st = it_ep_query(ep, IT_EP_PARAM_EP_ID | IT_EP_PARAM_EP_KEY, &p);
	if (st)
		return itx_fail("it_ep_query", st);
	me = p.attr.srv.ud.ep_info;
	if (itx_listen(x, o, &l))
		return -1;
	/* the client asks which endpoint serves the port */
	if (itx_wait(x->creq, IT_CM_REQ_UD_SERVICE_REQUEST_EVENT, &ev))
		return -1;
	st = it_ud_service_reply(ev.ud_svc_request.ud_svc_req_id,
				 IT_UD_SVC_EP_INFO_VALID, me, NULL, 0);
	if (st)
		return itx_fail("it_ud_service_reply", st);
	for (i = 0; i < o->iters; i++) {
		if (itx_wait(x->rq, IT_DTO_UD_RECV_CMPL_EVENT, &ev))
			return -1;
		slot = (unsigned int)ev.all_dto_cmpl.cookie;
		if (!ah) {
			st = it_address_handle_create(
				x->pz, &ev.all_dto_cmpl.src_path, 0, &ah);
			if (st)
				return itx_fail("it_address_handle_create", st);
		}
		memcpy(sbuf->p, rbuf->p + slot * o->size,
		       ev.all_dto_cmpl.transferred_length);
		/* every answer is out before the next one reuses sbuf */
		if (post_recv(ep, rbuf, slot, o->size) ||
		    send_dg(ep, sbuf, ev.all_dto_cmpl.transferred_length, ah,
			    ev.all_dto_cmpl.ud_ep_id, true) ||
		    itx_wait(x->sq, IT_DTO_SEND_CMPL_EVENT, NULL))
			return -1;
	}
	return 0;
}

/* Asks for the server's endpoint until it answers (-l: it may start late). */
static int resolve(struct itx *x, const struct itx_opts *o,
		   it_ud_svc_reply_event_t *reply)
{
	it_conn_qual_t cq = itx_conn_qual(o);
	it_ud_svc_req_handle_t svc;
	it_path_t path;
	it_event_t ev;
	it_status_t st;
	int tries;

	if (itx_server_path(x, o, &path))
		return -1;
	st = it_ud_service_request_handle_create(&cq, x->cmsg, &path, NULL, 0,
						 &svc);
	if (st)
		return itx_fail("it_ud_service_request_handle_create", st);
	for (tries = 0; tries < 400; tries++) {
		st = it_ud_service_request(svc);
		if (st)
			return itx_fail("it_ud_service_request", st);
		if (itx_wait(x->cmsg, IT_CM_MSG_UD_SERVICE_REPLY_EVENT, &ev))
			return -1;
		if (ev.ud_svc_reply.status == IT_UD_SVC_EP_INFO_VALID) {
			*reply = ev.ud_svc_reply;
			return 0;
		}
		usleep(25000);
	}
	fprintf(stderr, "no UD service on port %u\n", o->port);
	return -1;
}

static int client(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep,
		  struct itx_buf *rbuf, struct itx_buf *sbuf)
{
	it_ud_svc_reply_event_t reply;
	it_addr_handle_t ah;
	it_event_t ev;
	unsigned int i;
	it_status_t st;
	double t0, us;
	size_t k;

	if (itx_buf(x, rbuf, o->size, IT_PRIV_LOCAL) ||
	    itx_buf(x, sbuf, o->size, IT_PRIV_LOCAL) || resolve(x, o, &reply))
		return -1;
	st = it_address_handle_create(x->pz, &reply.dst_path, 0, &ah);
	if (st)
		return itx_fail("it_address_handle_create", st);
	for (k = 0; k < o->size; k++)
		sbuf->p[k] = (unsigned char)(k * 3);
	t0 = itx_now_us();
	for (i = 0; i < o->iters; i++) {
		sbuf->p[0] = (unsigned char)i;
		if (post_recv(ep, rbuf, 0, o->size) ||
		    send_dg(ep, sbuf, o->size, ah, reply.ep_info.ud_ep_id,
			    true) ||
		    itx_wait(x->sq, IT_DTO_SEND_CMPL_EVENT, NULL) ||
		    itx_wait(x->rq, IT_DTO_UD_RECV_CMPL_EVENT, &ev))
			return -1;
		if (ev.all_dto_cmpl.transferred_length != o->size ||
		    memcmp(rbuf->p, sbuf->p, o->size)) {
			fprintf(stderr, "datagram %u came back wrong\n", i);
			return -1;
		}
	}
	us = itx_now_us() - t0;
	printf("interface      %s\n", o->dev);
	printf("datagram size  %zu bytes, %u round trips\n", o->size, o->iters);
	printf("round trip     %.2f us\n", us / o->iters);
	printf("data check     ok\n");
	return 0;
}

static int ud(const struct itx_opts *o, bool is_server)
{
	struct itx_buf rbuf = { 0 }, sbuf = { 0 };
	it_ep_handle_t ep;
	struct itx x;
	int ret = -1;

	if (itx_open(&x, o, 4 * DEPTH))
		return -1;
	if (!(x.info->supported_service_types & IT_UD_SERVICE)) {
		fprintf(stderr, "%s has no UD service\n", o->dev);
	} else if (o->size > x.info->spigot_info[0].max_ud_send_len) {
		fprintf(stderr, "-s %zu: datagrams are at most %zu bytes\n",
			o->size, x.info->spigot_info[0].max_ud_send_len);
	} else if (!ud_ep(&x, o->size, &ep)) {
		ret = is_server ? server(&x, o, ep, &rbuf, &sbuf) :
				  client(&x, o, ep, &rbuf, &sbuf);
	}
	itx_close(&x);
	itx_buf_free(&rbuf);
	itx_buf_free(&sbuf);
	return ret;
}

int main(int argc, char **argv)
{
	struct itx_opts o = {
		.port = 18528,
		.iters = 1000,
		.size = 256,
		.max_size = 1 << 16,
	};
	int ret = itx_parse(argc, argv, &o);

	return ret ? ret : itx_main(&o, ud);
}
