/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma-info: what OpenRDMA finds on this machine, and why.  Lists the
 * transports (loaded or not, with the reason), the interfaces, their
 * device and port attributes, and every parameter.  Uses only the public
 * API of libopenrdma.  See openrdma-info(1).
 */
#include "config.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/param.h>
#include <openrdma/registry.h>
#include <openrdma/transport.h>
#include <openrdma/verbs.h>

#include "registry/info_out.h"

enum {
	EXIT_USAGE = 2,
	OPT_VERSION = 256,
	OPT_DAT_CONF,
};

struct options {
	bool verbose;
	bool params;
	bool json;
	bool dat_conf;
	const char *device;
};

static const char *const usage_text =
	"Usage: openrdma-info [OPTION]...\n"
	"Lists the transports and interfaces OpenRDMA finds, and its parameters.\n"
	"\n"
	"  -v, --verbose       also show each interface's device and port attributes\n"
	"  -d, --device NAME   show interface NAME only, with its attributes\n"
	"  -p, --params        list every parameter: value, source, variable, help\n"
	"  -j, --json          print JSON\n"
	"      --dat-conf      print a dat.conf line for each interface, for\n"
	"                      DAT programs (see dat_registry(3))\n"
	"  -h, --help          print this help and exit\n"
	"      --version       print the version and exit\n";

/* ------------------------------------------------------------------ */
/* Names of values                                                    */
/* ------------------------------------------------------------------ */

static const char *port_state_str(enum openrdma_port_state state)
{
	static const char *const names[] = {
		[OPENRDMA_PORT_NOP] = "nop",
		[OPENRDMA_PORT_DOWN] = "down",
		[OPENRDMA_PORT_INIT] = "init",
		[OPENRDMA_PORT_ARMED] = "armed",
		[OPENRDMA_PORT_ACTIVE] = "active",
		[OPENRDMA_PORT_ACTIVE_DEFER] = "active_defer",
	};

	if ((unsigned int)state < sizeof(names) / sizeof(names[0]))
		return names[state];
	return "unknown";
}

static int mtu_bytes(enum openrdma_mtu mtu)
{
	return mtu >= OPENRDMA_MTU_256 && mtu <= OPENRDMA_MTU_4096 ?
		       128 << mtu :
		       0;
}

static const char *link_layer_str(uint8_t link_layer)
{
	switch (link_layer) {
	case OPENRDMA_LINK_LAYER_INFINIBAND:
		return "infiniband";
	case OPENRDMA_LINK_LAYER_ETHERNET:
		return "ethernet";
	case OPENRDMA_LINK_LAYER_LOOPBACK:
		return "loopback";
	default:
		return "unspecified";
	}
}

static const char *node_transport_str(enum openrdma_node_transport t)
{
	switch (t) {
	case OPENRDMA_NODE_SOFTWARE:
		return "software";
	case OPENRDMA_NODE_IB:
		return "ib";
	case OPENRDMA_NODE_IWARP:
		return "iwarp";
	}
	return "unknown";
}

static const char *atomic_cap_str(enum openrdma_atomic_cap cap)
{
	switch (cap) {
	case OPENRDMA_ATOMIC_NONE:
		return "none";
	case OPENRDMA_ATOMIC_HCA:
		return "hca";
	case OPENRDMA_ATOMIC_GLOB:
		return "glob";
	}
	return "unknown";
}

static const char *param_type_str(enum openrdma_param_type type)
{
	switch (type) {
	case OPENRDMA_PARAM_BOOL:
		return "bool";
	case OPENRDMA_PARAM_INT:
		return "int";
	case OPENRDMA_PARAM_SIZE:
		return "size";
	case OPENRDMA_PARAM_STRING:
		return "string";
	}
	return "unknown";
}

