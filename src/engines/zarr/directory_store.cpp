#include "engines/zarr/directory_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "h5loom/errors.hpp"

namespace h5loom::zarr {

namespace fs = std::filesystem;

namespace {

std::string reason(int error) { return std::strerror(error); }

// A temporary object file: "<name>.tmp-<writer>-<n>" (list() skips them).
bool is_temporary(const std::string& name) { return name.find(".tmp-") != std::string::npos; }

void write_all(int fd, const unsigned char* p, std::size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw IOError("cannot write '" + path + "': " + reason(w < 0 ? errno : EIO));
    p += w, n -= std::size_t(w);
  }
}

// syncfs(2) of the file system holding `dir`: 0 or an errno.
int sync_file_system(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::syncfs(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

DirectoryStore::DirectoryStore(std::string root, bool sync, int writer)
    : root_(std::move(root)), sync_(sync), writer_(writer) {}

ObjectStore::Found DirectoryStore::look() {
  std::error_code ec;
  auto st = fs::status(root_, ec);
  if (ec || st.type() == fs::file_type::not_found) return Found::Nothing;
  if (st.type() != fs::file_type::directory) return Found::NotAStore;
  if (fs::exists(root_ + "/zarr.json", ec)) return Found::Store;
  return fs::is_empty(root_, ec) ? Found::Nothing : Found::Other;
}

void DirectoryStore::make_root() {
  std::error_code ec;
  if (fs::exists(root_, ec) && !fs::is_directory(root_, ec)) fs::remove(root_, ec);  // a file in the way: replaced
  fs::create_directories(root_, ec);
  if (ec) throw IOError("cannot create Zarr store '" + root_ + "': " + ec.message());
}

std::optional<std::vector<unsigned char>> DirectoryStore::get(const std::string& key) {
  const std::string path = location_of(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw IOError("cannot open '" + path + "': " + reason(errno));
  }
  std::vector<unsigned char> bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(std::size_t(st.st_size));
  unsigned char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      ::close(fd);
      throw IOError("cannot read '" + path + "': " + reason(err));
    }
    if (r == 0) break;
    bytes.insert(bytes.end(), buf, buf + r);
  }
  ::close(fd);
  return bytes;
}

void DirectoryStore::make_parents(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  if (made_.count(dir)) return;
  // Each directory made here is a new entry of its parent: synced with it.
  std::vector<std::string> missing;
  for (fs::path p = dir; !p.empty() && p.string() != root_ && !made_.count(p.string()); p = p.parent_path()) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) break;
    missing.push_back(p.string());
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it)
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST)
      throw IOError("cannot make directory '" + *it + "': " + reason(errno));
  made_.insert(dir);
}

void DirectoryStore::put(const std::string& key, const void* data, std::size_t size) {
  const std::string path = location_of(key);
  make_parents(path);
  const std::string tmp = path + ".tmp-" + std::to_string(writer_) + "-" + std::to_string(counter_++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError("cannot create '" + tmp + "': " + reason(errno));
  try {
    write_all(fd, static_cast<const unsigned char*>(data), size, tmp);
    // Its write-back starts now, so that publish() finds little left to flush.
    if (sync_) (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw IOError("cannot write '" + tmp + "': " + reason(err));
  }
  unpublished_.emplace_back(tmp, path);  // renamed at publish()
}

void DirectoryStore::discard() {
  for (const auto& [tmp, path] : unpublished_) ::unlink(tmp.c_str());
  unpublished_.clear();
}

void DirectoryStore::publish() {
  if (unpublished_.empty()) return;
  std::vector<std::pair<std::string, std::string>> objects;
  objects.swap(unpublished_);
  auto drop = [&](std::size_t from) {  // temporary files that will not be put in place
    for (std::size_t i = from; i < objects.size(); ++i) ::unlink(objects[i].first.c_str());
  };
  if (int err = sync_ ? sync_file_system(root_) : 0) {
    drop(0);
    throw IOError("cannot sync " + describe() + " to storage: " + reason(err));
  }
  for (std::size_t i = 0; i < objects.size(); ++i)
    if (::rename(objects[i].first.c_str(), objects[i].second.c_str()) != 0) {
      int err = errno;
      drop(i);
      throw IOError("cannot put '" + objects[i].second + "' in place: " + reason(err));
    }
  if (int err = sync_ ? sync_file_system(root_) : 0)
    throw IOError("cannot sync " + describe() + " to storage: " + reason(err));
}

std::vector<std::pair<std::string, uint64_t>> DirectoryStore::list(const std::string& prefix) {
  std::vector<std::pair<std::string, uint64_t>> out;
  const fs::path start = prefix.empty() ? fs::path(root_) : fs::path(location_of(prefix));
  std::error_code ec;
  if (!fs::is_directory(start, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(start, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || is_temporary(it->path().filename().string())) continue;
    out.emplace_back(fs::relative(it->path(), root_).string(), uint64_t(it->file_size(ec)));
  }
  if (ec) throw IOError("cannot list " + describe() + ": " + ec.message());
  return out;
}

void DirectoryStore::remove_all(const std::string& prefix) {
  const fs::path start = prefix.empty() ? fs::path(root_) : fs::path(location_of(prefix));
  std::error_code ec;
  if (!fs::exists(start, ec)) return;
  if (prefix.empty()) {  // the store's directory stays; what is in it goes
    for (const auto& entry : fs::directory_iterator(start, ec)) fs::remove_all(entry.path(), ec);
  } else {
    fs::remove_all(start, ec);
  }
  if (ec) throw IOError("cannot remove '" + start.string() + "': " + ec.message());
  made_.clear();
}

}  // namespace h5loom::zarr
