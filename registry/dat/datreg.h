/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * libopenrdma-dat2: the DAT 2.0 registry library, a drop-in for DAPL's
 * libdat2.  It reads dat.conf (or $DAT_OVERRIDE), loads provider
 * libraries on dat_ia_open(), keeps the tables they register, hands out
 * IA handles as small indexes, and dispatches every other call through
 * the DAT_PROVIDER the handle's object points to.
 *
 * Unlike DAPL's, it says why an open failed: every dat.conf line that
 * names the IA and was not used is explained (library missing, version,
 * thread safety, not default, malformed), and the subtype of
 * DAT_PROVIDER_NOT_FOUND names the key that did not match.
 */
#ifndef REGISTRY_DAT_DATREG_H
#define REGISTRY_DAT_DATREG_H

#include <pthread.h>
#include <stdbool.h>

#include <dat2/udat.h>
#include <dat2/dat_registry.h>

/* DAT_DBG_TYPE bits, as DAPL's libdat2 reads them. */
enum {
	DATREG_DBG_ERROR = 0x01,
	DATREG_DBG_GENERIC = 0x02,
	DATREG_DBG_SR = 0x04,
	DATREG_DBG_DR = 0x08,
	DATREG_DBG_PROVIDER_API = 0x10,
	DATREG_DBG_CONSUMER_API = 0x20,
};

void datreg_log(unsigned int type, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line of dat.conf, or an entry the registry adds itself. */
struct datreg_entry {
	DAT_PROVIDER_INFO info; /* the registry key */
	bool is_default;
	bool kernel; /* "k" API: parsed, never loaded */
	char *lib_path;
	char *provider_version;
	char *ia_params;
	char *platform_params;
	const char *origin; /* the file, or "built in" */
	int line;
	/* loaded: the library and its entry points, while ref > 0 */
	int ref;
	void *dl;
	DAT_PROVIDER_INIT_FUNC init;
	DAT_PROVIDER_FINI_FUNC fini;
	char *load_error; /* why the library did not load, last time */
	struct datreg_entry *next;
};

/* A line of dat.conf that is not an entry, and why. */
struct datreg_bad_line {
	const char *origin;
	int line;
	char *ia_name; /* the first field, if any */
	char *why;
	struct datreg_bad_line *next;
};

struct datreg_conf {
	struct datreg_entry *entries; /* in file order */
	struct datreg_bad_line *bad;
	char *path; /* the file read, or NULL */
	char *open_error; /* why it could not be read */
};

/* conf.c: parses the file at path into conf (appends). */
int datreg_conf_read(const char *path, struct datreg_conf *conf);
void datreg_conf_free(struct datreg_conf *conf);

/* A provider table registered by dat_registry_add_provider(). */
struct datreg_provider {
	DAT_PROVIDER_INFO info;
	const DAT_PROVIDER *provider;
	int ref; /* IAs open through it */
	struct datreg_provider *next;
};

/* registry.c: the static (dat.conf) and dynamic (providers) registries. */
struct datreg_open {
	struct datreg_entry *entry; /* NULL: registered without dat.conf */
	struct datreg_provider *dr;
};

/* Everything the registry knows; taken once, with its lock. */
void datreg_lock(void);
void datreg_unlock(void);
struct datreg_conf *datreg_conf_get(void);
/*
 * Finds and loads the provider for (name, version, thread safety) and
 * takes a reference on it; the error names the key that did not match,
 * and every unused dat.conf line for name is explained in the log.
 */
DAT_RETURN datreg_provider_open(const DAT_PROVIDER_INFO *key,
				struct datreg_open *out);
void datreg_provider_close(struct datreg_open *o);
bool datreg_info_equal(const DAT_PROVIDER_INFO *a, const DAT_PROVIDER_INFO *b);

/* handle.c: IA handles are indexes into a table of provider IAs. */
DAT_IA_HANDLE datreg_ia_handle_add(DAT_IA_HANDLE ia,
				   const struct datreg_open *o);
/* The provider's IA for a handle (an index, or a provider IA pointer). */
DAT_RETURN datreg_ia_handle_get(DAT_IA_HANDLE handle, DAT_IA_HANDLE *ia_out);
/* Removes the handle; returns its registry references in o. */
DAT_RETURN datreg_ia_handle_del(DAT_IA_HANDLE handle, struct datreg_open *o);
/* Whether a value is one of the handed-out indexes. */
bool datreg_is_ia_index(DAT_HANDLE handle);
/* Any handle, with the IA index translated. */
DAT_HANDLE datreg_any_handle(DAT_HANDLE handle);

/* The export DAPL's libdat2 has and providers may call. */
DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE handle, DAT_IA_HANDLE *ia_out);

#define DATREG_ERR(type, sub) ((DAT_RETURN)(DAT_CLASS_ERROR | (type) | (sub)))

/* A non-IA handle argument: NULL or an IA index is refused. */
static inline bool datreg_bad_handle(DAT_HANDLE h)
{
	return !h || datreg_is_ia_index(h);
}

/*
 * The body of a consumer call on a non-IA handle: refuses a bad one
 * (DAT_INVALID_HANDLE with subtype sub), else calls the slot of the
 * table that the handle's object points to.
 */
#define DATREG_CALL(h, sub, slot, ...)                   \
	(datreg_bad_handle(h) ?                          \
		 DATREG_ERR(DAT_INVALID_HANDLE, (sub)) : \
		 DAT_HANDLE_TO_PROVIDER(h)->slot((h), ##__VA_ARGS__))

/* The same on any handle: an IA index stands for the provider's IA. */
#define DATREG_ANY_CALL(h, slot, ...)                                        \
	({                                                                   \
		DAT_HANDLE h_ = (h);                                         \
		h_ ? (h_ = datreg_any_handle(h_),                            \
		      DAT_HANDLE_TO_PROVIDER(h_)->slot(h_, ##__VA_ARGS__)) : \
		     DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);    \
	})

/* The same on an IA handle, which is translated to the provider's IA. */
#define DATREG_IA_CALL(ia, slot, ...)                                       \
	({                                                                  \
		DAT_IA_HANDLE pia_;                                         \
		DAT_RETURN r_ = datreg_ia_handle_get((ia), &pia_);          \
		r_ == DAT_SUCCESS ?                                         \
			DAT_HANDLE_TO_PROVIDER(pia_)->slot(pia_,            \
							   ##__VA_ARGS__) : \
			r_;                                                 \
	})

#endif /* REGISTRY_DAT_DATREG_H */
