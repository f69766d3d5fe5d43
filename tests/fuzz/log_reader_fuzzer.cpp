// libFuzzer target over the log engine's reader (docs/testing.md).
//
// Each input describes a log-engine file (tests/fuzz/log_input.hpp); the
// harness writes its files into a private temporary directory with every
// CRC32C recomputed, opens it read-only through the public C++ API only
// (engine "log", or detection by the front file and journal), walks the tree,
// reads every attribute and dataset, closes it, and runs verify. Any outcome
// is fine except a crash, a sanitizer report, a hang, a huge allocation, or an
// exception that is not an h5loom::Error (the API promises h5loom errors).
//
// LOOMFUZZ_VERBOSE=1 prints every h5loom error the harness catches.
// LOOMFUZZ_ALLOW_STD_EXCEPTIONS=1 lets other std::exceptions through (counted,
// not fatal), so that a long run can go on past a known finding of that kind
// and look for memory errors behind it.
#include <h5loom/h5loom.hpp>
#include <h5loom/tools.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "log_input.hpp"

namespace {

std::string g_dir;
std::string g_name;  // g_dir + "/f.h5"
loomfuzz::Bytes g_front_marker, g_front_plain;
bool g_allow_std = false;
bool g_verbose = false;  // LOOMFUZZ_VERBOSE=1: print the h5loom errors (to see how far an input gets)

// Elements read at most per read call, and whole datasets read at most (the
// shapes come from the file): large enough for the reader's direct path
// (blocks of >= 1 MiB read straight into the caller's buffer).
constexpr uint64_t kMaxElements = 1 << 21, kMaxBytes = 8 << 20;

[[noreturn]] void finding(const char* where, const std::exception& e) {
  std::fprintf(stderr, "loomfuzz: %s raised a %s, not an h5loom::Error: %s\n", where, typeid(e).name(), e.what());
  std::abort();
}

// Runs fn; h5loom errors are an accepted outcome, other exceptions a finding.
template <class Fn>
bool guarded(const char* where, Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const h5loom::Error& e) {
    if (g_verbose) std::fprintf(stderr, "loomfuzz: %s: %s\n", where, e.what());
    return false;
  } catch (const std::exception& e) {
    if (!g_allow_std) finding(where, e);
    return false;
  }
}

void read_attributes(const h5loom::Object& o) {
  std::vector<std::string> names;
  if (!guarded("attribute_names", [&] { names = o.attribute_names(); })) return;
  for (const auto& n : names) {
    guarded("attribute", [&] {
      h5loom::AttributeValue v = o.attribute(n);
      (void)o.has_attribute(n);
      if (v.is_string()) {
        (void)v.as_string().size();
      } else if (v.is_string_array()) {
        (void)v.as_strings().size();
      } else {
        auto d = v.as_vector<double>();
        auto i = v.as_vector<int64_t>();
        (void)d.size(), (void)i.size();
      }
    });
  }
}

// A box of at most kMaxElements elements starting at `first` (clamped to the shape).
h5loom::Selection corner(const h5loom::Dims& shape, bool far) {
  h5loom::Dims start(shape.size()), count(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    count[d] = std::min<uint64_t>(shape[d], 3);
    start[d] = far ? shape[d] - count[d] : 0;
  }
  return h5loom::Selection::box(start, count);
}

void read_dataset(h5loom::Dataset& ds) {
  h5loom::Datatype dt{};
  h5loom::Dims shape;
  if (!guarded("dataset info", [&] {
        dt = ds.dtype();
        shape = ds.shape();
        (void)ds.max_shape();
        (void)ds.layout();
        (void)ds.chunks();
      }))
    return;
  const std::size_t es = h5loom::datatype_size(dt);
  std::vector<h5loom::Selection> sels;
  uint64_t total = 1;
  bool small = true;
  for (uint64_t n : shape) {
    if (n != 0 && total > kMaxElements / n) small = false;
    total = small ? total * n : total;
  }
  if (small) sels.push_back(h5loom::Selection::all());
  if (!shape.empty() && shape.size() <= 32) {
    sels.push_back(corner(shape, false));
    sels.push_back(corner(shape, true));
    h5loom::Dims start(shape.size(), 0), count(shape.size()), stride(shape.size(), 2);
    for (std::size_t d = 0; d < shape.size(); ++d) count[d] = std::min<uint64_t>((shape[d] + 1) / 2, 2);
    sels.push_back(h5loom::Selection::hyperslab(start, count, stride));
  }
  h5loom::ElementBuffer buf;  // std::string elements for variable-length strings
  for (const auto& sel : sels) {
    guarded("read", [&] {
      uint64_t n = sel.num_elements(shape);
      if (n > kMaxElements || n * es > kMaxBytes) return;
      buf.resize(dt, std::size_t(n) + 1);
      ds.read_raw(sel, dt, buf.data(), std::size_t(n));
    });
  }
  // Converting reads go through another path of the reader.
  if (small && total > 0 && total <= (1 << 16))
    guarded("read as float64", [&] {
      std::vector<double> v(total);
      ds.read_raw(h5loom::Selection::all(), h5loom::Datatype::Float64, v.data(), v.size());
    });
}

