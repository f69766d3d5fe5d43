// The image builder and checker of the crash-state explorer (see
// tests/crash/README.md for the method and the model). From a trace recorded
// by crash_shim.so around crash_writer, it builds the disk images a power loss
// could leave, opens each with h5loom and checks it.
//
//   crash_explore --trace DIR --work DIR [--images N] [--seed S] [--only ID]
//                 [--keep] [--strict-dirs] [--ignore-syncs SUBSTR]
//                 [--xfail-reopen-uncommitted] [--cli H5LOOM] [--cli-every K]
//                 [--label TEXT] [--json FILE] [--list]
//
// --strict-dirs: a name (create, rename, mkdir) is durable only once its
//   directory is fsynced (POSIX's letter), not also by an fsync of the file.
// --process-crash: the states a killed process leaves (every prefix of the
//   operations, nothing lost from the page cache): for engines run without sync.
// --ignore-syncs SUBSTR: a self-test of the checker: take the syncs of paths
//   containing SUBSTR as never made; the checker must then find lost steps.
// --xfail-reopen-uncommitted: see check_image (a known engine bug).
// --emit-base clean|torn DIR: build one image into DIR, the start of an append
//   run (see main), instead of exploring.
//
// Exit status: 0 when no image was wrong and no durable step was lost, 1
// otherwise, 2 on a usage or trace error.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <h5loom/h5loom.hpp>
#include <h5loom/tools.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "crash_values.hpp"

namespace fs = std::filesystem;
using namespace crashvals;

namespace {

constexpr int kRoot = -2;  // CRASH_DIR itself: exists before the run, durable
constexpr uint64_t kSector = 512;

// ---- the trace ----

enum class Kind { Mkdir, Create, Trunc, Write, Sfr, Fsync, Fdatasync, Rename, Unlink, Rmdir, Sync, Mark };

struct Op {
  uint64_t seq = 0, start = 0;
  Kind kind = Kind::Mark;
  uint64_t ino = 0, a = 0, b = 0, dataoff = 0;
  std::string path, path2;
  int pid = 0;
  int obj = -1;     // the file or directory the operation is on (index of its mkdir/create op), kRoot
  int parent = -1;  // mkdir/create/unlink/rename: the directory object of the (source) name
  int parent2 = -1; // rename: the directory object of the new name
  const unsigned char* data = nullptr;  // write: its bytes
  bool initial = false;  // the state before the run (--append runs): durable from the start
  bool changes_state() const {
    return kind == Kind::Mkdir || kind == Kind::Create || kind == Kind::Trunc || kind == Kind::Write ||
           kind == Kind::Rename || kind == Kind::Unlink || kind == Kind::Rmdir;
  }
  bool is_sync() const { return kind == Kind::Fsync || kind == Kind::Fdatasync || kind == Kind::Sync; }
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Mkdir: return "mkdir";
    case Kind::Create: return "create";
    case Kind::Trunc: return "trunc";
    case Kind::Write: return "write";
    case Kind::Sfr: return "sync_file_range";
    case Kind::Fsync: return "fsync";
    case Kind::Fdatasync: return "fdatasync";
    case Kind::Rename: return "rename";
    case Kind::Unlink: return "unlink";
    case Kind::Rmdir: return "rmdir";
    case Kind::Sync: return "sync";
    case Kind::Mark: return "mark";
  }
  return "?";
}

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "crash_explore: %s\n", msg.c_str());
  std::exit(2);
}

