// SPDX-License-Identifier: GPL-3.0-or-later
// QPDF's C API (qpdf-c.h, libqpdf-dev), each function forwarded to libqpdf.so.29 opened on first use
// (qpdf_lazy.c): most runs never open a PDF, and libqpdf brings the C++ runtime and its crypto providers.
#ifndef CQPDF_H
#define CQPDF_H

#include <qpdf/qpdf-c.h>

// 1 when libqpdf.so.29 could be opened (it is looked for once).
int cqpdf_available(void);

#endif