void walk(h5loom::File& f) {
  read_attributes(f);
  std::vector<std::pair<std::string, h5loom::ObjectKind>> objects;
  guarded("visit", [&] {
    f.visit([&](const std::string& p, h5loom::ObjectKind k) { objects.emplace_back(p, k); });
  });
  guarded("list", [&] { (void)f.list(); });
  for (const auto& object : objects) {
    const std::string& path = object.first;  // a named variable: lambdas cannot capture bindings (C++17)
    const h5loom::ObjectKind kind = object.second;
    if (kind == h5loom::ObjectKind::Group) {
      guarded("group", [&] {
        auto g = f.group(path);
        read_attributes(g);
        (void)g.list();
      });
    } else if (kind == h5loom::ObjectKind::Dataset) {
      guarded("dataset", [&] {
        auto ds = f.dataset(path);
        read_attributes(ds);
        read_dataset(ds);
      });
    }
    guarded("exists", [&] { (void)f.exists(path), (void)f.kind(path); });
  }
}

// The two HDF5 front files (with and without the log marker attribute), made
// once by the hdf5 engine through the public API.
loomfuzz::Bytes make_front(bool marker) {
  const std::string p = g_dir + (marker ? "/front-marker.h5" : "/front-plain.h5");
  h5loom::FileOptions o;
  o.comm = MPI_COMM_SELF;
  o.engine = "hdf5";
  {
    auto f = h5loom::File::create(p, o);
    if (marker) f.set_attribute("_h5loom_log", std::string("f.h5.loom/log"));
    f.create_dataset<int32_t>("plain", {2});
    f.close();
  }
  loomfuzz::Bytes b;
  loomfuzz::read_file(p, b);
  std::remove(p.c_str());
  return b;
}

void cleanup() {
  if (g_dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The engine is chosen by the input, never by the environment.
  unsetenv("H5LOOM_ENGINE");
  unsetenv("H5LOOM_PROFILE");
  unsetenv("H5LOOM_CHECK_COLLECTIVE");
  const char* allow = std::getenv("LOOMFUZZ_ALLOW_STD_EXCEPTIONS");
  g_allow_std = allow && *allow && *allow != '0';
  const char* verbose = std::getenv("LOOMFUZZ_VERBOSE");
  g_verbose = verbose && *verbose && *verbose != '0';
  const char* base = std::getenv("LOOMFUZZ_TMPDIR");
  if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  std::string tmpl = std::string(base) + "/loomfuzz-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror("loomfuzz: mkdtemp");
    std::abort();
  }
  g_dir = buf.data();
  g_name = g_dir + "/f.h5";
  std::atexit(cleanup);
  h5loom::ensure_mpi();
  g_front_marker = make_front(true);
  g_front_plain = make_front(false);
  if (g_front_marker.empty() || g_front_plain.empty()) {
    std::fprintf(stderr, "loomfuzz: could not make the front-file templates in %s\n", g_dir.c_str());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const loomfuzz::Input in = loomfuzz::decode(data, size);
  const loomfuzz::Files files = loomfuzz::build(in, &g_front_marker, &g_front_plain);
  if (!loomfuzz::write_files(files, g_name, g_front_marker, g_front_plain)) {
    std::fprintf(stderr, "loomfuzz: cannot write the files in %s\n", g_dir.c_str());
    std::abort();
  }
  h5loom::FileOptions o;
  o.comm = MPI_COMM_SELF;
  o.engine = (in.flags & 1) ? "" : "log";
  guarded("open/walk/close", [&] {
    auto f = h5loom::File::open(g_name, h5loom::Mode::Read, o);
    walk(f);
    f.close();
  });
  guarded("verify", [&] {
    h5loom::VerifyResult r = h5loom::verify_file(g_name);
    (void)r.ok();
  });
  return 0;
}
