/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A DAT program of the kind the dtest suite is, written against the public
 * DAT 2.0 headers only.  headers.sh compiles it as C in every dialect and
 * as C++ (so it keeps to the common subset of the two); interop.sh links
 * it with the system's libdat2.  It is not run: it needs an RDMA device
 * and a peer.
 */
#define _POSIX_C_SOURCE 200112L /* inet_pton() under strict -std= */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <stdlib.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#define BUF_SIZE 4096
#define QLEN 16
#define CONN_QUAL 41000
#define TIMEOUT_US 5000000

struct peer {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async_evd;
	DAT_PZ_HANDLE pz;
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE req_evd;
	DAT_EVD_HANDLE recv_evd;
	DAT_EVD_HANDLE conn_evd;
	DAT_EVD_HANDLE cr_evd;
	DAT_EP_HANDLE ep;
	DAT_PSP_HANDLE psp;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	DAT_VADDR reg_addr;
	char *buf;
};

static void report(const char *what, DAT_RETURN ret)
{
	const char *major = NULL;
	const char *minor = NULL;

	if (dat_strerror(ret, &major, &minor) == DAT_SUCCESS)
		fprintf(stderr, "%s: %s %s\n", what, major, minor);
	else
		fprintf(stderr, "%s: error 0x%x\n", what, (unsigned int)ret);
}

/* Wait for one event of the expected number, as dtest does. */
static DAT_RETURN wait_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER expected,
			     DAT_EVENT *event)
{
	DAT_COUNT nmore = 0;
	DAT_RETURN ret;

	ret = dat_evd_wait(evd, TIMEOUT_US, 1, event, &nmore);
	if (ret != DAT_SUCCESS)
		return ret;
	if (event->event_number != expected)
		return DAT_CLASS_ERROR | DAT_INVALID_STATE;
	return DAT_SUCCESS;
}

static DAT_RETURN open_and_query(struct peer *p, char *ia_name)
{
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR *pr_attr;
	DAT_RETURN ret;
	DAT_COUNT i;

	p->async_evd = DAT_HANDLE_NULL;
	ret = dat_ia_open(ia_name, QLEN, &p->async_evd, &p->ia);
	if (ret != DAT_SUCCESS)
		return ret;

	/* const member: allocated, as C++ cannot default-construct it */
	pr_attr = (DAT_PROVIDER_ATTR *)calloc(1, sizeof(*pr_attr));
	if (pr_attr == NULL)
		return DAT_CLASS_ERROR | DAT_INSUFFICIENT_RESOURCES;
	ret = dat_ia_query(p->ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
			   DAT_PROVIDER_FIELD_ALL, pr_attr);
	if (ret == DAT_SUCCESS) {
		printf("%s: max_eps %d, max_message_size %u, extension %d/%d\n",
		       ia_attr.adapter_name, ia_attr.max_eps,
		       ia_attr.max_message_size, ia_attr.extension_supported,
		       ia_attr.extension_version);
		for (i = 0; i < pr_attr->num_provider_specific_attr; i++) {
			const DAT_NAMED_ATTR *a =
				&pr_attr->provider_specific_attr[i];

			if (strcmp(a->name, DAT_IB_ATTR_FETCH_AND_ADD) == 0)
				printf("atomics: %s\n", a->value);
		}
		if (pr_attr->evd_stream_merging_supported[2][3])
			printf("DTO and connection events may share an EVD\n");
	}
	free(pr_attr);
	return ret;
}

