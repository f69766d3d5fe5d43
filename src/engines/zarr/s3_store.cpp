#include "engines/zarr/s3_store.hpp"

#include "engines/zarr/curl_library.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Percent-encodes a key for a URL path (slashes stay), as SigV4 expects.
std::string encode_path(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') out += char(c);
    else out += '%', out += hex[c >> 4], out += hex[c & 15];
  }
  return out;
}

std::string encode_query_value(const std::string& s) {
  std::string out = encode_path(s);
  std::string escaped;
  for (char c : out) escaped += c == '/' ? std::string("%2F") : std::string(1, c);
  return escaped;
}

// The text of every <tag>...</tag> in an S3 XML answer, entities decoded.
std::vector<std::string> xml_values(const std::string& xml, const std::string& tag) {
  std::vector<std::string> out;
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  for (std::size_t at = xml.find(open); at != std::string::npos; at = xml.find(open, at)) {
    at += open.size();
    const std::size_t end = xml.find(close, at);
    if (end == std::string::npos) break;
    std::string v = xml.substr(at, end - at);
    std::string decoded;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] != '&') {
        decoded += v[i];
        continue;
      }
      static const std::pair<const char*, char> entities[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'},
                                                              {"&quot;", '"'}, {"&apos;", '\''}};
      bool known = false;
      for (const auto& [name, ch] : entities)
        if (v.compare(i, std::strlen(name), name) == 0) decoded += ch, i += std::strlen(name) - 1, known = true;
      if (!known) decoded += '&';
    }
    out.push_back(std::move(decoded));
    at = end + close.size();
  }
  return out;
}

std::size_t collect(char* p, std::size_t size, std::size_t n, void* out) {
  auto* body = static_cast<std::vector<unsigned char>*>(out);
  body->insert(body->end(), p, p + size * n);
  return size * n;
}

std::size_t collect_header(char* p, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

}  // namespace

struct S3Store::Response {
  long status = 0;
  std::vector<unsigned char> body;
  std::string headers;
  std::string text() const { return std::string(body.begin(), body.end()); }
  // "HTTP 404 NoSuchBucket: The specified bucket does not exist", from S3's XML error.
  std::string error() const {
    const std::string xml = text();
    const auto code = xml_values(xml, "Code"), message = xml_values(xml, "Message");
    std::string out = "HTTP " + std::to_string(status);
    if (!code.empty()) out += " " + code[0];
    if (!message.empty()) out += ": " + message[0];
    return out;
  }
};

S3Store::S3Store(const std::string& url, S3Config config) : url_(url), config_(std::move(config)) {
  const std::string rest = url.substr(5);  // after "s3://"
  const std::size_t slash = rest.find('/');
  bucket_ = rest.substr(0, slash);
  if (slash != std::string::npos) prefix_ = rest.substr(slash + 1);
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  if (!prefix_.empty()) prefix_ += '/';
  if (bucket_.empty()) throw UsageError("'" + url + "' names no bucket (s3://bucket/prefix)");
  if (config_.endpoint.empty()) config_.endpoint = env("AWS_ENDPOINT_URL_S3");
  if (config_.endpoint.empty()) config_.endpoint = env("AWS_ENDPOINT_URL");
  if (config_.endpoint.empty()) config_.endpoint = "https://s3.amazonaws.com";
  while (!config_.endpoint.empty() && config_.endpoint.back() == '/') config_.endpoint.pop_back();
  if (config_.region.empty()) config_.region = env("AWS_REGION");
  if (config_.region.empty()) config_.region = env("AWS_DEFAULT_REGION");
  if (config_.region.empty()) config_.region = "us-east-1";
  access_key_ = env("AWS_ACCESS_KEY_ID");
  secret_key_ = env("AWS_SECRET_ACCESS_KEY");
  token_ = env("AWS_SESSION_TOKEN");
  if (access_key_.empty() || secret_key_.empty())
    throw ConfigError("cannot reach '" + url + "': set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
                      "AWS_SESSION_TOKEN for temporary credentials)");
  curl_ = curl_library(("reaching '" + url + "'").c_str()).easy_init();
  if (!curl_) throw IOError("cannot start libcurl for '" + url + "'");
}

