/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0: place for vendor additions common to uDAPL and kDAPL.
 * OpenRDMA adds none; the file exists so that programs including it build.
 */
#ifndef _DAT_VENDOR_SPECIFIC_H_
#define _DAT_VENDOR_SPECIFIC_H_

#endif /* _DAT_VENDOR_SPECIFIC_H_ */
