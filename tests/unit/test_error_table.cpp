// C against C++ for every row of the error table (include/h5loom/error_codes.def):
// the C++ class carries the row's ErrorCode, the C API returns it as the row's
// LOOM_ERR_* with the message, and loom_status_name spells it. A new row is
// checked here without a change to this file.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "capi/capi_internal.hpp"
#include "h5loom/errors.hpp"
#include "h5loom/h5loom.h"

using namespace h5loom;

namespace {

struct Row {
  ErrorCode kind;
  loom_status status;
  int code;
  std::string c_name;
  std::string cpp_class;
  void (*raise)(const std::string&);  // throws the row's C++ class
};

std::vector<Row> table() {
  return {
#define H5LOOM_ERROR_BASE(Kind, C_NAME, code, Class, PyBase, meaning)                                 \
  {ErrorCode::Kind, LOOM_ERR_##C_NAME, code, "LOOM_ERR_" #C_NAME, #Class,                          \
   [](const std::string& m) { throw Error(ErrorCode::Kind, m); }},
#define H5LOOM_ERROR_KIND(Kind, C_NAME, code, Class, PyBase, meaning)                                 \
  {ErrorCode::Kind, LOOM_ERR_##C_NAME, code, "LOOM_ERR_" #C_NAME, #Class,                          \
   [](const std::string& m) { throw Class(m); }},
#include "h5loom/error_codes.def"
#undef H5LOOM_ERROR_KIND
#undef H5LOOM_ERROR_BASE
  };
}

}  // namespace

TEST(ErrorTable, CAndCppAgreeOnEveryRow) {
  const auto rows = table();
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().cpp_class, "Error");  // the base class's row comes first
  std::set<int> codes;
  for (const Row& r : rows) {
    SCOPED_TRACE(r.c_name);
    EXPECT_TRUE(codes.insert(r.code).second) << "code " << r.code << " twice";
    EXPECT_EQ(static_cast<int>(r.kind), r.code);
    EXPECT_EQ(r.status, r.code);
    EXPECT_EQ(std::string(loom_status_name(r.status)), r.c_name);

    // The C++ class has the row's code and is an h5loom::Error.
    try {
      r.raise("row " + r.c_name);
      ADD_FAILURE() << "nothing thrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), r.kind);
      EXPECT_EQ(std::string(e.what()), "row " + r.c_name);
    }

    // The C API returns the row's status, and keeps the message.
    const loom_status st = capi::guarded("test_error_table", [&] { r.raise("via the C API"); });
    EXPECT_EQ(st, r.status);
    EXPECT_EQ(loom_last_error_code(), r.status);
    EXPECT_EQ(std::string(loom_last_error_message()), "via the C API");
  }
  EXPECT_EQ(capi::guarded("test_error_table", [] {}), LOOM_OK);
  EXPECT_EQ(std::string(loom_last_error_message()), "");
  EXPECT_EQ(std::string(loom_status_name(LOOM_OK)), "LOOM_OK");
  EXPECT_EQ(static_cast<int>(ErrorCode::Ok), LOOM_OK);
}

TEST(ErrorTable, CodesOfTheAbiStay) {
  // Numbers in compiled C programs and in Python's Error.code: never moved.
  EXPECT_EQ(static_cast<int>(ErrorCode::Generic), 1);
  EXPECT_EQ(NotFoundError("").code(), ErrorCode::NotFound);
  EXPECT_EQ(static_cast<int>(ErrorCode::NotFound), 2);
  EXPECT_EQ(static_cast<int>(ErrorCode::Exists), 3);
  EXPECT_EQ(static_cast<int>(ErrorCode::Selection), 4);
  EXPECT_EQ(static_cast<int>(ErrorCode::Datatype), 5);
  EXPECT_EQ(static_cast<int>(ErrorCode::ReadOnly), 6);
  EXPECT_EQ(static_cast<int>(ErrorCode::Config), 7);
  EXPECT_EQ(static_cast<int>(ErrorCode::Usage), 8);
  EXPECT_EQ(static_cast<int>(ErrorCode::IO), 9);
  EXPECT_EQ(static_cast<int>(ErrorCode::CollectiveMismatch), 10);
  EXPECT_EQ(static_cast<int>(ErrorCode::Corruption), 11);
  EXPECT_EQ(CorruptionError("").code(), ErrorCode::Corruption);
}