S3Store::~S3Store() {
  if (curl_) curl_library("closing an S3 store").easy_cleanup(static_cast<CURL*>(curl_));
}

std::string S3Store::describe() const { return "S3 '" + url_ + "' at " + config_.endpoint; }

std::string S3Store::location_of(const std::string& key) const { return "s3://" + bucket_ + "/" + prefix_ + key; }

std::string S3Store::object_url(const std::string& object, const std::string& query) const {
  // Path-style addressing (endpoint/bucket/object): what S3-compatible servers all take.
  std::string u = config_.endpoint + "/" + encode_path(bucket_) + (object.empty() ? "" : "/" + encode_path(object));
  return query.empty() ? u : u + "?" + query;
}

S3Store::Response S3Store::request(const std::string& method, const std::string& object, const std::string& query,
                                   const void* body, std::size_t size, const std::string& what) {
  CURL* h = static_cast<CURL*>(curl_);
  const CurlLibrary& curl = curl_library("an S3 request");
  const std::string url = object_url(object, query);
  const std::string sigv4 = "aws:amz:" + config_.region + ":s3";
  const std::string userpwd = access_key_ + ":" + secret_key_;
  std::string last_error;
  for (int attempt = 0; attempt < config_.attempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 << (attempt - 1)));  // back-off
    Response r;
    curl.easy_reset(h);
    curl.easy_setopt(h, CURLOPT_URL, url.c_str());
    curl.easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl.easy_setopt(h, CURLOPT_USERPWD, userpwd.c_str());
    curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl.easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, collect_header);
    curl.easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
    curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    // A stalled transfer fails (and is tried again) instead of holding its rank, and every rank, in the flush.
    curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    struct curl_slist* headers = nullptr;
    // The payload is signed (curl hashes the body it sends).
    if (!token_.empty()) headers = curl.slist_append(headers, ("x-amz-security-token: " + token_).c_str());
    headers = curl.slist_append(headers, "Expect:");  // no 100-continue round trip
    if (method == "GET") {
      curl.easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (method == "DELETE") {
      curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {  // PUT, POST: the body as the request's fields, which curl both signs and sends
      headers = curl.slist_append(headers, "Content-Type: application/octet-stream");
      curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
      curl.easy_setopt(h, CURLOPT_POSTFIELDS, size ? static_cast<const char*>(body) : "");
      curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size));
    }
    curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    const CURLcode rc = curl.easy_perform(h);
    curl.slist_free_all(headers);
    if (rc != CURLE_OK) {
      last_error = curl.easy_strerror(rc);
      continue;  // the connection failed: try again
    }
    curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    if (r.status == 500 || r.status == 502 || r.status == 503 || r.status == 504 || r.status == 429) {
      last_error = "HTTP " + std::to_string(r.status);
      continue;
    }
    return r;
  }
  throw IOError(what + " at " + config_.endpoint + " failed " + std::to_string(config_.attempts) + " times: " +
                last_error);
}

std::optional<std::vector<unsigned char>> S3Store::get(const std::string& key) {
  Response r = request("GET", prefix_ + key, "", nullptr, 0, "reading '" + location_of(key) + "'");
  if (r.status == 404) return std::nullopt;
  if (r.status != 200)
    throw IOError("cannot read '" + location_of(key) + "': " + r.error());
  return std::move(r.body);
}

void S3Store::put(const std::string& key, const void* data, std::size_t size) {
  if (size > config_.part_bytes) return put_multipart(key, static_cast<const unsigned char*>(data), size);
  Response r = request("PUT", prefix_ + key, "", data, size, "writing '" + location_of(key) + "'");
  if (r.status != 200)
    throw IOError("cannot write '" + location_of(key) + "': " + r.error());
}