std::string parent_of(const std::string& p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

struct Trace {
  std::vector<Op> ops;  // in global order
  Params params;
  std::string front;    // the file's name, relative to CRASH_DIR
  std::vector<std::pair<uint64_t, uint64_t>> durable_marks;  // (seq, step)
  uint64_t end_seq = 0;
  std::vector<std::pair<void*, size_t>> maps;
};

Trace load_trace(const std::string& dir) {
  Trace t;
  std::map<int, const unsigned char*> data;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("data.", 0) == 0) {
      int pid = std::stoi(name.substr(5));
      int fd = ::open(e.path().c_str(), O_RDONLY);
      struct stat sb;
      if (fd < 0 || ::fstat(fd, &sb) != 0) fail("cannot open " + e.path().string());
      const unsigned char* p = nullptr;
      if (sb.st_size > 0) {
        void* m = ::mmap(nullptr, size_t(sb.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) fail("cannot map " + e.path().string());
        t.maps.push_back({m, size_t(sb.st_size)});
        p = static_cast<const unsigned char*>(m);
      }
      ::close(fd);
      data[pid] = p;
    }
  }
  static const std::map<std::string, Kind> kinds = {
      {"mkdir", Kind::Mkdir},   {"create", Kind::Create}, {"trunc", Kind::Trunc},         {"write", Kind::Write},
      {"sfr", Kind::Sfr},       {"fsync", Kind::Fsync},   {"fdatasync", Kind::Fdatasync}, {"rename", Kind::Rename},
      {"unlink", Kind::Unlink}, {"rmdir", Kind::Rmdir},   {"sync", Kind::Sync},           {"mark", Kind::Mark}};
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("ops.", 0) != 0) continue;
    int pid = std::stoi(name.substr(4));
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      Op op;
      std::string kind;
      ls >> op.seq >> op.start >> kind >> op.ino >> op.a >> op.b >> op.dataoff >> op.path;
      if (!ls) fail("bad trace line in " + name + ": " + line);
      ls >> op.path2;
      auto k = kinds.find(kind);
      if (k == kinds.end())
        fail("the trace has an operation the model does not cover (" + kind + " on " + op.path + "): " + line);
      op.kind = k->second;
      op.pid = pid;
      if (op.kind == Kind::Write) op.data = data.at(pid) + op.dataoff;
      t.ops.push_back(op);
    }
  }
  // The files the run started from (an append run): initial.list has lines
  // "d|f PATH INODE", initial/PATH their contents. They become operations
  // numbered 0, durable from the start; the run's are numbered from 1.
  for (auto& op : t.ops) ++op.seq, ++op.start;
  std::vector<Op> initial;
  if (fs::exists(dir + "/initial.list")) {
    std::ifstream in(dir + "/initial.list");
    std::string type, path;
    uint64_t ino;
    std::vector<std::tuple<std::string, std::string, uint64_t>> entries;
    while (in >> type >> path >> ino) entries.emplace_back(type, path, ino);
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return std::get<1>(a).size() < std::get<1>(b).size(); });
    for (auto& [type, p, inode] : entries) {
      Op op;
      op.initial = true;
      op.kind = type == "d" ? Kind::Mkdir : Kind::Create;
      op.ino = inode;
      op.path = p;
      initial.push_back(op);
      if (type == "d") continue;
      const std::string file = dir + "/initial/" + p;
      int fd = ::open(file.c_str(), O_RDONLY);
      struct stat sb;
      if (fd < 0 || ::fstat(fd, &sb) != 0) fail("cannot open " + file);
      Op tr = op;
      tr.kind = Kind::Trunc;
      tr.a = uint64_t(sb.st_size);
      initial.push_back(tr);
      if (sb.st_size > 0) {
        void* m = ::mmap(nullptr, size_t(sb.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) fail("cannot map " + file);
        t.maps.push_back({m, size_t(sb.st_size)});
        // Only the data extents: the log is a sparse file.
        off_t at = 0;
        while (at < sb.st_size) {
          off_t d = ::lseek(fd, at, SEEK_DATA);
          if (d < 0) break;
          off_t h = ::lseek(fd, d, SEEK_HOLE);
          if (h < 0) h = sb.st_size;
          Op w = op;
          w.kind = Kind::Write;
          w.a = uint64_t(d), w.b = uint64_t(h - d);
          w.data = static_cast<const unsigned char*>(m) + d;
          initial.push_back(w);
          at = h;
        }
      }
      ::close(fd);
    }
  }
  std::stable_sort(t.ops.begin(), t.ops.end(), [](const Op& a, const Op& b) { return a.seq < b.seq; });
  t.ops.insert(t.ops.begin(), initial.begin(), initial.end());
  if (t.ops.empty()) fail("empty trace in " + dir);
  t.end_seq = t.ops.back().seq + 1;

  // Objects: an inode number means the object of the latest mkdir/create of it
  // (numbers are reused after an unlink). Names map to directory objects.
  std::map<uint64_t, int> by_ino;
  std::map<std::string, int> dirs = {{".", kRoot}};
  bool have_params = false;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    Op& op = t.ops[i];
    if (op.kind == Kind::Mark) {
      if (op.path.rfind("params:", 0) == 0) have_params = t.params.decode(op.path);
      if (op.path.rfind("step_", 0) == 0) t.durable_marks.push_back({op.seq, std::stoull(op.path.substr(5))});
      if (op.path.rfind("initial_steps_", 0) == 0)
        for (uint64_t k = 0, n = std::stoull(op.path.substr(14)); k < n; ++k) t.durable_marks.push_back({0, k});
      continue;
    }
    if (op.kind == Kind::Sync) continue;
    auto dir_of = [&](const std::string& p) {
      auto d = dirs.find(parent_of(p));
      if (d == dirs.end()) fail("operation on " + p + " whose directory was not created during the run");
      return d->second;
    };
    if (op.kind == Kind::Mkdir || op.kind == Kind::Create) {
      op.obj = int(i);
      op.parent = dir_of(op.path);
      by_ino[op.ino] = int(i);
      if (op.kind == Kind::Mkdir) {
        dirs[op.path] = int(i);
        if (op.path.size() > 5 && op.path.compare(op.path.size() - 5, 5, ".loom") == 0)
          t.front = op.path.substr(0, op.path.size() - 5);
      }
      continue;
    }
    if (op.path == ".") {
      op.obj = kRoot;
    } else {
      auto o = by_ino.find(op.ino);
      if (o == by_ino.end()) fail("operation on " + op.path + ", a file that existed before the run: not modelled");
      op.obj = o->second;
    }
    if (op.kind == Kind::Unlink || op.kind == Kind::Rmdir) op.parent = dir_of(op.path);
    if (op.kind == Kind::Rename) {
      op.parent = dir_of(op.path), op.parent2 = dir_of(op.path2);
      if (t.ops[std::size_t(op.obj)].kind == Kind::Mkdir) fail("rename of a directory: not modelled");
    }
  }
  if (!have_params) fail("the trace has no params mark (was it written by crash_writer?)");
  if (t.front.empty()) fail("the trace creates no NAME.loom directory");
  return t;
}

// ---- the model ----

struct Model {
  bool strict_dirs = false;  // names are durable only through an fsync of their directory
  std::string ignore_syncs;  // self-test: syncs of paths containing this are taken as never made
  bool process_crash = false;  // a process crash, not a power loss: whatever was issued survives
};

// Does sync `s` make operation `o` durable (if o returned before s started)?
bool covers(const Model& m, const Trace& t, const Op& s, const Op& o) {
  if (s.kind == Kind::Sync) return true;
  const int x = s.obj;
  switch (o.kind) {
    case Kind::Write:
    case Kind::Trunc: return o.obj == x;
    case Kind::Create: return x == o.parent || (!m.strict_dirs && x == o.obj);
    case Kind::Mkdir: return x == o.parent || (!m.strict_dirs && x == o.obj);
    case Kind::Rename:
      return (x == o.parent && x == o.parent2) || (!m.strict_dirs && x == o.obj);
    case Kind::Unlink:
    case Kind::Rmdir: return x == o.parent;
    default: return false;
  }
  (void)t;
}

struct CrashPoint {
  uint64_t at = 0;                 // operations with seq < at were issued
  std::vector<int> durable;        // state-changing operations made durable by completed syncs
  std::vector<int> pending;        // issued, state-changing, not durable (in order)
  std::vector<uint64_t> durable_steps;
  std::string after;               // a description: which sync it precedes
};