static const struct {
	uint32_t flag;
	const char *name;
} cap_names[] = {
	{ OPENRDMA_DEVICE_RC, "rc" },
	{ OPENRDMA_DEVICE_UD, "ud" },
	{ OPENRDMA_DEVICE_SRQ, "srq" },
	{ OPENRDMA_DEVICE_MW_TYPE1, "mw_type1" },
	{ OPENRDMA_DEVICE_MW_TYPE2, "mw_type2" },
	{ OPENRDMA_DEVICE_SEND_INV, "send_inv" },
	{ OPENRDMA_DEVICE_ZERO_BASED, "zero_based" },
	{ OPENRDMA_DEVICE_THREE_WAY, "three_way" },
	{ OPENRDMA_DEVICE_RNR_RETRY, "rnr_retry" },
	{ OPENRDMA_DEVICE_SRQ_LIMIT, "srq_limit" },
	{ OPENRDMA_DEVICE_CROSS_PROCESS, "cross_process" },
	{ OPENRDMA_DEVICE_CROSS_HOST, "cross_host" },
	{ OPENRDMA_DEVICE_PEER_CAN_READ_RMR, "peer_can_read_rmr" },
	{ OPENRDMA_DEVICE_IMM, "imm" },
	{ OPENRDMA_DEVICE_EXACT_ERRORS, "exact_errors" },
	{ OPENRDMA_DEVICE_SOLICITED, "solicited" },
	{ OPENRDMA_DEVICE_SOCKET_ADOPT, "socket_adopt" },
};

/* "127.0.0.1", "[::1]:4791", or "none". */
static void addr_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN];
	unsigned int port;

	switch (ss->ss_family) {
	case AF_INET:
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
		if (port)
			snprintf(buf, size, "%s:%u", host, port);
		else
			snprintf(buf, size, "%s", host);
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
		if (port)
			snprintf(buf, size, "[%s]:%u", host, port);
		else
			snprintf(buf, size, "%s", host);
		break;
	case AF_UNSPEC:
		snprintf(buf, size, "none");
		break;
	default:
		snprintf(buf, size, "address family %d", ss->ss_family);
	}
}

/* ------------------------------------------------------------------ */
/* Attributes                                                         */
/* ------------------------------------------------------------------ */

static void device_attr_out(struct info_out *o,
			    const struct openrdma_device_attr *a)
{
	size_t i;

	info_out_open(o, "device", '{');
	info_out_str(o, "transport", a->transport);
	info_out_str(o, "fw_ver", a->fw_ver);
	info_out_hex(o, "node_guid", a->node_guid);
	info_out_hex(o, "vendor_id", a->vendor_id);
	info_out_hex(o, "vendor_part_id", a->vendor_part_id);
	info_out_uint(o, "hw_ver", a->hw_ver);
	info_out_str(o, "node_transport",
		     node_transport_str(a->node_transport));
	info_out_uint(o, "phys_port_cnt", a->phys_port_cnt);
	info_out_uint(o, "max_mr_size", a->max_mr_size);
	info_out_hex(o, "page_size_cap", a->page_size_cap);
	info_out_uint(o, "max_msg_size", a->max_msg_size);
	info_out_uint(o, "max_ud_msg_size", a->max_ud_msg_size);
	info_out_int(o, "max_qp", a->max_qp);
	info_out_int(o, "max_qp_wr", a->max_qp_wr);
	info_out_int(o, "max_sge", a->max_sge);
	info_out_int(o, "max_sge_rd", a->max_sge_rd);
	info_out_int(o, "max_inline_data", a->max_inline_data);
	info_out_int(o, "max_cq", a->max_cq);
	info_out_int(o, "max_cqe", a->max_cqe);
	info_out_int(o, "max_mr", a->max_mr);
	info_out_int(o, "max_pd", a->max_pd);
	info_out_int(o, "max_mw", a->max_mw);
	info_out_int(o, "max_ah", a->max_ah);
	info_out_int(o, "max_srq", a->max_srq);
	info_out_int(o, "max_srq_wr", a->max_srq_wr);
	info_out_int(o, "max_srq_sge", a->max_srq_sge);
	info_out_int(o, "max_pkeys", a->max_pkeys);
	info_out_int(o, "max_qp_rd_atom", a->max_qp_rd_atom);
	info_out_int(o, "max_qp_init_rd_atom", a->max_qp_init_rd_atom);
	info_out_str(o, "atomic_cap", atomic_cap_str(a->atomic_cap));
	info_out_uint(o, "max_pdata_connect", a->max_pdata_connect);
	info_out_uint(o, "max_pdata_accept", a->max_pdata_accept);
	info_out_uint(o, "max_pdata_reject", a->max_pdata_reject);
	info_out_uint(o, "max_pdata_disconnect", a->max_pdata_disconnect);
	info_out_hex(o, "device_cap_flags", a->device_cap_flags);
	if (o->json) {
		info_out_open(o, "capabilities", '[');
		for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
			if (a->device_cap_flags & cap_names[i].flag)
				info_out_str(o, NULL, cap_names[i].name);
		info_out_close(o);
	} else {
		fprintf(o->fp,
			"%*scapabilities:", 2 * (o->depth - 1 + o->margin), "");
		for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
			if (a->device_cap_flags & cap_names[i].flag)
				fprintf(o->fp, " %s", cap_names[i].name);
		fputc('\n', o->fp);
	}
	info_out_close(o);
}