void S3Store::put_multipart(const std::string& name, const unsigned char* data, std::size_t size) {
  const std::string where = "'" + location_of(name) + "'";
  const std::string key = prefix_ + name;
  Response start = request("POST", key, "uploads=", nullptr, 0, "starting a multipart upload of " + where);
  const auto ids = xml_values(start.text(), "UploadId");
  if (start.status != 200 || ids.empty())
    throw IOError("cannot start a multipart upload of " + where + ": " + start.error());
  const std::string upload = "uploadId=" + encode_query_value(ids[0]);
  std::string parts;
  try {
    int number = 1;
    for (std::size_t at = 0; at < size; at += config_.part_bytes, ++number) {
      const std::size_t n = std::min<std::size_t>(config_.part_bytes, size - at);
      Response part = request("PUT", key, "partNumber=" + std::to_string(number) + "&" + upload, data + at, n,
                              "writing part " + std::to_string(number) + " of " + where);
      std::string etag;
      for (std::size_t p = 0; p < part.headers.size();) {  // the ETag header, whatever its case
        std::size_t eol = part.headers.find("\r\n", p);
        std::string line = part.headers.substr(p, eol == std::string::npos ? std::string::npos : eol - p);
        if (line.size() > 5 && strncasecmp(line.c_str(), "etag:", 5) == 0) {
          etag = line.substr(5);
          etag.erase(0, etag.find_first_not_of(' '));
        }
        if (eol == std::string::npos) break;
        p = eol + 2;
      }
      if (part.status != 200 || etag.empty())
        throw IOError("cannot write part " + std::to_string(number) + " of " + where + ": HTTP " +
                      std::to_string(part.status));
      parts += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" + etag + "</ETag></Part>";
    }
    const std::string done = "<CompleteMultipartUpload>" + parts + "</CompleteMultipartUpload>";
    Response end = request("POST", key, upload, done.data(), done.size(), "completing the upload of " + where);
    if (end.status != 200 || end.text().find("<Error>") != std::string::npos)
      throw IOError("cannot complete the multipart upload of " + where + ": " + end.error());
  } catch (...) {
    try {
      request("DELETE", key, upload, nullptr, 0, "abandoning the upload of " + where);
    } catch (...) {
    }
    throw;
  }
}

std::vector<std::pair<std::string, uint64_t>> S3Store::list(const std::string& prefix) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::string token;
  for (;;) {
    // Parameters in name order: libcurl before 8.1 signs the query as given (curl issue 9717).
    std::string query = "list-type=2&prefix=" + encode_query_value(prefix_ + prefix);
    if (!token.empty()) query = "continuation-token=" + encode_query_value(token) + "&" + query;
    Response r = request("GET", "", query, nullptr, 0, "listing '" + url_ + "'");  // the bucket's URL
    if (r.status == 404) return out;  // no bucket: no objects
    if (r.status != 200)
      throw IOError("cannot list '" + url_ + "': " + r.error());
    const std::string xml = r.text();
    const auto keys = xml_values(xml, "Key");
    const auto sizes = xml_values(xml, "Size");
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i].compare(0, prefix_.size(), prefix_) == 0)
        out.emplace_back(keys[i].substr(prefix_.size()), i < sizes.size() ? std::stoull(sizes[i]) : 0);
    const auto truncated = xml_values(xml, "IsTruncated");
    const auto next = xml_values(xml, "NextContinuationToken");
    if (truncated.empty() || truncated[0] != "true" || next.empty()) return out;
    token = next[0];
  }
}

ObjectStore::Found S3Store::look() {
  if (get("zarr.json")) return Found::Store;
  return list("").empty() ? Found::Nothing : Found::Other;
}

void S3Store::remove_all(const std::string& prefix) {
  for (const auto& [key, size] : list(prefix)) {
    Response r = request("DELETE", prefix_ + key, "", nullptr, 0, "removing '" + location_of(key) + "'");
    if (r.status != 204 && r.status != 200 && r.status != 404)
      throw IOError("cannot remove '" + location_of(key) + "': " + r.error());
  }
}

}  // namespace h5loom::zarr
