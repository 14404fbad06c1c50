/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Names of completion statuses, QP states, async and CM events. */
#include <openrdma/verbs.h>

#include "core/export.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* An entry of table, or "unknown" outside it or in a hole. */
static const char *lookup(const char *const *table, size_t size,
			  unsigned int value)
{
	if (value >= size || !table[value])
		return "unknown";
	return table[value];
}

OPENRDMA_EXPORT const char *
openrdma_wc_status_str(enum openrdma_wc_status status)
{
	static const char *const names[] = {
		[OPENRDMA_WC_SUCCESS] = "success",
		[OPENRDMA_WC_LOC_LEN_ERR] = "local length error",
		[OPENRDMA_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[OPENRDMA_WC_LOC_EEC_OP_ERR] =
			"local EE context operation error",
		[OPENRDMA_WC_LOC_PROT_ERR] = "local protection error",
		[OPENRDMA_WC_WR_FLUSH_ERR] = "work request flushed",
		[OPENRDMA_WC_MW_BIND_ERR] = "memory window bind error",
		[OPENRDMA_WC_BAD_RESP_ERR] = "bad response",
		[OPENRDMA_WC_LOC_ACCESS_ERR] = "local access error",
		[OPENRDMA_WC_REM_INV_REQ_ERR] = "remote invalid request",
		[OPENRDMA_WC_REM_ACCESS_ERR] = "remote access error",
		[OPENRDMA_WC_REM_OP_ERR] = "remote operation error",
		[OPENRDMA_WC_RETRY_EXC_ERR] =
			"transport retry counter exceeded",
		[OPENRDMA_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[OPENRDMA_WC_LOC_RDD_VIOL_ERR] = "local RDD violation",
		[OPENRDMA_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[OPENRDMA_WC_REM_ABORT_ERR] = "operation aborted",
		[OPENRDMA_WC_INV_EECN_ERR] = "invalid EE context number",
		[OPENRDMA_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[OPENRDMA_WC_FATAL_ERR] = "fatal error",
		[OPENRDMA_WC_RESP_TIMEOUT_ERR] = "response timeout",
		[OPENRDMA_WC_GENERAL_ERR] = "general error",
	};

	return lookup(names, ARRAY_SIZE(names), (unsigned int)status);
}

OPENRDMA_EXPORT const char *openrdma_qp_state_str(enum openrdma_qp_state state)
{
	static const char *const names[] = {
		[OPENRDMA_QPS_RESET] = "RESET",
		[OPENRDMA_QPS_INIT] = "INIT",
		[OPENRDMA_QPS_RTR] = "RTR",
		[OPENRDMA_QPS_RTS] = "RTS",
		[OPENRDMA_QPS_SQD] = "SQD",
		[OPENRDMA_QPS_SQE] = "SQE",
		[OPENRDMA_QPS_ERR] = "ERR",
		[OPENRDMA_QPS_UNKNOWN] = "UNKNOWN",
	};

	return lookup(names, ARRAY_SIZE(names), (unsigned int)state);
}

OPENRDMA_EXPORT const char *
openrdma_event_type_str(enum openrdma_event_type type)
{
	static const char *const names[] = {
		[OPENRDMA_EVENT_CQ_ERR] = "CQ error",
		[OPENRDMA_EVENT_QP_FATAL] =
			"local work queue catastrophic error",
		[OPENRDMA_EVENT_QP_REQ_ERR] =
			"invalid request local work queue error",
		[OPENRDMA_EVENT_QP_ACCESS_ERR] =
			"local access violation work queue error",
		[OPENRDMA_EVENT_COMM_EST] = "communication established",
		[OPENRDMA_EVENT_SQ_DRAINED] = "send queue drained",
		[OPENRDMA_EVENT_PATH_MIG] = "path migrated",
		[OPENRDMA_EVENT_PATH_MIG_ERR] = "path migration request error",
		[OPENRDMA_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[OPENRDMA_EVENT_PORT_ACTIVE] = "port active",
		[OPENRDMA_EVENT_PORT_ERR] = "port error",
		[OPENRDMA_EVENT_LID_CHANGE] = "LID change",
		[OPENRDMA_EVENT_PKEY_CHANGE] = "P_Key change",
		[OPENRDMA_EVENT_SM_CHANGE] = "SM change",
		[OPENRDMA_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[OPENRDMA_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[OPENRDMA_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[OPENRDMA_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[OPENRDMA_EVENT_GID_CHANGE] = "GID table change",
	};

	return lookup(names, ARRAY_SIZE(names), (unsigned int)type);
}

OPENRDMA_EXPORT const char *
openrdma_cm_event_str(enum openrdma_cm_event_type type)
{
	static const char *const names[] = {
		[OPENRDMA_CM_EVENT_ADDR_RESOLVED] = "ADDR_RESOLVED",
		[OPENRDMA_CM_EVENT_ADDR_ERROR] = "ADDR_ERROR",
		[OPENRDMA_CM_EVENT_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
		[OPENRDMA_CM_EVENT_ROUTE_ERROR] = "ROUTE_ERROR",
		[OPENRDMA_CM_EVENT_CONNECT_REQUEST] = "CONNECT_REQUEST",
		[OPENRDMA_CM_EVENT_CONNECT_RESPONSE] = "CONNECT_RESPONSE",
		[OPENRDMA_CM_EVENT_CONNECT_ERROR] = "CONNECT_ERROR",
		[OPENRDMA_CM_EVENT_UNREACHABLE] = "UNREACHABLE",
		[OPENRDMA_CM_EVENT_REJECTED] = "REJECTED",
		[OPENRDMA_CM_EVENT_ESTABLISHED] = "ESTABLISHED",
		[OPENRDMA_CM_EVENT_DISCONNECTED] = "DISCONNECTED",
		[OPENRDMA_CM_EVENT_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
		[OPENRDMA_CM_EVENT_MULTICAST_JOIN] = "MULTICAST_JOIN",
		[OPENRDMA_CM_EVENT_MULTICAST_ERROR] = "MULTICAST_ERROR",
		[OPENRDMA_CM_EVENT_ADDR_CHANGE] = "ADDR_CHANGE",
		[OPENRDMA_CM_EVENT_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	};

	return lookup(names, ARRAY_SIZE(names), (unsigned int)type);
}
