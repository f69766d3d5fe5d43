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
    case K::Empty: return {{"kind", "empty"}, {"dtype", datatype_name(v.dtype())}};
    default: {
      auto* p = static_cast<const unsigned char*>(v.data());
      std::vector<std::uint8_t> bytes(p, p + v.byte_size());
      Json j{{"kind", v.kind() == K::Scalar ? "scalar" : "array"},
             {"dtype", datatype_name(v.dtype())},
             {"data", Json::binary(std::move(bytes))}};
      if (v.dtype().has_variable_length_parts()) j["count"] = v.size();  // (packed: the bytes do not say)
      return j;
    }
  }
}

AttributeValue attribute_from_json(const Json& j) {
  std::string kind = j.at("kind");
  if (kind == "string") return AttributeValue(j.at("text").get<std::string>());
  if (kind == "strings") return AttributeValue(j.at("strings").get<std::vector<std::string>>());
  Datatype dt = datatype_from_name(j.at("dtype").get<std::string>());
  if (kind == "empty") return AttributeValue::empty(dt);
  const auto& bytes = j.at("data").get_binary();
  const std::size_t count =
      dt.has_variable_length_parts() ? j.at("count").get<std::size_t>() : bytes.size() / datatype_size(dt);
  return AttributeValue::from_stored(kind == "scalar" ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array, dt,
                                     count, bytes.data(), bytes.size());
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

bool at_or_below(const std::string& path, const std::string& base) {
  return path == base || base == "/" || path.compare(0, base.size() + 1, base + "/") == 0;
}

// A byte size that fits 62 bits: no product of a block's counts can wrap.
bool fits_62_bits(uint64_t bytes, uint64_t extent) { return !extent || bytes <= (uint64_t(1) << 62) / extent; }

// Whether `token` names a named datatype of type `dtype` (what a dataset or attribute shares, version 11).
bool is_named_type_of(const Tree& tree, uint64_t token, const Datatype& dtype) {
  auto at = tree.object_paths.find(token);
  const Node* type = at == tree.object_paths.end() ? nullptr : &tree.nodes.at(at->second);
  return type && type->kind == ObjectKind::Datatype && type->type == dtype;
}

// The paths of the nodes at or below `from`, parents before their members
// (a path sorts after its prefixes; those below `from` sort together).
std::vector<std::string> subtree(const Tree& t, const std::string& from) {
  std::vector<std::string> out;
  if (t.nodes.count(from)) out.push_back(from);
  const std::string prefix = from == "/" ? "/" : from + "/";
  for (auto it = t.nodes.lower_bound(prefix); it != t.nodes.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    if (it->first != from) out.push_back(it->first);
  return out;
}

// A name joins or leaves its group's members (the group exists).
void attach(Tree& t, const std::string& p) {
  Node& parent = t.nodes.at(parent_of(p));
  parent.children.insert(name_of(p));
  parent.order.push_back(name_of(p));
  parent.creation_order[name_of(p)] = parent.next_creation_order++;
}
void detach(Tree& t, const std::string& p) {
  auto it = t.nodes.find(parent_of(p));
  if (it == t.nodes.end() || !it->second.children.erase(name_of(p))) return;
  Node& parent = it->second;
  parent.order.erase(std::remove(parent.order.begin(), parent.order.end(), name_of(p)), parent.order.end());
  parent.creation_order.erase(name_of(p));
  if (parent.children.empty()) parent.next_creation_order = 0;  // as HDF5 does
}

// The node at `from` and everything below it get the paths at `to` (the
// caller keeps the groups' member names). Ids and tokens stay.
void rename_nodes(Tree& t, const std::string& from, const std::string& to) {
  for (const auto& old_path : subtree(t, from)) {
    auto handle = t.nodes.extract(old_path);
    const std::string new_path = to + old_path.substr(from.size());
    Node& n = handle.mapped();
    if (n.dataset >= 0) t.dataset_paths[std::size_t(n.dataset)] = new_path;
    if (n.kind != ObjectKind::None) t.object_paths[n.token] = new_path;
    handle.key() = new_path;
    t.nodes.insert(std::move(handle));
  }
}

// A dataset or attribute sharing the named datatype `token` goes (or shares it no more).
void release_type_use(Tree& t, uint64_t token) {
  auto it = t.type_users.find(token);
  if (it != t.type_users.end() && --it->second == 0) t.type_users.erase(it);
}

void drop_hard_link(Tree& t, uint64_t token) {
  auto it = t.hard_links.find(token);
  if (it != t.hard_links.end() && --it->second == 0) t.hard_links.erase(it);
}

// Removes the link `from`. A soft or hard link just goes. An object goes
// with all below it - but an object there that a hard link outside `from`
// still names moves to that link (the first by path) with all below it, as
// an object lives while a link names it; its old name becomes a hard link
// (gone with its group, unless that group is kept too). Moving one can bring
// out hard links that keep others: the search starts again until none moves.
void remove_link(Tree& t, const std::string& from) {
  detach(t, from);
  if (uint64_t token = t.nodes.at(from).hard) {
    drop_hard_link(t, token);
    t.nodes.erase(from);
    return;
  }
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& p : subtree(t, from)) {
      const Node& n = t.nodes.at(p);
      if (n.kind == ObjectKind::None || !t.hard_links.count(n.token)) continue;
      const uint64_t token = n.token;
      std::string heir;
      for (const auto& [q, link] : t.nodes)
        if (link.hard == token && !at_or_below(q, from)) {
          heir = q;
          break;
        }
      if (heir.empty()) continue;  // named only from inside what goes: it goes too
      t.nodes.erase(heir);
      rename_nodes(t, p, heir);
      // Its old name, in a group that goes - or moves out later, still holding it - becomes a hard link.
      if (p != from) t.nodes[p].hard = token;
      else drop_hard_link(t, token);
      moved = true;
      break;
    }
  }
  for (const auto& p : subtree(t, from)) {
    auto handle = t.nodes.extract(p);
    const Node& n = handle.mapped();
    if (n.hard) {
      drop_hard_link(t, n.hard);
    } else if (n.kind != ObjectKind::None) {
      t.object_paths.erase(n.token);
      t.hard_links.erase(n.token);
      t.references.erase(n.token);
      for (const auto& [name, type] : n.attr_named_types) release_type_use(t, type);
      // A dataset's id stays: its blocks in the index are no longer reachable.
      if (n.dataset >= 0) {
        t.dataset_paths[std::size_t(n.dataset)].clear();
        if (auto shared = t.dataset_named_types.find(n.dataset); shared != t.dataset_named_types.end()) {
          release_type_use(t, shared->second);
          t.dataset_named_types.erase(shared);
        }
      }
    }
  }
}

}  // namespace

