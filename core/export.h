/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#ifndef CORE_EXPORT_H
#define CORE_EXPORT_H

/* Marks a definition as part of the public ABI (see libopenrdma.map). */
#define OPENRDMA_EXPORT __attribute__((visibility("default")))

#endif /* CORE_EXPORT_H */