static void port_attr_out(struct info_out *o, uint8_t port_num,
			  const struct openrdma_port_attr *a)
{
	char addr[INET6_ADDRSTRLEN + 16];

	addr_str(&a->addr, addr, sizeof(addr));
	info_out_open(o, "port", '{');
	info_out_uint(o, "port_num", port_num);
	info_out_str(o, "state", port_state_str(a->state));
	info_out_int(o, "max_mtu", mtu_bytes(a->max_mtu));
	info_out_int(o, "active_mtu", mtu_bytes(a->active_mtu));
	info_out_uint(o, "max_msg_sz", a->max_msg_sz);
	info_out_int(o, "gid_tbl_len", a->gid_tbl_len);
	info_out_uint(o, "lid", a->lid);
	info_out_str(o, "link_layer", link_layer_str(a->link_layer));
	info_out_str(o, "address", addr);
	info_out_close(o);
}

/*
 * Opens dev and writes its attributes; on failure writes why.  Returns 0
 * or the error.
 */
static int attrs_out(struct info_out *o, struct openrdma_device *dev)
{
	struct openrdma_device_attr dattr;
	struct openrdma_port_attr pattr;
	struct openrdma_context *ctx;
	uint8_t port = dev->port_num ? dev->port_num : 1;
	char why[160];
	int ret;

	ret = openrdma_device_open(dev, &ctx);
	if (ret) {
		snprintf(why, sizeof(why), "open failed: %s",
			 openrdma_strerror(ret));
		info_out_str(o, "error", why);
		return ret;
	}
	memset(&dattr, 0, sizeof(dattr));
	ret = openrdma_device_query(ctx, &dattr);
	if (ret) {
		snprintf(why, sizeof(why), "device query failed: %s",
			 openrdma_strerror(ret));
		info_out_str(o, "error", why);
		goto out;
	}
	device_attr_out(o, &dattr);
	memset(&pattr, 0, sizeof(pattr));
	ret = openrdma_port_query(ctx, port, &pattr);
	if (ret) {
		snprintf(why, sizeof(why), "port %u query failed: %s", port,
			 openrdma_strerror(ret));
		info_out_str(o, "error", why);
		goto out;
	}
	port_attr_out(o, port, &pattr);
out:
	openrdma_context_close(ctx);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Sections                                                           */
/* ------------------------------------------------------------------ */

static void transports_out(struct info_out *o,
			   const struct openrdma_transport_info *list, int num)
{
	int i;

	if (!o->json) {
		printf("Transports:\n");
		for (i = 0; i < num; i++)
			printf("  %-10s %-8s %s\n    source: %s\n",
			       list[i].name,
			       list[i].loaded ? "loaded" : "skipped",
			       list[i].status, list[i].source);
		if (!num)
			printf("  (none)\n");
		return;
	}
	info_out_open(o, "transports", '[');
	for (i = 0; i < num; i++) {
		info_out_open(o, NULL, '{');
		info_out_str(o, "name", list[i].name);
		info_out_str(o, "description", list[i].description);
		info_out_str(o, "source", list[i].source);
		info_out_bool(o, "loaded", list[i].loaded);
		info_out_int(o, "num_interfaces", list[i].num_devices);
		info_out_str(o, "status", list[i].status);
		info_out_close(o);
	}
	info_out_close(o);
}

static int interface_out(struct info_out *o, struct openrdma_device *dev,
			 bool is_default, bool verbose)
{
	int i, ret = 0;

	if (!o->json) {
		printf("  %-12s transport %-8s device %-10s port %u%s\n",
		       dev->name, openrdma_device_transport_name(dev),
		       dev->dev_name, dev->port_num,
		       is_default ? "  (default)" : "");
		if (dev->num_params) {
			printf("    params:");
			for (i = 0; i < dev->num_params; i++)
				printf(" %s", dev->params[i]);
			printf("\n");
		}
		if (!verbose)
			return 0;
		/* Attributes indented under the interface's line. */
		o->margin = 2;
		ret = attrs_out(o, dev);
		o->margin = 0;
		printf("\n");
		return ret;
	}
	info_out_open(o, NULL, '{');
	info_out_str(o, "name", dev->name);
	info_out_str(o, "transport", openrdma_device_transport_name(dev));
	info_out_str(o, "device_name", dev->dev_name);
	info_out_uint(o, "port_num", dev->port_num);
	info_out_bool(o, "default", is_default);
	info_out_open(o, "params", '[');
	for (i = 0; i < dev->num_params; i++)
		info_out_str(o, NULL, dev->params[i]);
	info_out_close(o);
	if (verbose)
		ret = attrs_out(o, dev);
	info_out_close(o);
	return ret;
}

static int interfaces_out(struct info_out *o, struct openrdma_device **list,
			  int num, bool verbose)
{
	const char *def = openrdma_default_interface();
	int i;

	if (!o->json)
		printf("\nInterfaces:\n");
	if (o->json)
		info_out_open(o, "interfaces", '[');
	for (i = 0; i < num; i++)
		interface_out(o, list[i], def && !strcmp(def, list[i]->name),
			      verbose);
	if (o->json)
		info_out_close(o);
	if (!o->json && !num)
		printf("  (none)\n");
	return 0;
}

static int param_out(const struct openrdma_param_info *p, void *arg)
{
	const struct openrdma_param_def *def = p->def;
	struct info_out *o = arg;
	char name[80];

	snprintf(name, sizeof(name), "%s%s%s", p->scope ? p->scope : "",
		 p->scope ? "." : "", def->name);
	if (!o->json) {
		if (p->value)
			printf("%s = %s (%s)\n", name, p->value, p->source);
		else
			printf("%s (%s)\n", name, p->source);
		printf("    %s, %s", p->env_name, param_type_str(def->type));
		if (def->default_value)
			printf(", default \"%s\"", def->default_value);
		printf("\n    %s\n", def->help ? def->help : "");
		return 0;
	}
	info_out_open(o, NULL, '{');
	info_out_str(o, "name", name);
	info_out_str(o, "scope", p->scope);
	info_out_str(o, "value", p->value);
	info_out_str(o, "source", p->source);
	info_out_str(o, "env", p->env_name);
	info_out_str(o, "type", param_type_str(def->type));
	info_out_str(o, "default", def->default_value);
	info_out_str(o, "help", def->help);
	info_out_close(o);
	return 0;
}

static int params_out(struct info_out *o)
{
	int ret;

	if (!o->json)
		printf("Parameters (environment, else config file, else default):\n");
	if (o->json)
		info_out_open(o, "params", '[');
	ret = openrdma_param_foreach(param_out, o);
	if (o->json)
		info_out_close(o);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Main                                                               */
/* ------------------------------------------------------------------ */

static int parse_args(int argc, char **argv, struct options *opts)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "device", required_argument, NULL, 'd' },
		{ "params", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "dat-conf", no_argument, NULL, OPT_DAT_CONF },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "vd:pjh", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			opts->verbose = true;
			break;
		case 'd':
			opts->device = optarg;
			break;
		case 'p':
			opts->params = true;
			break;
		case 'j':
			opts->json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_SUCCESS);
		case OPT_VERSION:
			printf("openrdma-info %s\n", openrdma_version());
			exit(EXIT_SUCCESS);
		case OPT_DAT_CONF:
			opts->dat_conf = true;
			break;
		default:
			fputs(usage_text, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "openrdma-info: unexpected argument \"%s\"\n",
			argv[optind]);
		fputs(usage_text, stderr);
		return -1;
	}
	return 0;
}