std::vector<CrashPoint> crash_points(const Model& m, const Trace& t) {
  if (m.process_crash) {
    // The page cache survives: the state after every prefix of the operations.
    std::vector<CrashPoint> out;
    for (std::size_t j = 0; j <= t.ops.size(); ++j) {
      if (j < t.ops.size() && (t.ops[j].initial || !t.ops[j].changes_state())) continue;  // the start is whole
      CrashPoint cp;
      cp.at = j < t.ops.size() ? t.ops[j].seq : t.end_seq;
      cp.after = j < t.ops.size() ? "before #" + std::to_string(t.ops[j].seq) + " " + kind_name(t.ops[j].kind) + " " +
                                        t.ops[j].path
                                  : "at the end of the run";
      for (std::size_t i = 0; i < j; ++i)
        if (t.ops[i].changes_state()) cp.durable.push_back(int(i));
      for (auto [seq, step] : t.durable_marks)
        if (seq < cp.at) cp.durable_steps.push_back(step);
      out.push_back(std::move(cp));
    }
    return out;
  }
  std::vector<uint64_t> ats;
  std::vector<std::string> what;
  auto counts = [&](const Op& s) {
    return s.is_sync() && (m.ignore_syncs.empty() || s.path.find(m.ignore_syncs) == std::string::npos);
  };
  for (const auto& op : t.ops)
    if (counts(op)) {
      ats.push_back(op.start);
      what.push_back(std::string("before ") + kind_name(op.kind) + " " + op.path + " (seq " +
                     std::to_string(op.seq) + ")");
    }
  ats.push_back(t.end_seq);
  what.push_back("at the end of the run");
  std::vector<CrashPoint> out;
  std::set<uint64_t> seen;
  for (std::size_t c = 0; c < ats.size(); ++c) {
    if (!seen.insert(ats[c]).second) continue;
    CrashPoint cp;
    cp.at = ats[c];
    cp.after = what[c];
    std::vector<char> dur(t.ops.size(), 0);
    for (std::size_t i = 0; i < t.ops.size() && t.ops[i].seq < cp.at; ++i) {
      const Op& o = t.ops[i];
      if (!o.changes_state()) continue;
      if (o.initial) {
        dur[i] = 1;
        continue;
      }
      for (std::size_t j = i + 1; j < t.ops.size() && t.ops[j].seq < cp.at; ++j) {
        const Op& s = t.ops[j];
        if (counts(s) && s.start > o.seq && covers(m, t, s, o)) {
          dur[i] = 1;
          break;
        }
      }
    }
    // A durable name needs its directory (a journaling file system writes the
    // directory's creation first); under --strict-dirs it does not follow.
    if (!m.strict_dirs) {
      for (std::size_t i = t.ops.size(); i-- > 0;) {
        const Op& o = t.ops[i];
        if (dur[i] && (o.kind == Kind::Create || o.kind == Kind::Mkdir) && o.parent >= 0) dur[std::size_t(o.parent)] = 1;
        if (dur[i] && o.kind == Kind::Rename && t.ops[std::size_t(o.obj)].kind == Kind::Create)
          dur[std::size_t(o.obj)] = 1;
      }
    }
    for (std::size_t i = 0; i < t.ops.size() && t.ops[i].seq < cp.at; ++i) {
      if (!t.ops[i].changes_state()) continue;
      (dur[i] ? cp.durable : cp.pending).push_back(int(i));
    }
    for (auto [seq, step] : t.durable_marks)
      if (seq < cp.at) cp.durable_steps.push_back(step);
    out.push_back(std::move(cp));
  }
  return out;
}

// One image: the durable operations of a crash point plus `extra` of its
// pending ones; a torn write keeps only some of its sectors.
struct Torn {
  std::vector<char> sectors;  // per 512-byte sector of the file the write touches
  bool full_size = false;     // the file's size still grew to the write's end
};
struct Image {
  int point = 0;
  std::string how;  // "prefix 5/9", "subset p=0.50"
  std::vector<int> extra;
  std::map<int, Torn> torn;
};

std::string signature(const Image& im, const CrashPoint& cp) {
  std::vector<int> all = cp.durable;
  all.insert(all.end(), im.extra.begin(), im.extra.end());
  std::sort(all.begin(), all.end());
  std::string s;
  for (int i : all) {
    s += std::to_string(i);
    auto t = im.torn.find(i);
    if (t != im.torn.end()) {
      s += t->second.full_size ? "T" : "t";
      for (char c : t->second.sectors) s += c ? '1' : '0';
    }
    s += ',';
  }
  return s;
}

std::vector<Image> plan_images(const Trace& t, const std::vector<CrashPoint>& cps, uint64_t budget, uint64_t seed,
                               uint64_t* prefixes_total) {
  std::mt19937_64 rng(seed);
  std::vector<Image> prefixes;
  for (std::size_t c = 0; c < cps.size(); ++c)
    for (std::size_t m = 0; m <= cps[c].pending.size(); ++m) {
      Image im;
      im.point = int(c);
      im.how = "prefix " + std::to_string(m) + "/" + std::to_string(cps[c].pending.size());
      im.extra.assign(cps[c].pending.begin(), cps[c].pending.begin() + long(m));
      prefixes.push_back(std::move(im));
    }
  *prefixes_total = prefixes.size();
  std::vector<Image> out;
  std::set<std::string> seen;
  auto add = [&](Image im) {
    if (seen.insert(signature(im, cps[std::size_t(im.point)])).second) out.push_back(std::move(im));
  };
  if (prefixes.size() > budget / 2) {  // a bounded run: an even sample of the prefixes
    std::vector<std::size_t> idx(prefixes.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(std::max<uint64_t>(budget / 2, 1));
    std::sort(idx.begin(), idx.end());
    for (auto i : idx) add(prefixes[i]);
  } else {
    for (auto& im : prefixes) add(std::move(im));
  }
  // Random subsets of the pending operations, some writes torn at sector granularity.
  std::vector<std::size_t> with_pending;
  for (std::size_t c = 0; c < cps.size(); ++c)
    if (!cps[c].pending.empty()) with_pending.push_back(c);
  const double ps[] = {0.25, 0.5, 0.75, 0.9};
  for (uint64_t tries = 0; out.size() < budget && !with_pending.empty() && tries < budget * 20; ++tries) {
    Image im;
    im.point = int(with_pending[rng() % with_pending.size()]);
    const CrashPoint& cp = cps[std::size_t(im.point)];
    double p = ps[rng() % 4];
    bool tear = rng() % 2 == 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "subset p=%.2f%s", p, tear ? " torn" : "");
    im.how = buf;
    std::uniform_real_distribution<double> u(0, 1);
    for (int i : cp.pending) {
      if (u(rng) >= p) continue;
      im.extra.push_back(i);
      const Op& o = t.ops[std::size_t(i)];
      if (tear && o.kind == Kind::Write && u(rng) < 0.4) {
        uint64_t first = o.a / kSector, last = (o.a + o.b - 1) / kSector;
        uint64_t n = last - first + 1;
        if (n < 2) continue;
        Torn tw;
        tw.sectors.resize(n);
        uint64_t kept = 0;
        for (auto& s : tw.sectors) kept += (s = char(rng() % 2));
        if (kept == 0) tw.sectors[rng() % n] = 1;
        if (kept == n) tw.sectors[rng() % n] = 0;
        tw.full_size = rng() % 2 == 0;
        im.torn[i] = std::move(tw);
      }
    }
    add(std::move(im));
  }
  return out;
}