Json group_op(const std::string& path) { return Json{{"op", "group"}, {"path", path}}; }

Json dataset_op(const std::string& path, Datatype dtype, const Dims& shape, const Dims& max_shape, const Dims& chunks,
                const std::vector<unsigned char>& fill, bool null_space, const std::vector<Filter>& filters) {
  // Member by member: an initializer list would copy every value once more
  // (its elements are const), and a file of many datasets makes many of these.
  Json op = Json::object();
  op["op"] = "dataset";
  op["path"] = path;
  op["dtype"] = datatype_name(dtype);
  op["shape"] = shape;
  op["max_shape"] = max_shape;
  op["layout"] = chunks.empty() ? "contiguous" : "chunked";
  op["chunks"] = chunks;
  if (!fill.empty()) op["fill"] = Json::binary(std::vector<std::uint8_t>(fill.begin(), fill.end()));
  if (null_space) op["null"] = true;
  for (const auto& f : filters)
    op["filters"].push_back(Json{{"id", f.id}, {"params", f.params}, {"optional", f.optional}, {"name", f.name}});
  return op;
}

Json type_op(const std::string& path, const Datatype& dtype) {
  return Json{{"op", "type"}, {"path", path}, {"dtype", datatype_name(dtype)}};
}

Json softlink_op(const std::string& path, const std::string& target) {
  return Json{{"op", "softlink"}, {"path", path}, {"target", target}};
}
Json hardlink_op(const std::string& path, uint64_t token) {
  return Json{{"op", "hardlink"}, {"path", path}, {"target", token}};
}
Json extlink_op(const std::string& path, const ExternalLink& link) {
  return Json{{"op", "extlink"}, {"path", path}, {"file", link.file}, {"target", link.path}};
}
Json udlink_op(const std::string& path, const UserDefinedLink& link) {
  return Json{{"op", "udlink"},
              {"path", path},
              {"class", link.link_class},
              {"value", Json::binary(std::vector<std::uint8_t>(link.value->begin(), link.value->end()))}};
}
Json unlink_op(const std::string& path) { return Json{{"op", "unlink"}, {"path", path}}; }
Json move_op(const std::string& from, const std::string& to) {
  return Json{{"op", "move"}, {"from", from}, {"to", to}};
}