/* -d NAME: that interface, verbose.  1 if it is unknown or won't open. */
static int one_device(struct info_out *o, const char *name)
{
	const char *def = openrdma_default_interface();
	struct openrdma_device *dev;
	int ret;

	ret = openrdma_device_find(name, &dev);
	if (ret) {
		fprintf(stderr,
			"openrdma-info: no interface \"%s\" (openrdma-info lists them)\n",
			name);
		return EXIT_FAILURE;
	}
	if (o->json)
		info_out_open(o, "interfaces", '[');
	ret = interface_out(o, dev, def && !strcmp(def, name), true);
	if (o->json)
		info_out_close(o);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int listing(struct info_out *o, bool verbose)
{
	struct openrdma_transport_info *tlist;
	struct openrdma_device **dlist;
	int tnum, dnum, ret;

	ret = openrdma_transport_info_list(&tlist, &tnum);
	if (ret) {
		fprintf(stderr, "openrdma-info: cannot list transports: %s\n",
			openrdma_strerror(ret));
		return EXIT_FAILURE;
	}
	transports_out(o, tlist, tnum);
	openrdma_transport_info_free(tlist, tnum);

	ret = openrdma_device_list_get(&dlist, &dnum);
	if (ret) {
		fprintf(stderr, "openrdma-info: cannot list interfaces: %s\n",
			openrdma_strerror(ret));
		return EXIT_FAILURE;
	}
	interfaces_out(o, dlist, dnum, verbose);
	openrdma_device_list_free(dlist);
	return EXIT_SUCCESS;
}

/*
 * --dat-conf: the dat.conf entry of every interface (the grammar is in
 * dat_registry(3)), for DAPL's libdat2 (DAT_OVERRIDE or /etc/dat.conf)
 * or OpenRDMA's.  The IA name is ofa-openrdma-<interface>; the provider
 * library finds the interface from the instance data.
 */
static int dat_conf_out(void)
{
	struct openrdma_device **list;
	int i, num, ret;

	ret = openrdma_device_list_get(&list, &num);
	if (ret) {
		fprintf(stderr, "openrdma-info: cannot list interfaces: %s\n",
			openrdma_strerror(ret));
		return EXIT_FAILURE;
	}
	printf("# DAT 2.0 entries for OpenRDMA's interfaces "
	       "(openrdma-info --dat-conf)\n");
	for (i = 0; i < num; i++)
		printf("ofa-openrdma-%s u2.0 nonthreadsafe default "
		       "libopenrdma-dat.so.2 dapl.2.0 \"%s 0\" \"\"\n",
		       list[i]->name, list[i]->name);
	openrdma_device_list_free(list);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct options opts = { 0 };
	struct info_out o;
	int status = EXIT_SUCCESS;

	if (parse_args(argc, argv, &opts))
		return EXIT_USAGE;
	if (opts.dat_conf)
		return dat_conf_out();

	info_out_init(&o, stdout, opts.json);
	info_out_open(&o, NULL, '{');
	info_out_str(&o, "version", opts.json ? openrdma_version() : NULL);
	if (!opts.json && !opts.device)
		printf("OpenRDMA %s\n\n", openrdma_version());

	if (opts.device)
		status = one_device(&o, opts.device);
	else if (!opts.params || opts.verbose)
		status = listing(&o, opts.verbose);

	if (opts.params && status == EXIT_SUCCESS) {
		if (!opts.json && (opts.device || !opts.params || opts.verbose))
			printf("\n");
		if (params_out(&o))
			status = EXIT_FAILURE;
	}
	info_out_finish(&o);
	return status;
}
