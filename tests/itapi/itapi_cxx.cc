/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * <it_api.h> used from C++: C linkage, the null handle assigned to typed
 * handles, the event union, and the binding selected by the command line.
 * Only compiled (cxx_compile.sh), never linked.
 */
#include <it_api.h>

#include <cstring>

#if defined(ITAPI_ENABLE_V21_BINDINGS)
typedef it_status_t (*lmr_create_ptr)(it_pz_handle_t, void *, it_iobl_t *,
				      it_length_t, it_addr_mode_t,
				      it_mem_priv_t, it_lmr_flag_t, uint32_t,
				      it_lmr_handle_t *, it_rmr_context_t *);
#elif defined(ITAPI_ENABLE_V20_BINDINGS)
typedef it_status_t (*lmr_create_ptr)(it_pz_handle_t, void *, it_length_t,
				      it_addr_mode_t, it_mem_priv_t,
				      it_lmr_flag_t, uint32_t,
				      it_lmr_handle_t *, it_rmr_context_t *);
#else
typedef it_status_t (*lmr_create_ptr)(it_pz_handle_t, void *, it_length_t,
				      it_mem_priv_t, it_lmr_flag_t, uint32_t,
				      it_lmr_handle_t *, it_rmr_context_t *);
#endif

/* Not called: taking the address checks the declared signature. */
lmr_create_ptr itapi_cxx_lmr_create(void);
lmr_create_ptr itapi_cxx_lmr_create(void)
{
	return &it_lmr_create;
}

int itapi_cxx_events(const it_event_t *ev);
int itapi_cxx_events(const it_event_t *ev)
{
	it_ep_handle_t ep = IT_NULL_HANDLE;
	it_evd_handle_t evd = IT_NULL_HANDLE;
	it_handle_t any = ep;

	if (ev->any.evd == evd || any != IT_NULL_HANDLE)
		return -1;

	switch (ev->event_number & IT_EVENT_STREAM_MASK) {
	case IT_DTO_EVENT_STREAM:
		return ev->dto_cmpl.dto_status == IT_DTO_SUCCESS ? 0 : 1;
	case IT_CM_REQ_EVENT_STREAM:
		return ev->conn_req.private_data_present == IT_TRUE ? 2 : 3;
	case IT_CM_MSG_EVENT_STREAM:
		return static_cast<int>(ev->conn.reject_reason_code);
	default:
		return ev->event_number == IT_SOFTWARE_EVENT ? 4 : 5;
	}
}

size_t itapi_cxx_path(it_path_t *path);
size_t itapi_cxx_path(it_path_t *path)
{
	std::memset(path, 0, sizeof(*path));
	path->remote.ib.sl = 3;
	path->remote.ib.flow_label = 0xfffff;
	return sizeof(it_dto_cookie_t) + path->remote.ib.sl;
}
