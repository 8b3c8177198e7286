#ifndef COMPASS_CLIBPQ_SHIM_H
#define COMPASS_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <libpq/libpq-fs.h>

/* Swift does not import char-literal macros such as PG_DIAG_SQLSTATE ('C');
   re-export the ones we read as constants. */
static const int CPQ_DIAG_SEVERITY = PG_DIAG_SEVERITY;
static const int CPQ_DIAG_SQLSTATE = PG_DIAG_SQLSTATE;
static const int CPQ_DIAG_MESSAGE_PRIMARY = PG_DIAG_MESSAGE_PRIMARY;
static const int CPQ_DIAG_MESSAGE_DETAIL = PG_DIAG_MESSAGE_DETAIL;
static const int CPQ_DIAG_MESSAGE_HINT = PG_DIAG_MESSAGE_HINT;
static const int CPQ_DIAG_CONSTRAINT_NAME = PG_DIAG_CONSTRAINT_NAME;
static const int CPQ_DIAG_TABLE_NAME = PG_DIAG_TABLE_NAME;
static const int CPQ_DIAG_SCHEMA_NAME = PG_DIAG_SCHEMA_NAME;
static const int CPQ_DIAG_COLUMN_NAME = PG_DIAG_COLUMN_NAME;
static const int CPQ_INV_READ = INV_READ;
static const int CPQ_INV_WRITE = INV_WRITE;
#endif