Tree::Tree() {
  nodes["/"].kind = ObjectKind::Group;
  nodes["/"].token = kRootToken;
  object_paths[kRootToken] = "/";
}

std::string Tree::resolve(const std::string& path) const {
  std::string p = path;
  // Each hard link followed replaces a name of the path by a path of object
  // nodes, which hold no links: that cannot go on for longer than the path.
  for (int soft = 0, hard = 0; soft <= 16 && hard <= 4096;) {
    // The first prefix of p that is a link, if any.
    bool followed = false;
    for (std::size_t end = p.find('/', 1);; end = p.find('/', end + 1)) {
      const std::string prefix = p.substr(0, end);
      auto it = nodes.find(prefix);
      if (it == nodes.end()) return {};
      const Node& n = it->second;
      if (!n.external.file.empty() || n.user_defined.link_class) return {};  // never followed: nothing here
      if (!n.link.empty() || n.hard) {
        auto object = n.hard ? object_paths.find(n.hard) : object_paths.end();
        if (n.hard && object == object_paths.end()) return {};  // (never: an object lives while a hard link names it)
        const std::string& target = n.hard ? object->second : n.link;
        p = (target == "/" ? std::string() : target) + (end == std::string::npos ? "" : p.substr(end));
        if (p.empty()) p = "/";
        ++(n.hard ? hard : soft), followed = true;
        break;
      }
      if (end == std::string::npos) break;
    }
    if (!followed) return p;
  }
  return {};  // a loop of links
}

std::string Tree::path_of_token(uint64_t token) const {
  auto it = object_paths.find(token);
  return it == object_paths.end() ? std::string() : it->second;
}

