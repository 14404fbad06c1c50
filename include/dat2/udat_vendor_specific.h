/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0 (uDAPL): place for vendor additions to the user-level API.
 * OpenRDMA adds none; the file exists so that programs including it build.
 */
#ifndef _UDAT_VENDOR_SPECIFIC_H_
#define _UDAT_VENDOR_SPECIFIC_H_

#include <dat2/dat_vendor_specific.h>

#endif /* _UDAT_VENDOR_SPECIFIC_H_ */