// ---- building an image on disk ----

void write_all(int fd, const unsigned char* p, uint64_t n, uint64_t off) {
  while (n > 0) {
    ssize_t k = ::pwrite(fd, p, n, off_t(off));
    if (k <= 0) fail("writing an image: " + std::string(std::strerror(errno)));
    p += k, n -= uint64_t(k), off += uint64_t(k);
  }
}

void build_image(const Trace& t, const CrashPoint& cp, const Image& im, const std::string& root) {
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root);
  std::vector<int> all = cp.durable;
  all.insert(all.end(), im.extra.begin(), im.extra.end());
  std::sort(all.begin(), all.end());
  // Names first (the namespace as the applied operations leave it), then each
  // reachable file's contents, operation by operation.
  std::map<std::string, int> names = {{".", kRoot}};
  for (int i : all) {
    const Op& o = t.ops[std::size_t(i)];
    auto has_dir = [&](const std::string& p) { return names.count(parent_of(p)) != 0; };
    switch (o.kind) {
      case Kind::Mkdir:
      case Kind::Create:
        if (has_dir(o.path)) names[o.path] = o.obj;
        break;
      case Kind::Rename: {
        auto s = names.find(o.path);
        if (s != names.end() && s->second == o.obj && has_dir(o.path2)) {
          names[o.path2] = o.obj;
          names.erase(o.path);
        }
        break;
      }
      case Kind::Unlink:
      case Kind::Rmdir: {
        auto s = names.find(o.path);
        if (s != names.end() && s->second == o.obj) names.erase(s);
        break;
      }
      default: break;
    }
  }
  std::map<int, int> fds;  // object -> fd
  for (const auto& [path, obj] : names) {
    if (obj == kRoot) continue;
    std::string p = root + "/" + path;
    if (t.ops[std::size_t(obj)].kind == Kind::Mkdir) {
      fs::create_directories(p);
    } else {
      fs::create_directories(parent_of(p));
      int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) fail("cannot create " + p);
      if (fds.count(obj)) {  // two names of one file: not produced by the engine
        ::close(fd);
        fail("an image with a hard link: not modelled");
      }
      fds[obj] = fd;
    }
  }
  std::map<int, uint64_t> sizes;
  for (int i : all) {
    const Op& o = t.ops[std::size_t(i)];
    auto f = fds.find(o.obj);
    if (f == fds.end()) continue;
    uint64_t& size = sizes[o.obj];
    if (o.kind == Kind::Trunc) {
      if (::ftruncate(f->second, off_t(o.a)) != 0) fail("ftruncate of an image");
      size = o.a;
    } else if (o.kind == Kind::Write) {
      auto tw = im.torn.find(i);
      if (tw == im.torn.end()) {
        write_all(f->second, o.data, o.b, o.a);
        size = std::max(size, o.a + o.b);
      } else {
        const uint64_t first = o.a / kSector;
        uint64_t last_end = 0;
        for (std::size_t s = 0; s < tw->second.sectors.size(); ++s) {
          if (!tw->second.sectors[s]) continue;
          uint64_t from = std::max(o.a, (first + s) * kSector), to = std::min(o.a + o.b, (first + s + 1) * kSector);
          write_all(f->second, o.data + (from - o.a), to - from, from);
          last_end = std::max(last_end, to);
        }
        uint64_t end = tw->second.full_size ? o.a + o.b : last_end;
        if (end > size) {
          size = end;
          if (::ftruncate(f->second, off_t(size)) != 0) fail("ftruncate of an image");
        }
      }
    }
  }
  for (auto [obj, fd] : fds) ::close(fd);
}

std::string describe_ops(const Trace& t, const CrashPoint& cp, const Image& im) {
  std::set<int> extra(im.extra.begin(), im.extra.end());
  std::ostringstream s;
  std::set<int> durable(cp.durable.begin(), cp.durable.end());
  for (std::size_t i = 0; i < t.ops.size() && t.ops[i].seq < cp.at; ++i) {
    const Op& o = t.ops[i];
    const char* state = durable.count(int(i)) ? "durable " : extra.count(int(i)) ? "applied " : o.changes_state() ? "LOST    " : "        ";
    s << "    " << state << "#" << o.seq << " pid " << o.pid << " " << kind_name(o.kind) << " " << o.path;
    if (!o.path2.empty()) s << " -> " << o.path2;
    if (o.kind == Kind::Write) s << " [" << o.a << ", +" << o.b << ")";
    if (o.kind == Kind::Trunc) s << " to " << o.a;
    if (o.kind == Kind::Sfr) s << " [" << o.a << ", +" << o.b << ")";
    if (o.is_sync()) s << " (started at #" << o.start << ")";
    auto tw = im.torn.find(int(i));
    if (tw != im.torn.end()) {
      s << " TORN sectors ";
      for (char c : tw->second.sectors) s << (c ? '1' : '0');
      s << (tw->second.full_size ? " (size: whole write)" : " (size: last sector kept)");
    }
    s << "\n";
  }
  return s.str();
}

