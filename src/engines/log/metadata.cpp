#include "engines/log/metadata.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "engines/log/held_values.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

namespace {

Json attribute_to_json(const AttributeValue& v) {
  using K = AttributeValue::Kind;
  switch (v.kind()) {
    case K::String: return {{"kind", "string"}, {"text", v.as_string()}};
    case K::StringArray: return {{"kind", "strings"}, {"strings", v.as_strings()}};
    default: {
      auto* p = static_cast<const unsigned char*>(v.data());
      std::vector<std::uint8_t> bytes(p, p + v.size() * datatype_size(v.dtype()));
      return {{"kind", v.kind() == K::Scalar ? "scalar" : "array"},
              {"dtype", datatype_name(v.dtype())},
              {"data", Json::binary(std::move(bytes))}};
    }
  }
}

AttributeValue attribute_from_json(const Json& j) {
  std::string kind = j.at("kind");
  if (kind == "string") return AttributeValue(j.at("text").get<std::string>());
  if (kind == "strings") return AttributeValue(j.at("strings").get<std::vector<std::string>>());
  Datatype dt = datatype_from_name(j.at("dtype").get<std::string>());
  const auto& bytes = j.at("data").get_binary();
  return AttributeValue::from_raw(kind == "scalar" ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array, dt,
                                  bytes.size() / datatype_size(dt), bytes.data());
}

// Builds the JSON of a CBOR document like nlohmann's DOM parser, refusing
// nesting deeper than kMaxDepth.
struct DepthLimitedParser : nlohmann::detail::json_sax_dom_parser<Json> {
  static constexpr std::size_t kMaxDepth = 16;
  std::size_t depth = 0;
  using nlohmann::detail::json_sax_dom_parser<Json>::json_sax_dom_parser;
  bool deeper() {
    if (++depth > kMaxDepth) throw CorruptionError("metadata nested deeper than " + std::to_string(kMaxDepth));
    return true;
  }
  bool start_object(std::size_t n) { return deeper() && json_sax_dom_parser::start_object(n); }
  bool start_array(std::size_t n) { return deeper() && json_sax_dom_parser::start_array(n); }
  bool end_object() { return --depth, json_sax_dom_parser::end_object(); }
  bool end_array() { return --depth, json_sax_dom_parser::end_array(); }
};

std::string parent_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == 0 ? std::string("/") : p.substr(0, slash);
}
std::string name_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

}  // namespace

Json group_op(const std::string& path) { return Json{{"op", "group"}, {"path", path}}; }

Json dataset_op(const std::string& path, Datatype dtype, const Dims& shape, const Dims& max_shape, const Dims& chunks,
                const std::vector<unsigned char>& fill) {
  Json op{{"op", "dataset"},
          {"path", path},
          {"dtype", datatype_name(dtype)},
          {"shape", shape},
          {"max_shape", max_shape},
          {"layout", chunks.empty() ? "contiguous" : "chunked"},
          {"chunks", chunks}};
  if (!fill.empty()) op["fill"] = Json::binary(std::vector<std::uint8_t>(fill.begin(), fill.end()));
  return op;
}

Json type_op(const std::string& path, const Datatype& dtype) {
  return Json{{"op", "type"}, {"path", path}, {"dtype", datatype_name(dtype)}};
}

Json softlink_op(const std::string& path, const std::string& target) {
  return Json{{"op", "softlink"}, {"path", path}, {"target", target}};
}
Json unlink_op(const std::string& path) { return Json{{"op", "unlink"}, {"path", path}}; }
Json move_op(const std::string& from, const std::string& to) {
  return Json{{"op", "move"}, {"from", from}, {"to", to}};
}

std::string Tree::resolve(const std::string& path) const {
  std::string p = path;
  for (int hops = 0; hops <= 16;) {
    // The first prefix of p that is a soft link, if any.
    bool followed = false;
    for (std::size_t end = p.find('/', 1);; end = p.find('/', end + 1)) {
      const std::string prefix = p.substr(0, end);
      auto it = nodes.find(prefix);
      if (it == nodes.end()) return {};
      if (!it->second.link.empty()) {
        const std::string& link = it->second.link;
        p = (link == "/" ? std::string() : link) + (end == std::string::npos ? "" : p.substr(end));
        if (p.empty()) p = "/";
        ++hops, followed = true;
        break;
      }
      if (end == std::string::npos) break;
    }
    if (!followed) return p;
  }
  return {};  // a loop of links
}

