// Zarr v3 node metadata (each group's and array's zarr.json) and how
// h5loom's object model maps onto it (docs/engines/zarr.md):
//  * groups and datasets are groups and arrays; attributes are zarr.json's
//    "attributes" (numbers, strings and lists of them as JSON);
//  * what Zarr's JSON cannot say - an attribute's exact type (int16 vs int64,
//    scalar vs one-element list), a dataset's maximum shape and the layout the
//    program asked for - goes into the attribute "_h5loom" (kH5loomKey), which
//    other Zarr readers show as one more attribute.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engines/zarr/codecs.hpp"
#include "engines/zarr/sharding.hpp"
#include "h5loom/engine_plugin.hpp"
#include "h5loom/types.hpp"

namespace h5loom::zarr {

constexpr const char* kH5loomKey = "_h5loom";
constexpr int kFormatVersion = 1;  // of what h5loom keeps under kH5loomKey (docs/formats/zarr.md)

struct ArrayMeta {
  Datatype dtype = Datatype::Float64;
  Dims shape, max_shape;  // max_shape: kUnlimited where a dimension may grow without bound
  Dims chunk_shape;       // the stored chunks (zarr's regular chunk grid): shards, if sharded
  Layout layout = Layout::Chunked;  // what the program asked for (contiguous datasets are chunked too)
  std::vector<unsigned char> fill;  // one element; empty: zero
  Codecs codecs;      // of each chunk (each inner chunk, if sharded)
  // The HDF5 filters the program asked for (DatasetSpec::filters), kept as
  // given; the codecs do what they do (compression_for_filters).
  std::vector<Filter> filters;
  // Zarr's dimension_names ("" for a null one); empty: the array has none.
  std::vector<std::string> dim_names;
  Sharding sharding;  // inner chunks, if the stored chunks are shards
  // Why h5loom cannot read or write this array's elements (a data type or
  // codec it does not know); empty if it can. Raised when the data is used.
  std::string unsupported;

  uint64_t chunk_bytes() const { return product(chunk_shape) * datatype_size(dtype); }
  // `n` elements of the fill value (zero if none was given) at `out`.
  void fill_elements(unsigned char* out, uint64_t n) const;
  // The chunks the program sees: the inner ones if sharded.
  const Dims& logical_chunks() const { return sharding.on() ? sharding.inner : chunk_shape; }
  // A stored chunk (a shard, if sharded) from its dense elements in `bytes`, in place.
  void encode_chunk(std::vector<unsigned char>& bytes) const;
  // A stored chunk's dense elements into `raw` (chunk_bytes()); CorruptionError naming `what`.
  void decode_chunk(const std::vector<unsigned char>& stored, unsigned char* raw, const std::string& what) const;
};

struct Node {
  ObjectKind kind = ObjectKind::Group;
  std::map<std::string, AttributeValue> attributes;
  // Attributes of other writers that h5loom's values cannot hold (objects,
  // booleans, mixed lists): kept as they are, read as their JSON text.
  Json foreign = Json::object();
  ArrayMeta array;  // datasets only
  // The zarr.json this node was read from (null for nodes h5loom made): written
  // back with only the shape and the attributes changed, so that what h5loom
  // does not model (codecs, dimension names, other writers' keys) stays.
  Json original;
};

// The zarr.json text of `node` (`root`: marks the store as h5loom's).
std::string encode_node(const Node& node, bool root);
// The node a zarr.json holds; CorruptionError naming `where` if it is not
// Zarr v3 metadata. Arrays of types or codecs h5loom does not handle are
// kept, with ArrayMeta::unsupported saying why.
Node decode_node(const std::string& text, const std::string& where);
// Whether a root zarr.json text carries h5loom's marker.
bool is_h5loom_root(const std::string& text);

// The Zarr data type name of an h5loom element type ("float64"), or "" if it
// has none h5loom writes (compounds, strings, references, ...).
std::string zarr_type_name(const Datatype& t);

}  // namespace h5loom::zarr