// ---- checking a file ----

struct Check {
  std::vector<uint64_t> present;  // steps found
  std::vector<std::string> wrong; // wrong values or structure
  std::vector<std::string> read_errors;  // h5loom errors while reading a step
  std::set<uint64_t> unreadable;  // steps whose read raised
};

template <class T>
void expect_values(Check& c, const std::string& what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    c.wrong.push_back(what + ": " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.size()));
    return;
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      std::ostringstream s;
      s.precision(17);
      s << what << ": element " << i << " is " << got[i] << ", expected " << want[i];
      c.wrong.push_back(s.str());
      return;
    }
}

void expect(Check& c, bool ok, const std::string& what) {
  if (!ok) c.wrong.push_back(what);
}

void check_step(Check& c, h5loom::File& f, const Params& p, uint64_t k) {
  const std::string g = "/" + step_name(k);
  const uint64_t R = p.ranks;
  auto grp = f.group(g);
  expect(c, grp.has_attribute("step") && grp.attribute("step") == h5loom::AttributeValue(k), g + ": attribute step");
  expect(c, grp.has_attribute("label") && grp.attribute("label") == h5loom::AttributeValue(step_label(k)),
         g + ": attribute label");
  std::vector<std::string> names = grp.list();
  std::vector<std::string> want_names = {"big", "ids", "rows", "small", "sparse"};
  expect(c, names == want_names, g + ": members differ");
  auto shape_is = [&](const std::string& ds, const h5loom::Dims& s) {
    auto d = f.dataset(g + "/" + ds);
    expect(c, d.shape() == s, g + "/" + ds + ": shape " + h5loom::dims_to_string(d.shape()) + ", expected " +
                                  h5loom::dims_to_string(s));
    return d.shape() == s;
  };
  std::vector<double> want;
  if (shape_is("small", {p.n * R})) {
    want.clear();
    for (uint64_t r = 0; r < R; ++r)
      for (uint64_t i = 0; i < p.n; ++i) want.push_back(value(k, kSmall, r, i));
    expect_values(c, g + "/small", f.dataset(g + "/small").read<double>(), want);
  }
  if (shape_is("rows", {R * p.rows, p.c})) {
    want.clear();
    for (uint64_t r = 0; r < R; ++r)
      for (uint64_t i = 0; i < p.rows * p.c; ++i) want.push_back(value(k, kRows, r, i));
    expect_values(c, g + "/rows", f.dataset(g + "/rows").read<double>(), want);
  }
  if (shape_is("big", {R * p.br, p.bc})) {
    want.clear();
    for (uint64_t r = 0; r < R; ++r)
      for (uint64_t i = 0; i < p.br * p.bc; ++i) want.push_back(value(k, kBig, r, i));
    auto d = f.dataset(g + "/big");
    expect_values(c, g + "/big", d.read<double>(), want);
    expect(c, d.has_attribute("ranks") && d.attribute("ranks") == h5loom::AttributeValue(int64_t(R)),
           g + "/big: attribute ranks");
  }
  if (shape_is("ids", {p.n * R})) {
    std::vector<int32_t> wi;
    for (uint64_t r = 0; r < R; ++r)
      for (uint64_t i = 0; i < p.n; ++i) wi.push_back(id_value(k, r, i));
    expect_values(c, g + "/ids", f.dataset(g + "/ids").read<int32_t>(), wi);
  }
  if (shape_is("sparse", {p.n * R})) {
    want.clear();
    for (uint64_t r = 0; r < R; ++r)
      for (uint64_t i = 0; i < p.n; ++i) want.push_back(i < p.n / 2 ? value(k, kSparse, r, i) : 0.0);
    expect_values(c, g + "/sparse", f.dataset(g + "/sparse").read<double>(), want);
  }
}

// Checks what the writer wrote (and the recovery step, if `recovery`).
Check check_file(h5loom::File& f, const Params& p, bool recovery) {
  Check c;
  std::vector<std::string> top = f.list();
  std::set<std::string> expected_top;
  for (uint64_t k = 0; k < p.steps; ++k)
    if (f.exists("/" + step_name(k))) c.present.push_back(k);
  for (std::size_t i = 0; i < c.present.size(); ++i)
    if (c.present[i] != i) {
      c.wrong.push_back("steps present are not a prefix: " + step_name(c.present[i]) + " without " + step_name(i));
      break;
    }
  const uint64_t m = c.present.size();  // steps 0..m-1
  for (uint64_t k : c.present) expected_top.insert(step_name(k));
  if (m > 0) expected_top.insert("series");
  if (recovery) expected_top.insert("recovery");
  for (const auto& name : top)
    if (!expected_top.count(name)) c.wrong.push_back("unexpected object /" + name + " (steps present: " + std::to_string(m) + ")");
  for (const auto& name : expected_top)
    if (!f.exists("/" + name)) c.wrong.push_back("missing /" + name);
  if (!c.wrong.empty()) return c;
  for (uint64_t k : c.present) {
    try {
      check_step(c, f, p, k);
    } catch (const h5loom::Error& e) {
      c.read_errors.push_back(step_name(k) + ": " + e.what());
      c.unreadable.insert(k);
    }
  }
  if (m > 0) {
    try {
      expect(c, f.has_attribute("last_step") && f.attribute("last_step") == h5loom::AttributeValue(m - 1),
             "/: attribute last_step");
      auto s = f.dataset("/series");
      const h5loom::Dims want_shape = {m * p.ranks * p.rows, p.c};
      expect(c, s.shape() == want_shape,
             "/series: shape " + h5loom::dims_to_string(s.shape()) + ", expected " + h5loom::dims_to_string(want_shape));
      if (s.shape() == want_shape) {
        std::vector<double> want;
        for (uint64_t k = 0; k < m; ++k)
          for (uint64_t r = 0; r < p.ranks; ++r)
            for (uint64_t i = 0; i < p.rows * p.c; ++i) want.push_back(value(k, kSeries, r, i));
        expect_values(c, "/series", s.read<double>(), want);
      }
    } catch (const h5loom::Error& e) {
      c.read_errors.push_back(std::string("/series: ") + e.what());
      for (uint64_t k : c.present) c.unreadable.insert(k);
    }
  }
  if (recovery) {
    try {
      auto d = f.dataset("/recovery/data");
      std::vector<double> want(64);
      for (uint64_t i = 0; i < 64; ++i) want[i] = value(999, 9, 0, i);
      expect_values(c, "/recovery/data", d.read<double>(), want);
      expect(c, f.group("/recovery").has_attribute("after") &&
                    f.group("/recovery").attribute("after") == h5loom::AttributeValue(uint64_t(m)),
             "/recovery: attribute after");
    } catch (const h5loom::Error& e) {
      c.wrong.push_back(std::string("the recovery step cannot be read back: ") + e.what());
    }
  }
  return c;
}

