#include "engines/log/index.hpp"

#include <algorithm>

#include "engines/log/boxes.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

uint64_t Index::serialize(logfmt::Writer& w) const {
  uint64_t n = 0;
  for (std::size_t id = 0; id < datasets(); ++id)
    for (const auto& e : blocks(uint32_t(id))) e.encode(w), ++n;
  return n;
}

void Index::deserialize(logfmt::Reader& r, uint64_t count, const std::function<void(const BlockEntry&)>& check) {
  for (uint64_t i = 0; i < count; ++i) {
    BlockEntry e = BlockEntry::decode(r);
    if (check) check(e);
    insert(std::move(e));
  }
}

namespace {

class SortedRangeIndex final : public Index {
 public:
  void add_dataset(std::size_t rank) override {
    Dataset d;
    d.max_count.assign(rank, 0);
    datasets_.push_back(std::move(d));
  }
  std::size_t datasets() const override { return datasets_.size(); }

  void insert(BlockEntry e) override {
    if (e.dataset >= datasets_.size())
      throw CorruptionError("a block refers to dataset id " + std::to_string(e.dataset) + ", which does not exist");
    Dataset& d = datasets_[e.dataset];
    if (e.start.size() != d.max_count.size() || e.count.size() != d.max_count.size())
      throw CorruptionError("a block of dataset id " + std::to_string(e.dataset) + " has " +
                            std::to_string(e.start.size()) + " dimensions, the dataset " +
                            std::to_string(d.max_count.size()));
    for (std::size_t k = 0; k < e.count.size(); ++k) d.max_count[k] = std::max(d.max_count[k], e.count[k]);
    d.entries.push_back(std::move(e));
    d.sorted = false;
    ++size_;
  }

  void search(uint32_t dataset, const Dims& start, const Dims& count,
              std::vector<const BlockEntry*>& out) const override {
    const Dataset& d = datasets_.at(dataset);
    if (d.entries.empty()) return;
    if (!d.sorted) {
      // Sorted at the first search after inserts, not at each insert: a
      // writer inserts an epoch's blocks at once, a reader searches many times.
      std::sort(d.entries.begin(), d.entries.end(),
                [](const BlockEntry& a, const BlockEntry& b) { return a.start < b.start; });
      d.sorted = true;
    }
    search(d, 0, d.entries.size(), 0, start, count, out);
  }

  const std::vector<BlockEntry>& blocks(uint32_t dataset) const override { return datasets_.at(dataset).entries; }
  uint64_t size() const override { return size_; }

 private:
  struct Dataset {
    mutable std::vector<BlockEntry> entries;  // sorted by start when `sorted` (searches sort them)
    mutable bool sorted = true;
    Dims max_count;  // the largest block extent per dimension
  };

  // Collects the entries of [lo, hi) whose box meets [qs, qs+qc): a block
  // starting before qs - max_count cannot reach qs, so along dimension d only
  // starts in (qs - max_count, qs + qc) qualify; within a run of equal starts
  // the next dimension is searched the same way.
  static void search(const Dataset& d, std::size_t lo, std::size_t hi, std::size_t k, const Dims& qs,
                     const Dims& qc, std::vector<const BlockEntry*>& out) {
    const auto& entries = d.entries;
    const uint64_t from = qs[k] + 1 > d.max_count[k] ? qs[k] + 1 - d.max_count[k] : 0;  // start > qs - maxc
    const uint64_t to = qs[k] + qc[k];                                                   // start < qs + qc
    auto first = std::partition_point(entries.begin() + long(lo), entries.begin() + long(hi),
                                      [&](const BlockEntry& e) { return e.start[k] < from; });
    auto last = std::partition_point(first, entries.begin() + long(hi),
                                     [&](const BlockEntry& e) { return e.start[k] < to; });
    if (k + 1 == qs.size()) {
      Dims s, c;
      for (auto it = first; it != last; ++it)
        if (intersect(it->start, it->count, qs, qc, s, c)) out.push_back(&*it);
      return;
    }
    for (auto it = first; it != last;) {
      auto group_end = std::partition_point(it, last, [&](const BlockEntry& e) { return e.start[k] == it->start[k]; });
      search(d, std::size_t(it - entries.begin()), std::size_t(group_end - entries.begin()), k + 1, qs, qc, out);
      it = group_end;
    }
  }

  std::vector<Dataset> datasets_;
  uint64_t size_ = 0;
};

}  // namespace

std::unique_ptr<Index> make_sorted_range_index() { return std::make_unique<SortedRangeIndex>(); }

}  // namespace h5loom::logengine
