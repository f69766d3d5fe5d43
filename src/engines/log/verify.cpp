#include "engines/log/verify.hpp"

#include "engines/log/front_file.hpp"
#include "engines/log/log_store.hpp"
#include "engines/log/replay.hpp"
#include "engines/log/scan.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

using namespace logfmt;

namespace {

// The front file belongs to this log and is byte for byte one the log recorded
// (the last one, or an earlier one if a crash came before it was replaced).
void verify_front_file(LogStore& store, const std::string& path, const LogHeader& header, const Tree& tree,
                       uint64_t epochs, std::vector<std::string>& errors) {
  try {
    check_front_binding(store, path, header, epochs);
  } catch (const Error& e) {
    errors.push_back(e.what());
    return;
  }
  auto sum = checksum_file(store, path);
  if (!sum || tree.fronts.empty()) return;  // not built yet, or from before front checksums
  for (const auto& rec : tree.fronts)
    if (rec.matches(*sum)) return;
  errors.push_back("front file '" + path + "' is damaged: its checksum (" + std::to_string(sum->size) +
                   " bytes, CRC32C " + std::to_string(sum->crc) + ") matches none the log recorded (the last: epoch " +
                   std::to_string(tree.fronts.back().epoch) + ", CRC32C " + std::to_string(tree.fronts.back().crc) +
                   "); remove it and open the file read-write to rebuild it from the log");
}

}  // namespace

VerifyReport verify_log(const std::string& path) {
  LogStore& store = posix_store();
  VerifyReport rep;
  LogState st;
  try {
    st = scan_log(store, path);
  } catch (const CorruptionError& e) {
    rep.errors.push_back(e.what());
    return rep;
  }
  rep.epochs = st.commits.size();
  rep.torn_log_bytes = st.torn_log_bytes;
  rep.torn_commit_bytes = st.torn_commit_bytes;
  if (!st.damage.empty())
    rep.errors.push_back(st.damage + " (epochs 1.." + std::to_string(st.commits.size()) +
                         " are intact; readers use those; the file cannot be opened for writing)");
  Catalog catalog;
  const std::string where = "log file '" + path + "'";
  const uint64_t unit = st.header.checksum_unit;
  for (std::size_t i = 0; i < st.commits.size(); ++i) {
    try {
      replay_index_record(catalog, st.index_records[i].data(), st.index_records[i].size(), st.commits[i].epoch,
                          st.commits[i].front_crc, st.log_end, unit, where);
    } catch (const Error& e) {
      rep.errors.push_back(e.what());
      return rep;
    }
  }
  verify_front_file(store, path, st.header, catalog.tree, st.damage.empty() ? st.commits.size() : UINT64_MAX,
                    rep.errors);
  auto log = store.open(log_path(path), LogStore::Access::Read).file;
  if (!log) {  // it was there for the scan a moment ago
    rep.errors.push_back("cannot open " + log_path(path));
    return rep;
  }
  std::vector<unsigned char> buf;
  const Index& index = *catalog.index;
  for (std::size_t id = 0; id < index.datasets(); ++id) {
    for (const auto& e : index.blocks(uint32_t(id))) {
      ++rep.blocks;
      std::string what = "dataset '" + catalog.tree.dataset_paths[id] + "': block at log offset " +
                         std::to_string(e.offset) + " (epoch " + std::to_string(e.epoch) + ", rank " +
                         std::to_string(e.rank) + ", " + std::to_string(e.nbytes) + " bytes)";
      if (e.offset + e.nbytes > st.log_end) {
        rep.errors.push_back(what + " lies beyond the committed log");
        continue;
      }
      if (e.unit_crcs.size() != (e.nbytes + unit - 1) / unit) {
        rep.errors.push_back(what + " has a checksum list of the wrong length");
        continue;
      }
      for (uint64_t u = 0; u * unit < e.nbytes; ++u) {
        uint64_t n = std::min(unit, e.nbytes - u * unit);
        buf.resize(n);
        log->read(buf.data(), n, e.offset + u * unit, "reading " + what);
        if (crc32c(buf.data(), n) != e.unit_crcs[u]) {
          rep.errors.push_back("checksum mismatch in " + what + ", bytes " + std::to_string(u * unit) + ".." +
                               std::to_string(u * unit + n) + " of the block");
          break;
        }
      }
      rep.data_bytes += e.nbytes;
    }
  }
  return rep;
}

}  // namespace h5loom::logengine