std::string Tree::path_of_token(uint64_t token) const {
  if (token == 0) return {};
  for (const auto& [path, node] : nodes)  // dereferencing is rare: no second map to keep up to date
    if (node.token == token && node.kind != ObjectKind::None) return path;
  return {};
}

const Node* Tree::find(const std::string& path) const {
  if (path == "/") {
    auto it = nodes.find("/");
    return it == nodes.end() ? nullptr : &it->second;
  }
  const std::string r = resolve(path);
  auto it = r.empty() ? nodes.end() : nodes.find(r);
  return it == nodes.end() ? nullptr : &it->second;
}

Json extend_op(const std::string& path, const Dims& shape) {
  return Json{{"op", "extend"}, {"path", path}, {"shape", shape}};
}

Json resize_op(const std::string& path, const Dims& shape, uint64_t epoch, uint32_t round) {
  return Json{{"op", "resize"}, {"path", path}, {"shape", shape}, {"epoch", epoch}, {"round", round}};
}

bool Tree::clipped(int id, const logfmt::BlockEntry& e, Dims& limit) const {
  if (clips.empty()) return false;
  auto it = clips.find(id);
  if (it == clips.end()) return false;
  bool any = false;
  for (const Clip& c : it->second) {
    if (std::tie(e.epoch, e.round) >= std::tie(c.epoch, c.round)) continue;  // written after the shrink
    if (!any) limit = c.shape, any = true;
    else for (std::size_t d = 0; d < limit.size(); ++d) limit[d] = std::min(limit[d], c.shape[d]);
  }
  if (!any) return false;
  for (std::size_t d = 0; d < limit.size(); ++d)
    if (e.start[d] + e.count[d] > limit[d]) return true;
  return false;  // the block lies inside every later shape
}

Json attribute_op(const std::string& object, const std::string& name, const AttributeValue& value) {
  return Json{{"op", "attr"}, {"object", object}, {"name", name}, {"value", attribute_to_json(value)}};
}

Json attribute_remove_op(const std::string& object, const std::string& name) {
  return Json{{"op", "attr_remove"}, {"object", object}, {"name", name}};
}

Json attribute_rename_op(const std::string& object, const std::string& from, const std::string& to) {
  return Json{{"op", "attr_rename"}, {"object", object}, {"from", from}, {"to", to}};
}

Json front_op(uint64_t epoch, uint64_t size, uint32_t crc) {
  return Json{{"op", "front"}, {"epoch", epoch}, {"size", size}, {"crc", crc}};
}

