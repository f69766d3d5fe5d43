/* The C side of the error table (include/h5loom/error_codes.def), in plain C99:
 * the table expands in C, every row's LOOM_ERR_* has the row's code and
 * loom_status_name spells it, the codes are distinct, and the codes of the C ABI
 * have not moved. (tests/unit/test_error_table.cpp checks C against C++,
 * tests/python/package/test_errors.py Python against the table.)
 * Needs no MPI job: loom_status_name does not communicate. */
#include <h5loom/h5loom.h>
#include <stdio.h>
#include <string.h>

static int checks = 0, failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    ++checks;                                                                       \
    if (!(cond)) {                                                                  \
      ++failures;                                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
    }                                                                               \
  } while (0)

struct row {
  loom_status status;
  int code;
  const char* name;
};

/* Every row of the table, expanded in C. */
static const struct row rows[] = {
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning) {LOOM_ERR_##C_NAME, code, "LOOM_ERR_" #C_NAME},
#include <h5loom/error_codes.def>
#undef H5LOOM_ERROR_KIND
};
enum { nrows = (int)(sizeof rows / sizeof rows[0]) };

/* The C ABI: these numbers are in compiled programs and must never change. */
static const struct row abi[] = {
    {LOOM_OK, 0, "LOOM_OK"},
    {LOOM_ERR_GENERIC, 1, "LOOM_ERR_GENERIC"},
    {LOOM_ERR_NOT_FOUND, 2, "LOOM_ERR_NOT_FOUND"},
    {LOOM_ERR_EXISTS, 3, "LOOM_ERR_EXISTS"},
    {LOOM_ERR_SELECTION, 4, "LOOM_ERR_SELECTION"},
    {LOOM_ERR_DATATYPE, 5, "LOOM_ERR_DATATYPE"},
    {LOOM_ERR_READ_ONLY, 6, "LOOM_ERR_READ_ONLY"},
    {LOOM_ERR_CONFIG, 7, "LOOM_ERR_CONFIG"},
    {LOOM_ERR_USAGE, 8, "LOOM_ERR_USAGE"},
    {LOOM_ERR_IO, 9, "LOOM_ERR_IO"},
    {LOOM_ERR_COLLECTIVE_MISMATCH, 10, "LOOM_ERR_COLLECTIVE_MISMATCH"},
    {LOOM_ERR_CORRUPTION, 11, "LOOM_ERR_CORRUPTION"},
};

int main(void) {
  int i, j, code, named = 0;
  CHECK(nrows >= 11);
  CHECK(rows[0].status == LOOM_ERR_GENERIC); /* the base class's row comes first */
  for (i = 0; i < nrows; ++i) {
    CHECK(rows[i].status == rows[i].code);
    CHECK(rows[i].code > 0);
    CHECK(strcmp(loom_status_name(rows[i].status), rows[i].name) == 0);
    for (j = 0; j < i; ++j) CHECK(rows[j].code != rows[i].code);
  }
  for (i = 0; i < (int)(sizeof abi / sizeof abi[0]); ++i) {
    CHECK(abi[i].status == abi[i].code);
    CHECK(strcmp(loom_status_name(abi[i].status), abi[i].name) == 0);
  }
  /* loom_status_name knows exactly LOOM_OK and the table's codes */
  CHECK(strcmp(loom_status_name(LOOM_OK), "LOOM_OK") == 0);
  for (code = -3; code < 1000; ++code) {
    const char* name = loom_status_name(code);
    int in_table = code == LOOM_OK;
    for (i = 0; i < nrows; ++i) in_table |= rows[i].code == code;
    if (in_table) {
      ++named;
      CHECK(strcmp(name, "LOOM_ERR_UNKNOWN") != 0);
    } else {
      CHECK(strcmp(name, "LOOM_ERR_UNKNOWN") == 0);
    }
  }
  CHECK(named == nrows + 1);
  printf("error codes: %d rows, %d checks, %d failed\n", nrows, checks, failures);
  return failures ? 1 : 0;
}
