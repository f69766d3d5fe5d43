// A Zarr store in an S3 bucket ("s3://bucket/prefix"): one S3 object per
// Zarr object, through libcurl with its AWS Signature Version 4 signing.
// A PUT replaces an object whole (S3 never shows part of one), so publish()
// has nothing to do. Objects over `part_bytes` go up as multipart uploads;
// requests that fail for a reason that may pass (a dropped connection, HTTP
// 500, 503, 429) are retried with back-off.
#pragma once

#include <memory>

#include "engines/zarr/store.hpp"

namespace h5loom::zarr {

struct S3Config {
  std::string endpoint;  // "http://127.0.0.1:9000"; empty: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS's
  std::string region;    // empty: $AWS_REGION, $AWS_DEFAULT_REGION, else us-east-1
  uint64_t part_bytes = 64ull << 20;
  int attempts = 5;
};

class S3Store : public ObjectStore {
 public:
  // `url`: s3://bucket or s3://bucket/prefix. Credentials: $AWS_ACCESS_KEY_ID,
  // $AWS_SECRET_ACCESS_KEY and (temporary ones) $AWS_SESSION_TOKEN.
  S3Store(const std::string& url, S3Config config);
  ~S3Store() override;

  std::string describe() const override;
  std::optional<std::vector<unsigned char>> get(const std::string& key) override;
  void put(const std::string& key, const void* data, std::size_t size) override;
  void publish() override {}
  void discard() override {}  // a PUT is in place when it returns
  std::vector<std::pair<std::string, uint64_t>> list(const std::string& prefix) override;
  void remove_all(const std::string& prefix) override;
  std::string location_of(const std::string& key) const override;
  Found look() override;
  void make_root() override {}

  static bool is_url(const std::string& location) { return location.rfind("s3://", 0) == 0; }

 private:
  struct Response;
  // One request about `object` (its whole name in the bucket; "" for the bucket itself), retried.
  Response request(const std::string& method, const std::string& object, const std::string& query,
                   const void* body, std::size_t size, const std::string& what);
  void put_multipart(const std::string& key, const unsigned char* data, std::size_t size);
  std::string object_url(const std::string& object, const std::string& query) const;

  std::string url_, bucket_, prefix_;  // prefix_: "" or "a/b/" (ends in a slash)
  S3Config config_;
  std::string access_key_, secret_key_, token_;
  void* curl_ = nullptr;  // one CURL handle: its connections are reused
};

}  // namespace h5loom::zarr