static DAT_RETURN create_resources(struct peer *p)
{
	DAT_REGION_DESCRIPTION region;
	DAT_EP_ATTR ep_attr;
	DAT_VLEN reg_size;
	DAT_RETURN ret;

	ret = dat_pz_create(p->ia, &p->pz);
	if (ret != DAT_SUCCESS)
		return ret;

	ret = dat_cno_create(p->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &p->cno);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_evd_create(p->ia, QLEN, p->cno, DAT_EVD_DTO_FLAG,
			     &p->req_evd);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_evd_create(p->ia, QLEN, DAT_HANDLE_NULL,
			     (DAT_EVD_FLAGS)(DAT_EVD_DTO_FLAG |
					     DAT_EVD_RMR_BIND_FLAG),
			     &p->recv_evd);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_evd_create(p->ia, QLEN, DAT_HANDLE_NULL,
			     DAT_EVD_CONNECTION_FLAG, &p->conn_evd);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_evd_create(p->ia, QLEN, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
			     &p->cr_evd);
	if (ret != DAT_SUCCESS)
		return ret;

	p->buf = (char *)malloc(BUF_SIZE);
	if (p->buf == NULL)
		return DAT_CLASS_ERROR | DAT_INSUFFICIENT_RESOURCES;
	region.for_va = p->buf;
	ret = dat_lmr_create(
		p->ia, DAT_MEM_TYPE_VIRTUAL, region, BUF_SIZE, p->pz,
		(DAT_MEM_PRIV_FLAGS)(DAT_MEM_PRIV_ALL_FLAG |
				     (int)DAT_IB_MEM_PRIV_REMOTE_ATOMIC),
		DAT_VA_TYPE_VA, &p->lmr, &p->lmr_context, &p->rmr_context,
		&reg_size, &p->reg_addr);
	if (ret != DAT_SUCCESS)
		return ret;

	memset(&ep_attr, 0, sizeof(ep_attr));
	ep_attr.service_type = DAT_SERVICE_TYPE_RC;
	ep_attr.max_message_size = BUF_SIZE;
	ep_attr.max_rdma_size = BUF_SIZE;
	ep_attr.qos = DAT_QOS_BEST_EFFORT;
	ep_attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	ep_attr.max_recv_dtos = QLEN;
	ep_attr.max_request_dtos = QLEN;
	ep_attr.max_recv_iov = 1;
	ep_attr.max_request_iov = 1;
	ep_attr.max_rdma_read_in = 4;
	ep_attr.max_rdma_read_out = 4;
	ep_attr.srq_soft_hw = DAT_HW_DEFAULT;
	return dat_ep_create(p->ia, p->pz, p->recv_evd, p->req_evd, p->conn_evd,
			     &ep_attr, &p->ep);
}

static DAT_RETURN connect_peer(struct peer *p, int server,
			       DAT_IA_ADDRESS_PTR remote)
{
	DAT_CR_PARAM cr_param;
	DAT_EP_PARAM ep_param;
	DAT_EVENT event;
	DAT_RETURN ret;
	DAT_CR_HANDLE cr;
	char pdata[16] = "dat_program";

	if (server) {
		ret = dat_psp_create(p->ia, CONN_QUAL, p->cr_evd,
				     DAT_PSP_CONSUMER_FLAG, &p->psp);
		if (ret != DAT_SUCCESS)
			return ret;
		ret = wait_event(p->cr_evd, DAT_CONNECTION_REQUEST_EVENT,
				 &event);
		if (ret != DAT_SUCCESS)
			return ret;
		cr = event.event_data.cr_arrival_event_data.cr_handle;
		ret = dat_cr_query(cr, DAT_CR_FIELD_ALL, &cr_param);
		if (ret != DAT_SUCCESS)
			return ret;
		if (cr_param.private_data_size < 1)
			return dat_cr_reject(cr, 0, NULL);
		ret = dat_cr_accept(cr, p->ep, 0, NULL);
	} else {
		ret = dat_ep_connect(p->ep, remote, CONN_QUAL, TIMEOUT_US,
				     (DAT_COUNT)sizeof(pdata), pdata,
				     DAT_QOS_BEST_EFFORT,
				     DAT_CONNECT_DEFAULT_FLAG);
	}
	if (ret != DAT_SUCCESS)
		return ret;
	ret = wait_event(p->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &event);
	if (ret != DAT_SUCCESS)
		return ret;
	return dat_ep_query(p->ep, DAT_EP_FIELD_ALL, &ep_param);
}

