// The log's metadata: the tree of groups, datasets and attributes, and the
// metadata operations that build it - made by the collective calls of a
// writer, kept as JSON, stored as one CBOR array per index record
// (docs/formats/log.md, "Metadata operations"), and applied again, checked,
// when a log is opened.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engines/log/format.hpp"
#include "h5loom/types.hpp"

namespace h5loom::logengine {

using Json = nlohmann::json;

// The token of the root group; every other group and dataset gets the next
// one when it is created (in the order of the metadata operations, so that
// replaying them gives the same tokens): object references hold them.
constexpr uint64_t kRootToken = 1;

// A node is an object (a group, a dataset, a named datatype) at its own
// path, or a link: a soft link (`link`), a hard link (`hard`), a second name
// for an object whose node is elsewhere, or an external link (`external`) to
// an object of another file, never followed (both version 8), or a
// user-defined link (`user_defined`, version 11), never followed either. A
// link's kind is None.
struct Node {
  ObjectKind kind = ObjectKind::None;  // None: a soft or hard link
  uint64_t token = 0;                  // groups, datasets and named datatypes: their object reference token
  std::map<std::string, AttributeValue> attrs;
  std::map<std::string, uint64_t> attr_named_types;  // by attribute: the token of the named datatype it shares (version 11)
  std::vector<std::string> attr_order;  // the same names, in creation order
  std::set<std::string> children;   // for groups: by name
  std::vector<std::string> order;   // for groups: the same names, in creation order
  std::map<std::string, int64_t> creation_order;  // for groups: HDF5's creation order value of each name
  int64_t next_creation_order = 0;  // for groups: the next one (0 again when the group is empty)
  int dataset = -1;                 // for datasets: the id
  std::string link;                 // for soft links: the target (absolute; need not exist)
  uint64_t hard = 0;                // for hard links: the token of the object they name (it exists)
  ExternalLink external;            // for external links: the file and the path there (file not empty)
  UserDefinedLink user_defined;     // for user-defined links: the class (not 0) and the value (version 11)
  Datatype type;                    // for named datatypes: the datatype
};

// The size and CRC32C of a front file, recorded in the epoch it was built
// with (in its commit record, CRC only, since format version 12; a `front`
// operation before).
struct FrontSum {
  uint64_t epoch = 0, size = 0;  // size 0: not recorded (version 12 commit records carry only the CRC)
  uint32_t crc = 0;
  // Whether the file whose checksum is `file` is the front file recorded here.
  bool matches(const FrontSum& file) const { return crc == file.crc && (size == 0 || size == file.size); }
};

// A shrink of a dataset (a `resize` operation, version 6): blocks written
// before it - block entries whose (epoch, round) is below this one's - keep
// only their elements inside `shape`, even after the dataset grows again.
struct Clip {
  uint64_t epoch = 0;
  uint32_t round = 0;
  Dims shape;
};

// The elements of a dataset the log keeps in its metadata instead of its
// data log (held_values.hpp): variable-length strings, or fixed-size
// elements holding references - only those written, by row-major index (a
// huge dataset, or a crafted one, costs memory only for what was written).
struct HeldValues {
  std::map<uint64_t, std::string> strings;                 // variable-length strings
  std::map<uint64_t, std::vector<unsigned char>> elements;  // other types: one element each (packed if it has variable-length parts)
};

struct Tree {
  // Every object is a node at one path, its own; its other names are hard
  // links. When that path goes while a hard link outside it remains, the
  // object (with all below it) moves to the first such link, by path order.
  std::map<std::string, Node> nodes;       // by absolute path
  std::map<uint64_t, std::string> object_paths;  // by token: the path of each object's node
  std::map<uint64_t, uint32_t> hard_links;  // by token: how many hard links name the object (besides its path)
  std::map<uint64_t, uint32_t> references;  // by token: references held on the object besides its names (refcount)
  std::map<int, uint64_t> dataset_named_types;  // by dataset id: the token of the named datatype it shares (version 11)
  std::map<uint64_t, uint32_t> type_users;  // by token of a named datatype: the datasets and attributes sharing it
  std::vector<std::string> dataset_paths;  // by dataset id
  std::vector<DatasetInfo> datasets;       // by dataset id
  std::vector<FrontSum> fronts;            // every front file the log recorded, oldest first
  std::map<int, HeldValues> held;          // by dataset id, for the datasets the metadata holds
  uint64_t held_datasets = 0;              // how many datasets (ever made) the metadata holds
  uint64_t next_token = kRootToken + 1;
  uint64_t userblock = 0;  // the front file's user block size (a `userblock` operation)
  // By dataset id, for the datasets that shrank: their shrinks, oldest first,
  // and the largest shape each had before (its blocks lie within it).
  std::map<int, std::vector<Clip>> clips;
  std::map<int, Dims> widest;

