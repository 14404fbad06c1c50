/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0 (uDAPL): the API version a program is compiled for, and the
 * options that change the headers' contents.
 */
#ifndef _UDAT_CONFIG_H_
#define _UDAT_CONFIG_H_

/* dat_ia_open() asks the registry for a provider of this DAT version. */
#define DAT_VERSION_MAJOR 2
#define DAT_VERSION_MINOR 0

/*
 * dat_ia_open() also asks for this thread-safety level, and the registry
 * matches it exactly against dat.conf's threadsafe/nonthreadsafe field.
 * DAPL hard-wires DAT_FALSE; define DAT_THREADSAFE to DAT_TRUE before
 * the first DAT include to ask for a thread-safe provider instead.
 */
#ifndef DAT_THREADSAFE
#define DAT_THREADSAFE DAT_FALSE
#endif

/*
 * Extensions (dat_extension_op(), the extension ranges of the enums and
 * the provider's extension slot) are on by default, as in DAPL: the
 * DAT_PROVIDER layout depends on it.
 */
#ifndef DAT_EXTENSIONS
#define DAT_EXTENSIONS 1
#endif

#endif /* _UDAT_CONFIG_H_ */