int apply_op(Tree& tree, const Json& op, const std::string& where) {
  const std::string kind = op.at("op");
  auto bad = [&](const std::string& why) {
    throw CorruptionError(where + ": metadata operation '" + kind + "' " + why);
  };
  auto node_of = [&](const std::string& p, ObjectKind want) -> Node& {
    auto it = tree.nodes.find(p);
    if (it == tree.nodes.end() || (want != ObjectKind::None && it->second.kind != want))
      bad("names '" + p + "', which is not an existing " + (want == ObjectKind::Dataset ? "dataset" : "object"));
    return it->second;
  };
  // A byte size that fits 62 bits: no product of a block's counts can wrap.
  auto fits = [](uint64_t bytes, uint64_t extent) { return !extent || bytes <= (uint64_t(1) << 62) / extent; };
  int created = -1;
  if (kind == "group" && op.at("path") == "/") {
    tree.nodes["/"].kind = ObjectKind::Group;
    tree.nodes["/"].token = kRootToken;
  } else if (kind == "group" || kind == "dataset" || kind == "type") {
    std::string p = op.at("path");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p))
      bad("has a bad or existing path '" + p + "'");
    Node& parent = node_of(parent_of(p), ObjectKind::Group);
    Node n;
    n.kind = kind == "group" ? ObjectKind::Group : kind == "type" ? ObjectKind::Datatype : ObjectKind::Dataset;
    n.token = tree.next_token++;
    if (kind == "type") n.type = datatype_from_name(op.at("dtype").get<std::string>());
    if (kind == "dataset") {
      DatasetInfo info;
      info.dtype = datatype_from_name(op.at("dtype").get<std::string>());
      info.shape = op.at("shape").get<Dims>();
      info.max_shape = op.at("max_shape").get<Dims>();
      info.layout = op.at("layout") == "chunked" ? Layout::Chunked : Layout::Contiguous;
      info.chunks = op.at("chunks").get<Dims>();
      if (op.contains("fill")) {
        const auto& fill = op.at("fill").get_binary();
        if (fill.size() != datatype_size(info.dtype)) bad("of '" + p + "' has a fill value of the wrong size");
        info.fill.assign(fill.begin(), fill.end());
      }
      if (info.shape.empty() || info.shape.size() > kMaxRank || info.max_shape.size() != info.shape.size() ||
          (!info.chunks.empty() && info.chunks.size() != info.shape.size()))
        bad("of '" + p + "' has inconsistent ranks");
      uint64_t bytes = datatype_size(info.dtype);
      for (std::size_t d = 0; d < info.shape.size(); ++d) {
        if (info.shape[d] > info.max_shape[d] || !fits(bytes, info.shape[d]))
          bad("of '" + p + "' has an impossible shape " + dims_to_string(info.shape));
        bytes *= std::max<uint64_t>(info.shape[d], 1);
      }
      if (held_in_metadata(info.dtype)) {
        if (!info.fill.empty()) bad("of '" + p + "' has a fill value, which a " + info.dtype.name() + " dataset cannot have");
        ++tree.held_datasets;
      }
      created = n.dataset = int(tree.datasets.size());
      tree.datasets.push_back(info);
      tree.dataset_paths.push_back(p);
    }
    parent.children.insert(name_of(p));
    parent.order.push_back(name_of(p));
    tree.nodes[p] = std::move(n);
  } else if (kind == "softlink") {
    std::string p = op.at("path"), target = op.at("target");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p) || target.empty() || target[0] != '/')
      bad("has a bad or existing path '" + p + "' or target '" + target + "'");
    Node& parent = node_of(parent_of(p), ObjectKind::Group);
    parent.children.insert(name_of(p));
    parent.order.push_back(name_of(p));
    tree.nodes[p].link = target;
  } else if (kind == "unlink" || kind == "move") {
    const std::string from = op.at(kind == "unlink" ? "path" : "from");
    const std::string to = kind == "move" ? op.at("to").get<std::string>() : std::string();
    if (from == "/" || !tree.nodes.count(from)) bad("names '" + from + "', which does not exist");
    if (kind == "move" && (to.size() < 2 || to[0] != '/' || tree.nodes.count(to) ||
                           to.compare(0, from.size() + 1, from + "/") == 0))
      bad("moves '" + from + "' to a bad or existing path '" + to + "'");
    Node* new_parent = kind == "move" ? &node_of(parent_of(to), ObjectKind::Group) : nullptr;
    Node& old_parent = node_of(parent_of(from), ObjectKind::Group);
    old_parent.children.erase(name_of(from));
    old_parent.order.erase(std::remove(old_parent.order.begin(), old_parent.order.end(), name_of(from)),
                           old_parent.order.end());
    if (new_parent) new_parent->children.insert(name_of(to)), new_parent->order.push_back(name_of(to));
    // The node and everything below it: gone, or renamed. A dataset's id stays
    // (its blocks in the index are simply no longer reachable when it goes).
    std::vector<std::string> below;
    for (const auto& [path, _] : tree.nodes)  // ("/a-b" sorts between "/a" and "/a/c": no early stop)
      if (path == from || path.compare(0, from.size() + 1, from + "/") == 0) below.push_back(path);
    for (const auto& old_path : below) {
      auto handle = tree.nodes.extract(old_path);
      if (kind == "unlink") {
        if (handle.mapped().dataset >= 0) tree.dataset_paths[std::size_t(handle.mapped().dataset)].clear();
        continue;
      }
      const std::string new_path = to + old_path.substr(from.size());
      if (handle.mapped().dataset >= 0) tree.dataset_paths[std::size_t(handle.mapped().dataset)] = new_path;
      handle.key() = new_path;
      tree.nodes.insert(std::move(handle));
    }
  } else if (kind == "extend" || kind == "resize") {
    // extend only grows; resize (version 6) may shrink, as of a moment in the log.
    const std::string p = op.at("path");
    const int id = node_of(p, ObjectKind::Dataset).dataset;
    DatasetInfo& info = tree.datasets.at(std::size_t(id));
    Dims shape = op.at("shape").get<Dims>();
    const bool may_shrink = kind == "resize";
    bool ok = shape.size() == info.shape.size();
    uint64_t bytes = datatype_size(info.dtype);
    for (std::size_t d = 0; ok && d < shape.size(); ++d) {
      ok = (may_shrink || shape[d] >= info.shape[d]) && shape[d] <= info.max_shape[d] && fits(bytes, shape[d]);
      bytes *= std::max<uint64_t>(shape[d], 1);
    }
    if (!ok)
      bad("of '" + p + "' to " + dims_to_string(shape) + " is not a " + (may_shrink ? "shape within " : "growth of ") +
          dims_to_string(may_shrink ? info.max_shape : info.shape));
    if (may_shrink) {
      Clip clip{op.at("epoch").get<uint64_t>(), op.at("round").get<uint32_t>(), shape};
      if (clip.epoch > UINT32_MAX || clip.round > logfmt::kMaxRound) bad("of '" + p + "' has an impossible epoch or round");
      Dims& widest = tree.widest[id];
      if (widest.empty()) widest = info.shape;
      for (std::size_t d = 0; d < shape.size(); ++d) widest[d] = std::max(widest[d], info.shape[d]);
      tree.clips[id].push_back(std::move(clip));
    }
    const Dims old_shape = std::exchange(info.shape, std::move(shape));
    regrid_held(tree, id, old_shape);
  } else if (kind == "elements") {
    apply_elements(tree, node_of(op.at("path").get<std::string>(), ObjectKind::Dataset).dataset, op, bad);
  } else if (kind == "front") {
    tree.fronts.push_back(
        {op.at("epoch").get<uint64_t>(), op.at("size").get<uint64_t>(), op.at("crc").get<uint32_t>()});
  } else if (kind == "attr") {
    Node& n = node_of(op.at("object").get<std::string>(), ObjectKind::None);
    const std::string name = op.at("name");
    // Overwriting makes it the newest, as replacing an attribute does in HDF5.
    n.attr_order.erase(std::remove(n.attr_order.begin(), n.attr_order.end(), name), n.attr_order.end());
    n.attr_order.push_back(name);
    n.attrs[name] = attribute_from_json(op.at("value"));
  } else if (kind == "attr_remove" || kind == "attr_rename") {
    const std::string object = op.at("object");
    Node& n = node_of(object, ObjectKind::None);
    const std::string from = op.at(kind == "attr_remove" ? "name" : "from");
    auto it = n.attrs.find(from);
    if (it == n.attrs.end()) bad("names attribute '" + from + "' of '" + object + "', which does not exist");
    auto place = std::find(n.attr_order.begin(), n.attr_order.end(), from);
    if (kind == "attr_remove") {
      n.attrs.erase(it);
      n.attr_order.erase(place);
    } else {
      const std::string to = op.at("to");
      if (to.empty() || n.attrs.count(to)) bad("renames attribute '" + from + "' of '" + object + "' to a bad or existing name '" + to + "'");
      auto node = n.attrs.extract(it);
      node.key() = to;
      n.attrs.insert(std::move(node));
      *place = to;
    }
  } else {
    bad("is unknown");
  }
  return created;
}

std::vector<std::uint8_t> encode_ops(const Json& ops) { return Json::to_cbor(ops); }

bool decode_ops(const unsigned char* p, std::size_t n, Json& ops) {
  DepthLimitedParser sax(ops, /*allow_exceptions=*/true);
  return Json::sax_parse(p, p + n, &sax, nlohmann::detail::input_format_t::cbor) && ops.is_array();
}

}  // namespace h5loom::logengine