static DAT_RETURN exchange(struct peer *p)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rmr;
	DAT_DTO_COOKIE cookie;
	DAT_EVENT event;
	DAT_RETURN ret;
	const DAT_DTO_COMPLETION_EVENT_DATA *dto;
	const DAT_IB_EXTENSION_EVENT_DATA *ext;

	iov.virtual_address = (DAT_VADDR)(unsigned long)p->buf;
	iov.segment_length = BUF_SIZE / 2;
	iov.lmr_context = p->lmr_context;
	cookie.as_64 = 1;
	ret = dat_ep_post_recv(p->ep, 1, &iov, cookie,
			       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;

	cookie.as_64 = 2;
	ret = dat_ep_post_send(p->ep, 1, &iov, cookie,
			       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = wait_event(p->req_evd, DAT_DTO_COMPLETION_EVENT, &event);
	if (ret != DAT_SUCCESS)
		return ret;
	dto = &event.event_data.dto_completion_event_data;
	if (dto->status != DAT_DTO_SUCCESS || dto->user_cookie.as_64 != 2 ||
	    dto->operation != DAT_DTO_SEND)
		return DAT_CLASS_ERROR | DAT_INTERNAL_ERROR;

	/* the peer's buffer: the second half of the same region here */
	rmr.virtual_address = p->reg_addr + BUF_SIZE / 2;
	rmr.segment_length = BUF_SIZE / 2;
	rmr.rmr_context = p->rmr_context;
	cookie.as_ptr = p;
	ret = dat_ep_post_rdma_write(p->ep, 1, &iov, cookie, &rmr,
				     DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_ep_post_rdma_read(p->ep, 1, &iov, cookie, &rmr,
				    DAT_COMPLETION_SUPPRESS_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;

	/* the IB extensions, as dtestx uses them */
	iov.segment_length = sizeof(DAT_UINT64);
	rmr.segment_length = sizeof(DAT_UINT64);
	ret = dat_ib_post_fetch_and_add(p->ep, 1, &iov, cookie, &rmr,
					DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_ib_post_cmp_and_swap(p->ep, 0, 1, &iov, cookie, &rmr,
				       DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = dat_ib_post_rdma_write_immed(p->ep, 1, &iov, cookie, &rmr, 0x1234,
					   DAT_COMPLETION_DEFAULT_FLAG);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = wait_event(p->req_evd, (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT,
			 &event);
	if (ret != DAT_SUCCESS)
		return ret;
	ext = (const DAT_IB_EXTENSION_EVENT_DATA *)event.event_extension_data;
	if (ext->type == DAT_IB_RDMA_WRITE_IMMED_DATA)
		printf("immediate data 0x%x\n", ext->val.immed.data);
	else if (ext->type == DAT_IB_UD_REMOTE_AH)
		printf("remote qpn %u\n", ext->remote_ah.qpn);
	return DAT_SUCCESS;
}

static void teardown(struct peer *p)
{
	DAT_EVENT event;
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;

	if (p->ep != DAT_HANDLE_NULL) {
		(void)dat_ep_disconnect(p->ep, DAT_CLOSE_DEFAULT);
		(void)wait_event(p->conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED,
				 &event);
		(void)dat_ep_free(p->ep);
	}
	while (dat_evd_dequeue(p->req_evd, &event) == DAT_SUCCESS)
		;
	if (DAT_GET_TYPE(dat_cno_wait(p->cno, 0, &evd)) == DAT_TIMEOUT_EXPIRED)
		evd = DAT_HANDLE_NULL;
	if (p->psp != DAT_HANDLE_NULL)
		(void)dat_psp_free(p->psp);
	if (p->lmr != DAT_HANDLE_NULL)
		(void)dat_lmr_free(p->lmr);
	(void)dat_evd_free(p->cr_evd);
	(void)dat_evd_free(p->conn_evd);
	(void)dat_evd_free(p->recv_evd);
	(void)dat_evd_free(p->req_evd);
	(void)dat_cno_free(p->cno);
	(void)dat_pz_free(p->pz);
	(void)dat_ia_close(p->ia, DAT_CLOSE_ABRUPT_FLAG);
	free(p->buf);
}

static int run(char *ia_name, int server, DAT_IA_ADDRESS_PTR remote)
{
	struct peer p;
	DAT_RETURN ret;

	memset(&p, 0, sizeof(p));
	ret = open_and_query(&p, ia_name);
	if (ret != DAT_SUCCESS) {
		report("dat_ia_open", ret);
		return 1;
	}
	ret = create_resources(&p);
	if (ret == DAT_SUCCESS)
		ret = connect_peer(&p, server, remote);
	if (ret == DAT_SUCCESS)
		ret = exchange(&p);
	if (ret != DAT_SUCCESS)
		report("dat_program", ret);
	teardown(&p);
	return ret == DAT_SUCCESS ? 0 : 1;
}

/* dat_program IA_NAME            serve one connection
 * dat_program IA_NAME SERVER_IP  connect to it */
int main(int argc, char *argv[])
{
	struct sockaddr_in server;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IA_NAME [SERVER_IP]\n", argv[0]);
		return 2;
	}
	if (argc == 2)
		return run(argv[1], 1, NULL);
	memset(&server, 0, sizeof(server));
	server.sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[2], &server.sin_addr) != 1) {
		fprintf(stderr, "%s: not an IPv4 address\n", argv[2]);
		return 2;
	}
	return run(argv[1], 0, (DAT_IA_ADDRESS_PTR)&server);
}