// ---- the outcome of one image ----

struct Counts {
  uint64_t tried = 0, opened = 0, refused = 0, wrong = 0, lost = 0;
  uint64_t refused_with_durable = 0, read_errors = 0, verify_disagree = 0, rw_refused = 0, recovered = 0;
  uint64_t recovery_lost = 0, xfail = 0, auto_disagree = 0, cli_checked = 0, cli_disagree = 0, prefixes = 0, prefixes_total = 0;
  uint64_t crash_points = 0, max_pending = 0, ops = 0;
  std::map<std::string, uint64_t> refusals;  // why, with numbers blanked
};

std::string blank_numbers(const std::string& s, std::size_t max = 110) {
  std::string o;
  for (char ch : s) {
    if (ch >= '0' && ch <= '9') {
      if (o.empty() || o.back() != '#') o += '#';
    } else {
      o += ch;
    }
  }
  return o.size() > max ? o.substr(0, max) + "..." : o;
}

struct Opts {
  std::string trace, work, cli, label = "run", json, emit_kind, emit_dir;
  uint64_t images = 1000, seed = 1, cli_every = 0;
  long only = -1;
  bool keep = false, list = false;
  bool xfail_reopen_uncommitted = false;  // see --xfail-reopen-uncommitted
  Model model;
};