  Tree();  // with the root group

  // The path of the object with reference token `token`; empty if none has it.
  std::string path_of_token(uint64_t token) const;
  // How many links name the object with token `token` (its path, and its hard
  // links), plus the references held on it: HDF5's reference count.
  uint32_t link_count(uint64_t token) const;

  // `path` with every link on it followed (at most 16 soft links): the path
  // of the object's node; empty if it leads nowhere (or through an external
  // link). Paths without links come back as they are.
  std::string resolve(const std::string& path) const;
  // The node at `path` (links followed), or null.
  const Node* find(const std::string& path) const;
  // The dataset id of an existing dataset's path.
  int dataset_id(const std::string& path) const { return nodes.at(resolve(path)).dataset; }
  // Whether a shrink hides part of block `e` of dataset `id`; then `limit` is
  // the box [0, limit) its elements are kept in (the smallest shape of the
  // shrinks after it, per dimension).
  bool clipped(int id, const logfmt::BlockEntry& e, Dims& limit) const;
};

// The operations, as the format's table has them.
Json group_op(const std::string& path);
Json dataset_op(const std::string& path, Datatype dtype, const Dims& shape, const Dims& max_shape, const Dims& chunks,
                const std::vector<unsigned char>& fill = {}, bool null_space = false,
                const std::vector<Filter>& filters = {});
Json softlink_op(const std::string& path, const std::string& target);
// A hard link `path` to the object with token `token` (version 8).
Json hardlink_op(const std::string& path, uint64_t token);
// An external link `path` to `link.path` of the file `link.file` (version 8).
Json extlink_op(const std::string& path, const ExternalLink& link);
// A user-defined link `path` of class `link.link_class` with the value `link.value` (version 11).
Json udlink_op(const std::string& path, const UserDefinedLink& link);
// A named datatype (version 7).
Json type_op(const std::string& path, const Datatype& dtype);
Json unlink_op(const std::string& path);
Json move_op(const std::string& from, const std::string& to);
Json extend_op(const std::string& path, const Dims& shape);
// A change of shape that shrinks some dimension, at flush round `round` of
// open epoch `epoch`: the writes before it keep only what lies inside `shape`.
Json resize_op(const std::string& path, const Dims& shape, uint64_t epoch, uint32_t round);
Json attribute_op(const std::string& object, const std::string& name, const AttributeValue& value);
Json attribute_remove_op(const std::string& object, const std::string& name);
Json attribute_rename_op(const std::string& object, const std::string& from, const std::string& to);
// The size of the front file's user block, which the application's bytes keep (version 8).
Json userblock_op(uint64_t size);
// `count` references held on the object with token `token` besides its names (version 9).
Json refcount_op(uint64_t token, uint32_t count);
// (The `elements` operation: held_values.hpp.)

// Applies one operation to the tree. Each is checked against the tree as it is
// (the object model checked the calls that made it; a damaged or crafted log
// is refused here with CorruptionError, naming `where`, instead of building an
// impossible tree). Returns the id of the dataset it created, else -1.
int apply_op(Tree& tree, const Json& op, const std::string& where);
// What a `dataset` operation does, from its values: the dataset at path `p`
// (sharing the named datatype `type_token`, if any) joins the tree, with the
// same checks. Returns its id. The engine's own creations come here directly
// (their operation is recorded, not parsed back).
int add_dataset(Tree& tree, const std::string& p, DatasetInfo info, std::optional<uint64_t> type_token,
                const std::string& where);

// The operations of an epoch (a JSON array) as CBOR, and back. Decoding
// refuses nesting deeper than metadata ever is (CorruptionError: the parser
// recurses, and a crafted record must not exhaust the stack); malformed CBOR
// raises the parser's exception; returns false if the bytes hold no array.
std::vector<std::uint8_t> encode_ops(const Json& ops);
bool decode_ops(const unsigned char* p, std::size_t n, Json& ops);

}  // namespace h5loom::logengine