uint32_t Tree::link_count(uint64_t token) const {
  if (!object_paths.count(token)) return 0;
  auto it = hard_links.find(token);
  auto held = references.find(token);
  auto users = type_users.find(token);
  return 1 + (it == hard_links.end() ? 0 : it->second) + (held == references.end() ? 0 : held->second) +
         (users == type_users.end() ? 0 : users->second);
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

Json userblock_op(uint64_t size) { return Json{{"op", "userblock"}, {"size", size}}; }
Json refcount_op(uint64_t token, uint32_t count) { return Json{{"op", "refcount"}, {"target", token}, {"count", count}}; }

int add_dataset(Tree& tree, const std::string& p, DatasetInfo info, std::optional<uint64_t> type_token,
                const std::string& where) {
  auto bad = [&](const std::string& why) {
    throw CorruptionError(where + ": metadata operation 'dataset' " + why);
  };
  if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p)) bad("has a bad or existing path '" + p + "'");
  if (auto parent = tree.nodes.find(parent_of(p)); parent == tree.nodes.end() || parent->second.kind != ObjectKind::Group)
    bad("names '" + parent_of(p) + "', which is not an existing object");
  if (!info.fill.empty() && info.fill.size() != datatype_size(info.dtype))
    bad("of '" + p + "' has a fill value of the wrong size");
  if (!info.filters.empty() && info.chunks.empty()) bad("of '" + p + "' has filters and no chunks");
  if (info.null_space && (info.shape != Dims{0} || info.max_shape != Dims{0} || !info.chunks.empty()))
    bad("of '" + p + "' has a null dataspace and the shape " + dims_to_string(info.shape));
  if (info.shape.empty() || info.shape.size() > kMaxRank || info.max_shape.size() != info.shape.size() ||
      (!info.chunks.empty() && info.chunks.size() != info.shape.size()))
    bad("of '" + p + "' has inconsistent ranks");
  uint64_t bytes = datatype_size(info.dtype);
  for (std::size_t d = 0; d < info.shape.size(); ++d) {
    if (info.shape[d] > info.max_shape[d] || !fits_62_bits(bytes, info.shape[d]))
      bad("of '" + p + "' has an impossible shape " + dims_to_string(info.shape));
    bytes *= std::max<uint64_t>(info.shape[d], 1);
  }
  const bool held = held_in_metadata(info.dtype);
  if (held && !info.fill.empty())
    bad("of '" + p + "' has a fill value, which a " + info.dtype.name() + " dataset cannot have");
  if (type_token && !is_named_type_of(tree, *type_token, info.dtype))
    bad("has dataset '" + p + "' share object " + std::to_string(*type_token) +
        ", which is not a named datatype of its type");
  Node n;
  n.kind = ObjectKind::Dataset;
  n.token = tree.next_token++;
  n.dataset = int(tree.datasets.size());
  if (held) ++tree.held_datasets;
  tree.datasets.push_back(std::move(info));
  tree.dataset_paths.push_back(p);
  if (type_token) {
    tree.dataset_named_types[n.dataset] = *type_token;
    ++tree.type_users[*type_token];
  }
  attach(tree, p);
  tree.object_paths[n.token] = p;
  const int id = n.dataset;
  tree.nodes[p] = std::move(n);
  return id;
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
  // The token of a named datatype that `what`, of type `dtype`, shares (version 11).
  auto shared_type = [&](uint64_t token, const Datatype& dtype, const std::string& what) {
    if (!is_named_type_of(tree, token, dtype))
      bad("has " + what + " share object " + std::to_string(token) + ", which is not a named datatype of its type");
    return token;
  };
  int created = -1;
  if (kind == "group" && op.at("path") == "/") {
    tree.nodes["/"].kind = ObjectKind::Group;
    tree.nodes["/"].token = kRootToken;
    tree.object_paths[kRootToken] = "/";
  } else if (kind == "dataset") {
    DatasetInfo info;
    info.dtype = datatype_from_name(op.at("dtype").get_ref<const std::string&>());
    info.shape = op.at("shape").get<Dims>();
    info.max_shape = op.at("max_shape").get<Dims>();
    info.layout = op.at("layout") == "chunked" ? Layout::Chunked : Layout::Contiguous;
    info.chunks = op.at("chunks").get<Dims>();
    if (op.contains("fill")) {  // (present: one element, never empty)
      const auto& fill = op.at("fill").get_binary();
      if (fill.size() != datatype_size(info.dtype))
        bad("of '" + op.at("path").get<std::string>() + "' has a fill value of the wrong size");
      info.fill.assign(fill.begin(), fill.end());
    }
    info.null_space = op.contains("null") && op.at("null").get<bool>();
    if (op.contains("filters")) {  // (present: at least one, with chunks)
      if (info.chunks.empty()) bad("of '" + op.at("path").get<std::string>() + "' has filters and no chunks");
      for (const auto& j : op.at("filters")) {
        Filter flt;
        flt.id = j.at("id").get<uint32_t>();
        flt.params = j.at("params").get<std::vector<uint32_t>>();
        flt.optional = j.at("optional").get<bool>();
        flt.name = j.at("name").get<std::string>();
        info.filters.push_back(std::move(flt));
      }
    }
    std::optional<uint64_t> type_token;
    if (op.contains("type_token")) type_token = op.at("type_token").get<uint64_t>();
    created = add_dataset(tree, op.at("path").get_ref<const std::string&>(), std::move(info), type_token, where);
  } else if (kind == "group" || kind == "type") {
    std::string p = op.at("path");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p))
      bad("has a bad or existing path '" + p + "'");
    node_of(parent_of(p), ObjectKind::Group);
    Node n;
    n.kind = kind == "group" ? ObjectKind::Group : ObjectKind::Datatype;
    n.token = tree.next_token++;
    if (kind == "type") n.type = datatype_from_name(op.at("dtype").get<std::string>());
    attach(tree, p);
    tree.object_paths[n.token] = p;
    tree.nodes[p] = std::move(n);
  } else if (kind == "softlink") {
    std::string p = op.at("path"), target = op.at("target");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p) || target.empty() || target[0] != '/')
      bad("has a bad or existing path '" + p + "' or target '" + target + "'");
    node_of(parent_of(p), ObjectKind::Group);
    attach(tree, p);
    tree.nodes[p].link = target;
  } else if (kind == "hardlink") {
    const std::string p = op.at("path");
    const uint64_t token = op.at("target");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p))
      bad("has a bad or existing path '" + p + "'");
    node_of(parent_of(p), ObjectKind::Group);
    if (!tree.object_paths.count(token)) bad("of '" + p + "' names object " + std::to_string(token) + ", which does not exist");
    attach(tree, p);
    tree.nodes[p].hard = token;
    ++tree.hard_links[token];
  } else if (kind == "extlink") {
    const std::string p = op.at("path");
    ExternalLink link{op.at("file").get<std::string>(), op.at("target").get<std::string>()};
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p) || link.file.empty() ||
        link.path.empty() || link.path[0] != '/')
      bad("has a bad or existing path '" + p + "', or a bad file '" + link.file + "' or target '" + link.path + "'");
    node_of(parent_of(p), ObjectKind::Group);
    attach(tree, p);
    tree.nodes[p].external = std::move(link);
  } else if (kind == "udlink") {
    const std::string p = op.at("path");
    const int64_t link_class = op.at("class").get<int64_t>();
    const Json& value = op.at("value");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || tree.nodes.count(p) ||
        link_class < kUserDefinedLinkClassMin || link_class > kUserDefinedLinkClassMax || !value.is_binary())
      bad("has a bad or existing path '" + p + "', a class " + std::to_string(link_class) +
          " that is not a user-defined one, or a value that is not bytes");
    node_of(parent_of(p), ObjectKind::Group);
    attach(tree, p);
    const auto& bytes = value.get_binary();
    UserDefinedLink link{int(link_class), std::string(bytes.begin(), bytes.end())};
    if (const std::string why = unsafe_user_defined_link(link); !why.empty()) bad("of '" + p + "': " + why);
    tree.nodes[p].user_defined = std::move(link);
  } else if (kind == "unlink" || kind == "move") {
    const std::string from = op.at(kind == "unlink" ? "path" : "from");
    const std::string to = kind == "move" ? op.at("to").get<std::string>() : std::string();
    if (from == "/" || !tree.nodes.count(from)) bad("names '" + from + "', which does not exist");
    if (kind == "unlink") {
      remove_link(tree, from);
    } else {
      if (to.size() < 2 || to[0] != '/' || tree.nodes.count(to) || at_or_below(to, from))
        bad("moves '" + from + "' to a bad or existing path '" + to + "'");
      node_of(parent_of(to), ObjectKind::Group);
      detach(tree, from);
      attach(tree, to);
      rename_nodes(tree, from, to);
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
      ok = (may_shrink || shape[d] >= info.shape[d]) && shape[d] <= info.max_shape[d] && fits_62_bits(bytes, shape[d]);
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
  } else if (kind == "refcount") {
    const uint64_t token = op.at("target");
    const uint32_t count = op.at("count");
    if (tree.path_of_token(token).empty()) bad("names token " + std::to_string(token) + ", which no object has");
    if (count) tree.references[token] = count;
    else tree.references.erase(token);
  } else if (kind == "userblock") {
    const uint64_t size = op.at("size");
    if (size < 512 || (size & (size - 1)) != 0 || size > (uint64_t(1) << 40))
      bad("has an impossible size " + std::to_string(size));
    tree.userblock = size;
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
    if (auto shared = n.attr_named_types.find(name); shared != n.attr_named_types.end()) {
      release_type_use(tree, shared->second);
      n.attr_named_types.erase(shared);
    }
    if (op.contains("type_token")) {
      const uint64_t type = shared_type(op.at("type_token").get<uint64_t>(), n.attrs[name].dtype(),
                                        "attribute '" + name + "'");
      n.attr_named_types[name] = type;
      ++tree.type_users[type];
    }
  } else if (kind == "attr_remove" || kind == "attr_rename") {
    const std::string object = op.at("object");
    Node& n = node_of(object, ObjectKind::None);
    const std::string from = op.at(kind == "attr_remove" ? "name" : "from");
    auto it = n.attrs.find(from);
    if (it == n.attrs.end()) bad("names attribute '" + from + "' of '" + object + "', which does not exist");
    auto place = std::find(n.attr_order.begin(), n.attr_order.end(), from);
    auto shared = n.attr_named_types.find(from);
    if (kind == "attr_remove") {
      n.attrs.erase(it);
      n.attr_order.erase(place);
      if (shared != n.attr_named_types.end()) {
        release_type_use(tree, shared->second);
        n.attr_named_types.erase(shared);
      }
    } else {
      const std::string to = op.at("to");
      if (to.empty() || n.attrs.count(to)) bad("renames attribute '" + from + "' of '" + object + "' to a bad or existing name '" + to + "'");
      auto node = n.attrs.extract(it);
      node.key() = to;
      n.attrs.insert(std::move(node));
      *place = to;
      if (shared != n.attr_named_types.end()) {
        const uint64_t type = shared->second;
        n.attr_named_types.erase(shared);
        n.attr_named_types[to] = type;
      }
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