std::string fmt_steps(const std::vector<uint64_t>& s) {
  std::string o = "{";
  for (std::size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "}";
}

h5loom::FileOptions self(const std::string& engine) {
  h5loom::FileOptions o;
  o.comm = MPI_COMM_SELF;
  o.engine = engine;
  return o;
}

int run_cli_verify(const std::string& cli, const std::string& path) {
  std::string cmd = "timeout 60 " + cli + " verify '" + path + "' >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

// Returns a problem description ("" if the image is fine); updates the counts.
std::string check_image(const Opts& o, const Trace& t, const CrashPoint& cp, const Image& im, long id, Counts& n) {
  const std::string img = o.work + "/img", rw = o.work + "/rw";
  build_image(t, cp, im, img);
  const std::string path = img + "/" + t.front;
  std::set<uint64_t> durable(cp.durable_steps.begin(), cp.durable_steps.end());
  std::vector<std::string> problems;
  bool is_wrong = false, is_lost = false;
  ++n.tried;

  // 1. read-only, engine log
  bool opened = false;
  Check c;
  std::string refusal;
  try {
    auto f = h5loom::File::open(path, h5loom::Mode::Read, self("log"));
    opened = true;
    c = check_file(f, t.params, false);
    f.close();
  } catch (const h5loom::Error& e) {
    refusal = e.what();
  } catch (const std::exception& e) {
    problems.push_back(std::string("not an h5loom error: ") + e.what());
    is_wrong = true;
  }
  if (opened) {
    ++n.opened;
    if (!c.wrong.empty()) {
      is_wrong = true;
      for (auto& w : c.wrong) problems.push_back("read-only: " + w);
    }
    if (!c.read_errors.empty()) ++n.read_errors;
    for (uint64_t k : durable) {
      bool there = std::count(c.present.begin(), c.present.end(), k) && !c.unreadable.count(k);
      if (!there) {
        is_lost = true;
        problems.push_back("durable step " + std::to_string(k) + " is " +
                           (c.unreadable.count(k) ? "unreadable: " + c.read_errors.front() : std::string("missing")));
      }
    }
  } else if (!is_wrong) {
    ++n.refused;
    std::string why = refusal;
    auto cut = why.find(o.work);
    while (cut != std::string::npos) why.replace(cut, o.work.size(), "W"), cut = why.find(o.work);
    ++n.refusals[blank_numbers(why)];
    if (!durable.empty()) {
      ++n.refused_with_durable;
      is_lost = true;
      problems.push_back("refused although steps " + fmt_steps(cp.durable_steps) + " were durable: " + refusal);
    }
  }

  // 2. h5loom verify agrees (in process; the command on a sample)
  bool sound = opened && c.wrong.empty() && c.read_errors.empty();
  try {
    auto v = h5loom::verify_file(path);
    if (v.ok() != sound) {
      ++n.verify_disagree;
      problems.push_back(std::string("verify says ") + (v.ok() ? "OK" : "damaged: " + v.errors.front()) +
                         " but the file " + (sound ? "reads correctly" : "does not"));
      if (v.ok() && !sound) is_wrong = true;
    }
    if (!o.cli.empty() && ((o.cli_every && n.tried % o.cli_every == 0) || !problems.empty())) {
      ++n.cli_checked;
      int rc = run_cli_verify(o.cli, path);
      if ((rc == 0) != v.ok()) {
        ++n.cli_disagree;
        problems.push_back("h5loom verify exits " + std::to_string(rc) + " but verify_file says " +
                           (v.ok() ? "OK" : "damaged"));
      }
    }
  } catch (const h5loom::Error& e) {
    if (sound) {
      ++n.verify_disagree;
      problems.push_back(std::string("verify raised on a sound file: ") + e.what());
    }
  }

  // 3. opening without naming the engine finds the log and the same steps
  if (opened) {
    try {
      auto f = h5loom::File::open(path, h5loom::Mode::Read, self(""));
      if (f.engine_name() != "log") {
        ++n.auto_disagree;
        is_wrong = true;
        problems.push_back("opened without an engine name, the file is taken as '" + f.engine_name() + "'");
      } else {
        Check a = check_file(f, t.params, false);
        if (a.present != c.present || !a.wrong.empty()) {
          ++n.auto_disagree;
          is_wrong = true;
          problems.push_back("opened without an engine name, steps " + fmt_steps(a.present) + " instead of " +
                             fmt_steps(c.present) + (a.wrong.empty() ? "" : ": " + a.wrong.front()));
        }
      }
      f.close();
    } catch (const h5loom::Error& e) {
      ++n.auto_disagree;
      problems.push_back(std::string("opened without an engine name: refused: ") + e.what());
    }
  }

  // 4. a writer reopens it (on a copy), adds a step, closes; everything
  // committed is still there, and so is the new step. A writer refused (at
  // open, write or close) is counted apart; once its close has succeeded, a
  // file that cannot be read back has lost committed data.
  if (opened && c.wrong.empty()) {
    build_image(t, cp, im, rw);
    const std::string rpath = rw + "/" + t.front;
    const uint64_t m = c.present.size();
    bool closed = false;
    try {
      auto f = h5loom::File::open(rpath, h5loom::Mode::ReadWrite, self("log"));
      Check b = check_file(f, t.params, false);
      if (b.present != c.present || !b.wrong.empty()) {
        is_wrong = true;
        problems.push_back("reopened read-write: steps " + fmt_steps(b.present) + " instead of " +
                           fmt_steps(c.present) + (b.wrong.empty() ? "" : ": " + b.wrong.front()));
      }
      auto g = f.create_group("recovery");
      g.set_attribute("after", uint64_t(m));
      auto d = g.create_dataset<double>("data", {64});
      std::vector<double> v(64);
      for (uint64_t i = 0; i < 64; ++i) v[i] = value(999, 9, 0, i);
      d.write_copy(h5loom::Selection::all(), v);
      f.flush();
      f.close();
      closed = true;
    } catch (const h5loom::Error& e) {
      ++n.rw_refused;
      is_lost = is_lost || !durable.empty();
      problems.push_back(std::string("a writer reopening it gets an error: ") + e.what());
    }
    if (closed) {
      try {
        auto f = h5loom::File::open(rpath, h5loom::Mode::Read, self(""));
        Check after = check_file(f, t.params, true);
        f.close();
        if (after.present != c.present || !after.wrong.empty() || !after.read_errors.empty()) {
          is_wrong = true;
          problems.push_back("after a writer reopened it, added a step and closed: steps " + fmt_steps(after.present) +
                             " (before: " + fmt_steps(c.present) + ")" +
                             (after.wrong.empty() ? "" : ": " + after.wrong.front()) +
                             (after.read_errors.empty() ? "" : ": " + after.read_errors.front()));
        } else {
          auto v = h5loom::verify_file(rpath);
          if (!v.ok()) {
            is_wrong = true;
            problems.push_back("after a writer reopened it and closed, verify fails: " + v.errors.front());
          } else {
            ++n.recovered;
          }
        }
      } catch (const h5loom::Error& e) {
        // A known engine bug, while it is being fixed: a file that crashed
        // before its first commit, reopened read-write and closed, cannot be
        // opened. Counted apart (not as wrong) under --xfail-reopen-uncommitted.
        if (o.xfail_reopen_uncommitted && c.present.empty() && durable.empty()) {
          ++n.xfail;
          return "";
        }
        is_wrong = true;
        ++n.recovery_lost;
        std::string v;
        try {
          v = h5loom::verify_file(rpath).ok() ? " (h5loom verify says OK)" : " (h5loom verify reports it)";
        } catch (const h5loom::Error&) {
        }
        problems.push_back("a writer reopened it, added a step, flushed and closed without error, and then the file "
                           "cannot be opened: " + std::string(e.what()) + v);
      }
    }
  }
  if (is_wrong) ++n.wrong;
  if (is_lost) ++n.lost;
  if (problems.empty()) return "";
  std::ostringstream s;
  s << "image " << id << " (" << im.how << ", crash point " << im.point << " " << cp.after << "; durable steps "
    << fmt_steps(cp.durable_steps) << ", present " << fmt_steps(c.present) << (opened ? "" : ", refused: " + refusal)
    << "):\n";
  for (auto& p : problems) s << "  - " << p << "\n";
  return s.str();
}

void usage() {
  std::fprintf(stderr,
               "usage: crash_explore --trace DIR --work DIR [--images N] [--seed S] [--only ID] [--keep]\n"
               "                     [--strict-dirs] [--ignore-syncs SUBSTR] [--xfail-reopen-uncommitted]\n"
               "                     [--emit-base clean|torn DIR] [--process-crash]\n"
               "                     [--cli H5LOOM] [--cli-every K] [--label TEXT] [--json FILE] [--list]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--trace") o.trace = next();
    else if (a == "--work") o.work = next();
    else if (a == "--images") o.images = std::stoull(next());
    else if (a == "--seed") o.seed = std::stoull(next());
    else if (a == "--only") o.only = std::stol(next());
    else if (a == "--keep") o.keep = true;
    else if (a == "--list") o.list = true;
    else if (a == "--emit-base") o.emit_kind = next(), o.emit_dir = next();
    else if (a == "--strict-dirs") o.model.strict_dirs = true;
    else if (a == "--process-crash") o.model.process_crash = true;
    else if (a == "--ignore-syncs") o.model.ignore_syncs = next();
    else if (a == "--xfail-reopen-uncommitted") o.xfail_reopen_uncommitted = true;
    else if (a == "--cli") o.cli = next();
    else if (a == "--cli-every") o.cli_every = std::stoull(next());
    else if (a == "--label") o.label = next();
    else if (a == "--json") o.json = next();
    else usage();
  }
  if (o.trace.empty() || o.work.empty()) usage();
  ::unsetenv("H5LOOM_ENGINE");
  fs::create_directories(o.work);

  Trace t = load_trace(o.trace);
  auto cps = crash_points(o.model, t);
  Counts n;
  n.crash_points = cps.size();
  for (const auto& op : t.ops) n.ops += op.changes_state() || op.is_sync();
  for (const auto& cp : cps) n.max_pending = std::max<uint64_t>(n.max_pending, cp.pending.size());
  if (!o.emit_kind.empty()) {
    // A start for an append run: "clean" is the state at the end of the run
    // with everything applied; "torn" the durable state just before the second
    // commit record's sync (that epoch's data and index without its commit
    // record: a torn tail of the log).
    Image im;
    std::size_t point = cps.size() - 1;
    if (o.emit_kind == "clean") {
      im.extra = cps[point].pending;
    } else if (o.emit_kind == "torn") {
      // (with --process-crash: just before the third write to the journal,
      // its header and the first commit record being the first two)
      int seen = 0;
      const int want = o.model.process_crash ? 3 : 2;
      const std::string mark = o.model.process_crash ? " write " + t.front + ".loom/commits"
                                                     : "before fdatasync " + t.front + ".loom/commits";
      for (std::size_t c = 0; c < cps.size(); ++c)
        if (cps[c].after.find(mark) != std::string::npos && ++seen <= want) point = c;
    } else {
      usage();
    }
    im.point = int(point);
    build_image(t, cps[point], im, o.emit_dir);
    std::printf("%s: %s base (crash point %zu %s; steps %s durable)\n", o.label.c_str(), o.emit_kind.c_str(), point,
                cps[point].after.c_str(), fmt_steps(cps[point].durable_steps).c_str());
    return 0;
  }
  auto images = plan_images(t, cps, o.images, o.seed, &n.prefixes_total);
  for (const auto& im : images) n.prefixes += im.how.rfind("prefix", 0) == 0;
  if (o.list) {
    for (std::size_t i = 0; i < images.size(); ++i)
      std::printf("image %zu: %s, crash point %d %s\n", i, images[i].how.c_str(), images[i].point,
                  cps[std::size_t(images[i].point)].after.c_str());
    return 0;
  }
  h5loom::ensure_mpi();
  uint64_t shown = 0;
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (o.only >= 0 && long(i) != o.only) continue;
    const Image& im = images[i];
    const CrashPoint& cp = cps[std::size_t(im.point)];
    std::string problem = check_image(o, t, cp, im, long(i), n);
    if (!problem.empty() && (shown < 20 || o.only >= 0)) {
      ++shown;
      std::printf("%s: %s", o.label.c_str(), problem.c_str());
      std::printf("  reproduce: crash_explore --trace %s --work DIR --images %llu --seed %llu --only %zu --keep%s%s%s\n",
                  o.trace.c_str(), (unsigned long long)o.images, (unsigned long long)o.seed, i,
                  o.model.strict_dirs ? " --strict-dirs" : "",
                  o.model.ignore_syncs.empty() ? "" : " --ignore-syncs ", o.model.ignore_syncs.c_str());
      std::printf("  operations up to the crash point:\n%s", describe_ops(t, cp, im).c_str());
      std::fflush(stdout);
    }
  }
  if (!o.keep) {
    std::error_code ec;
    fs::remove_all(o.work + "/img", ec);
    fs::remove_all(o.work + "/rw", ec);
  }
  std::printf(
      "%s: %llu operations, %llu crash points (up to %llu pending operations), images tried %llu (prefixes %llu of "
      "%llu), opened %llu, refused %llu (%llu of them with durable steps), wrong %llu, durable steps lost %llu; "
      "reads raising %llu, verify disagreeing %llu, read-write reopen refused %llu, recovered by a writer %llu (its step lost %llu), "
      "auto-detection disagreeing %llu, h5loom verify runs %llu (disagreeing %llu)\n",
      o.label.c_str(), (unsigned long long)n.ops, (unsigned long long)n.crash_points,
      (unsigned long long)n.max_pending, (unsigned long long)n.tried, (unsigned long long)n.prefixes,
      (unsigned long long)n.prefixes_total, (unsigned long long)n.opened, (unsigned long long)n.refused,
      (unsigned long long)n.refused_with_durable, (unsigned long long)n.wrong, (unsigned long long)n.lost,
      (unsigned long long)n.read_errors, (unsigned long long)n.verify_disagree, (unsigned long long)n.rw_refused,
      (unsigned long long)n.recovered, (unsigned long long)n.recovery_lost, (unsigned long long)n.auto_disagree, (unsigned long long)n.cli_checked,
      (unsigned long long)n.cli_disagree);
  if (o.xfail_reopen_uncommitted)
    std::printf("  expected failures (--xfail-reopen-uncommitted: a writer reopening a file that crashed before its "
                "first commit leaves a file that cannot be opened): %llu\n", (unsigned long long)n.xfail);
  for (const auto& [why, count] : n.refusals) std::printf("  refused %llu x: %s\n", (unsigned long long)count, why.c_str());
  if (!o.json.empty()) {
    std::ofstream j(o.json);
    j << "{\"label\":\"" << o.label << "\",\"tried\":" << n.tried << ",\"opened\":" << n.opened
      << ",\"refused\":" << n.refused << ",\"refused_with_durable\":" << n.refused_with_durable
      << ",\"wrong\":" << n.wrong << ",\"lost\":" << n.lost << ",\"read_errors\":" << n.read_errors
      << ",\"verify_disagree\":" << n.verify_disagree << ",\"rw_refused\":" << n.rw_refused
      << ",\"recovered\":" << n.recovered << ",\"recovery_lost\":" << n.recovery_lost << ",\"xfail\":" << n.xfail << ",\"auto_disagree\":" << n.auto_disagree
      << ",\"cli_checked\":" << n.cli_checked << ",\"cli_disagree\":" << n.cli_disagree
      << ",\"crash_points\":" << n.crash_points << ",\"prefixes\":" << n.prefixes << "}\n";
  }
  std::fflush(stdout);
  return n.wrong == 0 && n.lost == 0 ? 0 : 1;
}
