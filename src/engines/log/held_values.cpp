#include "engines/log/held_values.hpp"

#include <cstring>

#include "core/mpi_util.hpp"
#include "engines/log/boxes.hpp"
#include "h5loom/variable_length.hpp"

namespace h5loom::logengine {

namespace {

Json selection_to_json(const Selection& sel) {
  if (sel.kind() == Selection::Kind::All) return Json{{"all", true}};
  return Json{{"start", sel.start()}, {"count", sel.count()}, {"stride", sel.stride()}, {"block", sel.block()}};
}

Selection selection_from_json(const Json& j) {
  if (j.contains("all")) return Selection::all();
  return Selection::hyperslab(j.at("start").get<Dims>(), j.at("count").get<Dims>(), j.at("stride").get<Dims>(),
                              j.at("block").get<Dims>());
}

}  // namespace

void for_each_selected(const Selection& sel, const Dims& shape, const std::function<void(uint64_t, uint64_t)>& fn) {
  const Dims dense_shape = sel.selected_shape(shape);
  const std::size_t nd = shape.size();
  Dims at(nd), dense_at(nd);
  for (const auto& box : selection_boxes(sel, shape)) {
    if (product(box.count) == 0) continue;
    Dims idx(nd, 0);
    for (;;) {
      for (std::size_t d = 0; d < nd; ++d) at[d] = box.start[d] + idx[d], dense_at[d] = box.dense_start[d] + idx[d];
      fn(row_major_index(at, shape), row_major_index(dense_at, dense_shape));
      std::size_t d = nd;  // the next element of the box, row-major
      while (d > 0 && ++idx[d - 1] == box.count[d - 1]) idx[--d] = 0;
      if (d == 0) break;
    }
  }
}

Json elements_op(const std::string& path, const Selection& sel, const Datatype& dtype, const void* data, uint64_t n) {
  Json op{{"op", "elements"}, {"path", path}, {"selection", selection_to_json(sel)}};
  if (dtype.is_varstring()) {
    const auto* s = static_cast<const std::string*>(data);
    op["strings"] = std::vector<std::string>(s, s + n);
  } else if (dtype.has_variable_length_parts()) {
    op["packed"] = Json::binary(pack_variable_length(dtype, data, n));
  } else {
    const auto* p = static_cast<const std::uint8_t*>(data);
    op["bytes"] = Json::binary(std::vector<std::uint8_t>(p, p + n * dtype.size()));
  }
  return op;
}

void apply_elements(Tree& tree, int id, const Json& op, const std::function<void(const std::string&)>& bad) {
  const DatasetInfo& info = tree.datasets.at(std::size_t(id));
  if (!held_in_metadata(info.dtype)) bad("holds elements of a " + info.dtype.name() + " dataset, which the data log keeps");
  Selection sel = Selection::none();
  try {
    sel = selection_from_json(op.at("selection"));
    sel.validate(info.shape, tree.dataset_paths[std::size_t(id)]);
  } catch (const SelectionError& e) {
    bad(std::string("has a bad selection (") + e.what() + ")");
  }
  const uint64_t n = sel.num_elements(info.shape);
  HeldValues& v = tree.held[id];
  if (info.dtype.is_varstring()) {
    const Json& strings = op.at("strings");
    if (!strings.is_array() || strings.size() != n) bad("has the wrong number of strings");
    for (const auto& s : strings)
      if (!s.is_string()) bad("holds a value that is not text");
    for_each_selected(sel, info.shape, [&](uint64_t at, uint64_t k) { v.strings[at] = strings[k].get<std::string>(); });
  } else if (info.dtype.has_variable_length_parts()) {
    // Each element's packed bytes, split and checked here: a damaged record
    // fails when the log is replayed, not when the element is read.
    const Json& packed = op.at("packed");
    if (!packed.is_binary()) bad("holds packed elements that are not bytes");
    const auto& bytes = packed.get_binary();
    if (n > bytes.size() / min_packed_element_size(info.dtype)) bad("has fewer bytes than its selection's elements need");
    std::vector<std::pair<std::size_t, std::size_t>> spans(n);  // (offset, size) of element k
    std::size_t at = 0;
    for (auto& [offset, size] : spans) {
      try {
        size = packed_element_size(info.dtype, bytes.data() + at, bytes.size() - at);
      } catch (const CorruptionError& e) {
        bad(std::string("has a damaged element (") + e.what() + ")");
      }
      offset = at;
      at += size;
    }
    if (at != bytes.size()) bad("has bytes after its last element");
    for_each_selected(sel, info.shape, [&](uint64_t to, uint64_t k) {
      const auto begin = bytes.begin() + std::ptrdiff_t(spans[k].first);
      v.elements[to].assign(begin, begin + std::ptrdiff_t(spans[k].second));
    });
  } else {
    const auto& bytes = op.at("bytes").get_binary();
    const std::size_t es = info.dtype.size();
    if (bytes.size() != n * es) bad("has the wrong number of bytes");
    for_each_selected(sel, info.shape, [&](uint64_t at, uint64_t k) {
      v.elements[at].assign(bytes.begin() + std::ptrdiff_t(k * es), bytes.begin() + std::ptrdiff_t((k + 1) * es));
    });
  }
}

void regrid_held(Tree& tree, int id, const Dims& old_shape) {
  auto it = tree.held.find(id);
  if (it == tree.held.end()) return;
  const Dims& shape = tree.datasets.at(std::size_t(id)).shape;
  // Each written element to its place: the same coordinates in the new shape;
  // those outside it (a shrink) are gone.
  auto moved = [&](uint64_t k, uint64_t& to) {
    Dims at(old_shape.size());
    for (std::size_t d = old_shape.size(); d-- > 0;) at[d] = k % old_shape[d], k /= old_shape[d];
    for (std::size_t d = 0; d < at.size(); ++d)
      if (at[d] >= shape[d]) return false;
    to = row_major_index(at, shape);
    return true;
  };
  HeldValues regridded;
  uint64_t to = 0;
  for (auto& [k, s] : it->second.strings)
    if (moved(k, to)) regridded.strings.emplace(to, std::move(s));
  for (auto& [k, e] : it->second.elements)
    if (moved(k, to)) regridded.elements.emplace(to, std::move(e));
  it->second = std::move(regridded);
}

void read_held(const Tree& tree, int id, const Selection& sel, void* out) {
  const DatasetInfo& info = tree.datasets.at(std::size_t(id));
  static const HeldValues none;
  auto it = tree.held.find(id);
  const HeldValues& v = it == tree.held.end() ? none : it->second;
  if (info.dtype.is_varstring()) {
    auto* s = static_cast<std::string*>(out);
    for_each_selected(sel, info.shape, [&](uint64_t at, uint64_t k) {
      auto e = v.strings.find(at);
      s[k] = e == v.strings.end() ? std::string() : e->second;
    });
    return;
  }
  const std::size_t es = info.dtype.size();
  auto* p = static_cast<unsigned char*>(out);
  if (info.dtype.has_variable_length_parts()) {
    std::memset(p, 0, sel.num_elements(info.shape) * es);  // a failure part-way leaves only whole elements to release
    try {
      for_each_selected(sel, info.shape, [&](uint64_t at, uint64_t k) {
        auto e = v.elements.find(at);
        if (e != v.elements.end()) unpack_variable_length(info.dtype, e->second.data(), e->second.size(), p + k * es, 1);
      });
    } catch (...) {
      reclaim_variable_length(info.dtype, p, sel.num_elements(info.shape));
      throw;
    }
    return;
  }
  for_each_selected(sel, info.shape, [&](uint64_t at, uint64_t k) {
    auto e = v.elements.find(at);
    if (e == v.elements.end()) std::memset(p + k * es, 0, es);
    else std::memcpy(p + k * es, e->second.data(), es);
  });
}

void share_held_writes(MPI_Comm comm, std::vector<engine::Write>& mine, const std::function<void(Json)>& record) {
  int any = !mine.empty();  // most flushes have none: one small reduction instead of a gather
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return;
  Json ops = Json::array();
  for (const auto& w : mine) ops.push_back(elements_op(w.dataset, w.selection, w.dtype, w.data(), w.elements));
  mine.clear();
  const std::vector<std::uint8_t> cbor = Json::to_cbor(ops);
  for (const auto& theirs : mpi::allgather_strings(comm, std::string(cbor.begin(), cbor.end())))
    for (auto& op : Json::from_cbor(theirs)) record(std::move(op));
}

}  // namespace h5loom::logengine
