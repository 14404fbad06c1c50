/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * IA handles.  As DAPL's libdat2 does, the registry hands out a small
 * index (1, 2, ...) for each open IA and keeps the provider's IA behind
 * it; calls that take an IA translate it.  The provider's own IA pointer,
 * which its query results carry, is accepted as well.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

#define STEP 64

struct slot {
	DAT_IA_HANDLE ia; /* the provider's; NULL: free */
	struct datreg_open open;
};

static pthread_mutex_t vec_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *vec;
static unsigned long vec_max;

DAT_IA_HANDLE datreg_ia_handle_add(DAT_IA_HANDLE ia,
				   const struct datreg_open *o)
{
	struct slot *grown;
	unsigned long i;

	pthread_mutex_lock(&vec_lock);
	/* index 0 would be DAT_HANDLE_NULL */
	for (i = 1; i < vec_max; i++)
		if (!vec[i].ia)
			break;
	if (i >= vec_max) {
		grown = realloc(vec, (vec_max + STEP) * sizeof(*vec));
		if (!grown) {
			pthread_mutex_unlock(&vec_lock);
			return DAT_HANDLE_NULL;
		}
		memset(grown + vec_max, 0, STEP * sizeof(*vec));
		vec = grown;
		i = vec_max ? vec_max : 1;
		vec_max += STEP;
	}
	vec[i].ia = ia;
	vec[i].open = *o;
	pthread_mutex_unlock(&vec_lock);
	return DAT_UL_TO_IA_HANDLE(i);
}

/* Under vec_lock: the slot of an index or of a provider IA pointer. */
static long slot_of(DAT_IA_HANDLE handle)
{
	unsigned long v = DAT_IA_HANDLE_TO_UL(handle), i;

	if (!handle)
		return -1;
	if (v < vec_max)
		return vec[v].ia ? (long)v : -1;
	for (i = 1; i < vec_max; i++)
		if (vec[i].ia == handle)
			return (long)i;
	return -1;
}

DAT_RETURN datreg_ia_handle_get(DAT_IA_HANDLE handle, DAT_IA_HANDLE *ia_out)
{
	long i;

	pthread_mutex_lock(&vec_lock);
	i = slot_of(handle);
	if (i > 0)
		*ia_out = vec[i].ia;
	pthread_mutex_unlock(&vec_lock);
	return i > 0 ? DAT_SUCCESS :
		       DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
}

DAT_RETURN datreg_ia_handle_del(DAT_IA_HANDLE handle, struct datreg_open *o)
{
	long i;

	pthread_mutex_lock(&vec_lock);
	i = slot_of(handle);
	if (i > 0) {
		*o = vec[i].open;
		memset(&vec[i], 0, sizeof(vec[i]));
	}
	pthread_mutex_unlock(&vec_lock);
	return i > 0 ? DAT_SUCCESS :
		       DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
}

bool datreg_is_ia_index(DAT_HANDLE handle)
{
	unsigned long v = DAT_IA_HANDLE_TO_UL(handle);
	bool is;

	pthread_mutex_lock(&vec_lock);
	is = v && v < vec_max && vec[v].ia;
	pthread_mutex_unlock(&vec_lock);
	return is;
}

DAT_HANDLE datreg_any_handle(DAT_HANDLE handle)
{
	DAT_IA_HANDLE ia;

	if (datreg_is_ia_index(handle) &&
	    datreg_ia_handle_get(handle, &ia) == DAT_SUCCESS)
		return ia;
	return handle;
}

/*
 * DAPL's libdat2 exports this and maps either way (index to IA, IA to
 * index); here it always answers the provider's IA, which is what its
 * callers need.
 */
OPENRDMA_EXPORT DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE handle,
					      DAT_IA_HANDLE *ia_out)
{
	if (!ia_out)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	return datreg_ia_handle_get(handle, ia_out);
}
