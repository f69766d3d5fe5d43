#include "engines/log/replay.hpp"

#include <algorithm>
#include <cstdio>

#include "engines/log/front_file.hpp"
#include "engines/log/scan.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

using namespace logfmt;

void Catalog::apply(const Json& op, const std::string& where) {
  const int created = apply_op(tree, op, where);
  if (created >= 0) index->add_dataset(tree.datasets[std::size_t(created)].shape.size());
}

int Catalog::add_dataset(const std::string& path, DatasetInfo info, std::optional<uint64_t> type_token,
                         const std::string& where) {
  const int id = logengine::add_dataset(tree, path, std::move(info), type_token, where);
  index->add_dataset(tree.datasets[std::size_t(id)].shape.size());
  return id;
}

void check_block(const Tree& tree, const BlockEntry& e, uint64_t log_end, uint64_t checksum_unit,
                 const std::string& what) {
  if (e.dataset >= tree.datasets.size())
    throw CorruptionError(what + ": a block refers to dataset id " + std::to_string(e.dataset) + ", which does not exist");
  const DatasetInfo& info = tree.datasets[e.dataset];
  const std::string where = what + ": block of dataset '" + tree.dataset_paths[e.dataset] + "' at log offset " +
                            std::to_string(e.offset);
  if (e.start.size() != info.shape.size())
    throw CorruptionError(where + " has " + std::to_string(e.start.size()) + " dimensions");
  // Within the dataset's shape, or the largest it had before it shrank.
  Dims bound = info.shape;
  if (auto w = tree.widest.find(int(e.dataset)); w != tree.widest.end())
    for (std::size_t d = 0; d < bound.size() && d < w->second.size(); ++d) bound[d] = std::max(bound[d], w->second[d]);
  uint64_t bytes = datatype_size(info.dtype);
  for (std::size_t d = 0; d < e.start.size(); ++d) {
    if (e.count[d] == 0 || e.start[d] > bound[d] || e.count[d] > bound[d] - e.start[d])
      throw CorruptionError(where + " lies outside the dataset's shape " + dims_to_string(bound));
    bytes *= e.count[d];  // no overflow: the shape's byte size fits (apply_op)
  }
  if (e.nbytes != bytes) throw CorruptionError(where + " holds " + std::to_string(e.nbytes) + " bytes, its box " +
                                               std::to_string(bytes));
  if (e.offset > log_end || e.nbytes > log_end - e.offset)
    throw CorruptionError(where + " lies beyond the committed log (" + std::to_string(log_end) + " bytes)");
  if (e.unit_crcs.size() != (e.nbytes + checksum_unit - 1) / checksum_unit)
    throw CorruptionError(where + " has a checksum list of the wrong length");
}

void replay_index_record(Catalog& catalog, const unsigned char* p, std::size_t n, uint64_t expected_epoch,
                         uint32_t front_crc, uint64_t log_end, uint64_t checksum_unit, const std::string& where) {
  const std::string what = where + ": index record of epoch " + std::to_string(expected_epoch);
  const IndexRecord rec = IndexRecord::parse(p, n, expected_epoch, what);
  try {
    Json ops;
    if (!decode_ops(rec.meta, rec.meta_size, ops)) throw CorruptionError(what + ": unreadable metadata");
    for (const auto& op : ops) catalog.apply(op, where);
    Reader entries{rec.entries, rec.entries_size, 0, what};
    catalog.index->deserialize(entries, rec.entry_count, [&](const BlockEntry& e) {
      check_block(catalog.tree, e, log_end, checksum_unit, what);
    });
    if (front_crc) catalog.tree.fronts.push_back({expected_epoch, 0, front_crc});
  } catch (const CorruptionError&) {
    throw;
  } catch (const std::exception& e) {  // bad CBOR, a missing key or a wrong type, a short record...
    throw CorruptionError(what + " is damaged: " + e.what());
  }
}

// The packed state: file id, checksum unit, log_end, epoch, commits_end, torn
// bytes, damage, then (epoch, front CRC, size, bytes) per index record.
std::vector<unsigned char> read_committed(LogStore& store, const std::string& path, bool writable) {
  LogState st = scan_log(store, path);
  const std::string where = "log file '" + path + "'";
  if (!st.damage.empty()) {
    if (st.commits.empty()) throw CorruptionError(st.damage + " (no intact epoch before it)");
    if (writable)
      throw CorruptionError(st.damage + ". " + where + " is not opened for writing: that would build on a "
                            "damaged log (epochs 1.." + std::to_string(st.commits.size()) +
                            " are intact; open it read-only to read them, h5loom convert to copy them)");
    std::fprintf(stderr, "h5loom: warning: %s; reading the %zu intact epochs before it\n", st.damage.c_str(),
                 st.commits.size());
  }
  // (A damaged journal has lost epochs the front file may show: that is reported already.)
  check_front_binding(store, path, st.header, st.damage.empty() ? st.commits.size() : UINT64_MAX);
  Writer w;
  w.raw(st.header.file_id, 16);
  w.u64(st.header.checksum_unit);
  w.u64(st.log_end);
  w.u64(st.commits.size());
  w.u64(kCommitsHeaderSize + st.commits.size() * kCommitRecordSize);
  w.u64(st.torn_log_bytes);
  w.u64(st.damage.size());
  w.raw(st.damage.data(), st.damage.size());
  for (std::size_t i = 0; i < st.commits.size(); ++i) {
    w.u64(st.commits[i].epoch);
    w.u32(st.commits[i].front_crc);
    w.u64(st.index_records[i].size());
    w.raw(st.index_records[i].data(), st.index_records[i].size());
  }
  return std::move(w.bytes);
}

void replay_committed(const std::vector<unsigned char>& packed, Committed& c, Catalog& catalog,
                      const std::string& where) {
  Reader r{packed.data(), packed.size(), 0, where};
  r.raw(c.header.file_id, 16);
  c.header.checksum_unit = r.u64();
  c.log_end = r.u64(), c.epoch = r.u64(), c.commits_end = r.u64(), c.torn_bytes = r.u64();
  c.damage.resize(r.u64());
  r.raw(c.damage.data(), c.damage.size());
  while (r.at < r.n) {
    const uint64_t epoch = r.u64();
    const uint32_t front_crc = r.u32();
    const uint64_t n = r.u64();
    r.need(n);
    replay_index_record(catalog, r.p + r.at, n, epoch, front_crc, c.log_end, c.header.checksum_unit, where);
    r.at += n;
  }
}

}  // namespace h5loom::logengine
