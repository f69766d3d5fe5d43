// The log engine's metadata codec: operations to CBOR and back, applied to a
// tree with every check a crafted log must meet, and the depth limit.
#include <gtest/gtest.h>

#include "engines/log/format.hpp"
#include "engines/log/metadata.hpp"
#include "h5loom/errors.hpp"

using namespace h5loom;
using namespace h5loom::logengine;

namespace {

Tree with_root() { return Tree(); }

// An operation as a log stores it: through CBOR and back.
Json decode_round_trip(const Json& op) {
  const auto cbor = encode_ops(Json::array({op}));
  Json back;
  EXPECT_TRUE(decode_ops(cbor.data(), cbor.size(), back));
  return back.at(0);
}

}  // namespace

TEST(LogMetadata, OperationsSurviveCborAndBuildTheTree) {
  Json ops = Json::array();
  ops.push_back(group_op("/g"));
  ops.push_back(dataset_op("/g/d", Datatype::Float32, {4, 5}, {kUnlimited, 5}, {2, 5}));
  ops.push_back(extend_op("/g/d", {9, 5}));
  ops.push_back(attribute_op("/g/d", "units", AttributeValue(std::string("m/s"))));
  ops.push_back(attribute_op("/", "steps", AttributeValue(std::vector<int32_t>{1, 2, 3})));
  ops.push_back(attribute_op("/g", "names", AttributeValue(std::vector<std::string>{"a", "b"})));
  // The front file's binding as versions 2 to 11 wrote it (version 12: in the commit record).
  ops.push_back(Json{{"op", "front"}, {"epoch", 3}, {"size", 1234}, {"crc", 0xdeadbeefu}});
  const auto cbor = encode_ops(ops);
  Json back;
  ASSERT_TRUE(decode_ops(cbor.data(), cbor.size(), back));
  ASSERT_EQ(back, ops);

  Tree t = with_root();
  std::vector<int> created;
  for (const auto& op : back) created.push_back(apply_op(t, op, "test"));
  EXPECT_EQ(created, (std::vector<int>{-1, 0, -1, -1, -1, -1, -1}));
  EXPECT_EQ(t.nodes.at("/").children, (std::set<std::string>{"g"}));
  EXPECT_EQ(t.dataset_id("/g/d"), 0);
  const DatasetInfo& info = t.datasets.at(0);
  EXPECT_EQ(info.dtype, Datatype::Float32);
  EXPECT_EQ(info.shape, (Dims{9, 5}));
  EXPECT_EQ(info.layout, Layout::Chunked);
  EXPECT_EQ(info.chunks, (Dims{2, 5}));
  EXPECT_EQ(t.nodes.at("/g/d").attrs.at("units").as_string(), "m/s");
  EXPECT_EQ(t.nodes.at("/").attrs.at("steps").size(), 3u);
  EXPECT_EQ(t.nodes.at("/g").attrs.at("names").as_strings(), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.fronts.size(), 1u);
  EXPECT_EQ(t.fronts[0].epoch, 3u);
  EXPECT_EQ(t.fronts[0].size, 1234u);
  EXPECT_EQ(t.fronts[0].crc, 0xdeadbeefu);
}

TEST(LogMetadata, CommitRecordNamesTheFrontFile) {
  // Version 12: the CRC32C of the front file built with the epoch, inside the
  // record's checksum; 0 (the reserved bytes of older versions) names none.
  logfmt::CommitRecord c;
  c.epoch = 7, c.index_offset = 8192, c.index_size = 300, c.index_crc = 0x12345678u, c.front_crc = 0xcafef00du;
  c.log_end = 8492, c.unix_time_ns = 1;
  std::vector<unsigned char> bytes = c.encode();
  ASSERT_EQ(bytes.size(), logfmt::kCommitRecordSize);
  logfmt::CommitRecord back;
  ASSERT_TRUE(logfmt::CommitRecord::decode(bytes.data(), back));
  EXPECT_EQ(back.front_crc, 0xcafef00du);
  EXPECT_EQ(back.index_crc, 0x12345678u);
  EXPECT_EQ(back.log_end, 8492u);
  bytes[36] ^= 1;  // the front file's CRC is covered by the record's own
  EXPECT_FALSE(logfmt::CommitRecord::decode(bytes.data(), back));
  // A front file matches the record by CRC alone when the size is not recorded.
  EXPECT_TRUE((FrontSum{7, 0, 0xcafef00du}.matches(FrontSum{0, 4096, 0xcafef00du})));
  EXPECT_FALSE((FrontSum{7, 0, 0xcafef00du}.matches(FrontSum{0, 4096, 0xcafef00eu})));
  EXPECT_FALSE((FrontSum{7, 1234, 0xcafef00du}.matches(FrontSum{0, 4096, 0xcafef00du})));
}

TEST(LogMetadata, ImpossibleOperationsAreCorruption) {
  Tree t = with_root();
  apply_op(t, dataset_op("/d", Datatype::Int8, {4}, {8}, {}), "test");
  const std::vector<Json> bad = {
      group_op("/missing/g"),                                       // no parent
      group_op("/d"),                                               // exists
      group_op("/d/g"),                                             // parent is a dataset
      dataset_op("/e", Datatype::Int8, {4}, {2}, {}),               // shape beyond max_shape
      dataset_op("/e", Datatype::Int8, {}, {}, {}),                 // no dimensions
      dataset_op("/e", Datatype::Float64, {uint64_t(1) << 61}, {uint64_t(1) << 61}, {}),  // > 2^62 bytes
      dataset_op("/e", Datatype::Int8, {4}, {4}, {}, {}, /*null_space=*/true),  // a null dataspace with elements
      extend_op("/d", {2}),                                         // shrinks
      extend_op("/d", {9}),                                         // beyond max_shape
      extend_op("/", {9}),                                          // not a dataset
      resize_op("/d", {9}, 1, 0),                                   // beyond max_shape
      resize_op("/d", {2, 2}, 1, 0),                                // another rank
      resize_op("/d", {2}, uint64_t(1) << 40, 0),                   // an epoch no block can have
      attribute_op("/nothing", "a", AttributeValue(1.0)),          // no such object
      Json{{"op", "rename"}, {"path", "/d"}},                       // unknown
  };
  for (const auto& op : bad) EXPECT_THROW(apply_op(t, op, "test"), CorruptionError) << op.dump();
  EXPECT_EQ(t.datasets.size(), 1u);
}

// Version 9: references held on objects count with their names; a refcount
// naming no object is corruption, and an object that goes takes its count along.
TEST(LogMetadata, HeldReferencesCountWithNames) {
  Tree t = with_root();
  apply_op(t, group_op("/g"), "test");
  const uint64_t token = t.nodes.at("/g").token;
  apply_op(t, refcount_op(token, 2), "test");
  EXPECT_EQ(t.link_count(token), 3u);
  apply_op(t, refcount_op(token, 0), "test");
  EXPECT_EQ(t.link_count(token), 1u);
  EXPECT_THROW(apply_op(t, refcount_op(token + 100, 1), "test"), CorruptionError);
  apply_op(t, refcount_op(token, 1), "test");
  apply_op(t, unlink_op("/g"), "test");
  EXPECT_TRUE(t.references.empty());
}

// Version 9: null dataspaces and empty attribute values come back as written.
TEST(LogMetadata, NullDataspacesAndEmptyAttributes) {
  Tree t = with_root();
  apply_op(t, dataset_op("/n", Datatype::opaque(3, "rgb"), {0}, {0}, {}, {}, /*null_space=*/true), "test");
  apply_op(t, attribute_op("/n", "none", AttributeValue::empty(Datatype::varstring())), "test");
  const DatasetInfo& info = t.datasets.at(0);
  EXPECT_TRUE(info.null_space);
  EXPECT_EQ(info.shape, Dims{0});
  EXPECT_EQ(info.dtype, Datatype::opaque(3, "rgb"));
  const AttributeValue& none = t.nodes.at("/n").attrs.at("none");
  EXPECT_TRUE(none.is_empty());
  EXPECT_EQ(none.dtype(), Datatype::varstring());
}

// A shrink hides what blocks of earlier rounds hold outside the new shape,
// even after the dataset grows again; blocks after it are whole.
TEST(LogMetadata, ShrinksClipEarlierBlocksOnly) {
  Tree t = with_root();
  apply_op(t, dataset_op("/d", Datatype::Int8, {4, 4}, {8, 4}, {2, 4}), "test");
  apply_op(t, resize_op("/d", {2, 3}, 5, 7), "test");
  apply_op(t, extend_op("/d", {8, 4}), "test");
  EXPECT_EQ(t.datasets[0].shape, (Dims{8, 4}));
  EXPECT_EQ(t.widest.at(0), (Dims{4, 4}));
  logfmt::BlockEntry before, same_round, inside;
  before.epoch = 5, before.round = 6, before.start = {0, 0}, before.count = {4, 4};
  same_round.epoch = 5, same_round.round = 7, same_round.start = {0, 0}, same_round.count = {4, 4};
  inside.epoch = 4, inside.round = 9, inside.start = {0, 0}, inside.count = {2, 3};
  Dims limit;
  ASSERT_TRUE(t.clipped(0, before, limit));
  EXPECT_EQ(limit, (Dims{2, 3}));
  EXPECT_FALSE(t.clipped(0, same_round, limit));  // written after the shrink
  EXPECT_FALSE(t.clipped(0, inside, limit));      // lies inside the smaller shape
  apply_op(t, resize_op("/d", {3, 2}, 6, 0), "test");  // a second shrink: the smallest of both
  ASSERT_TRUE(t.clipped(0, before, limit));
  EXPECT_EQ(limit, (Dims{2, 2}));
}

TEST(LogMetadata, NamedTypesAreObjectsWithTokens) {
  Tree t = with_root();
  apply_op(t, group_op("/g"), "test");
  const Datatype colour = Datatype::enumeration(Scalar::UInt8, {{"red", 0}, {"blue", 1}});
  apply_op(t, decode_round_trip(type_op("/g/colour", colour)), "test");
  const Node* n = t.find("/g/colour");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, ObjectKind::Datatype);
  EXPECT_EQ(n->type, colour);
  EXPECT_EQ(t.path_of_token(n->token), "/g/colour");
  apply_op(t, attribute_op("/g/colour", "units", AttributeValue(std::string("none"))), "test");
  apply_op(t, move_op("/g/colour", "/colour"), "test");
  EXPECT_EQ(t.find("/colour")->attrs.at("units").as_string(), "none");
  // A named type is no group: nothing is made below it, and its path must be new.
  EXPECT_THROW(apply_op(t, group_op("/colour/x"), "test"), CorruptionError);
  EXPECT_THROW(apply_op(t, type_op("/colour", Datatype::Int8), "test"), CorruptionError);
  EXPECT_THROW(apply_op(t, type_op("/missing/t", Datatype::Int8), "test"), CorruptionError);
}

// Version 8: a `hardlink` names an object by its token; the object moves to
// a hard link outside what goes when its own path goes.
TEST(LogMetadata, HardLinksKeepObjectsAndTheirMembers) {
  Tree t = with_root();
  apply_op(t, group_op("/a"), "test");
  apply_op(t, group_op("/a/b"), "test");
  apply_op(t, dataset_op("/a/b/d", Datatype::Int32, {2}, {2}, {}), "test");
  apply_op(t, group_op("/keep"), "test");
  const uint64_t b = t.find("/a/b")->token, a = t.find("/a")->token;
  apply_op(t, decode_round_trip(hardlink_op("/keep/b2", b)), "test");
  apply_op(t, hardlink_op("/a/b/up", a), "test");  // a cycle: /a/b/up/b/up/...
  EXPECT_EQ(t.link_count(b), 2u);
  EXPECT_EQ(t.resolve("/keep/b2/d"), "/a/b/d");
  EXPECT_EQ(t.resolve("/a/b/up/b/up/b/d"), "/a/b/d");
  EXPECT_EQ(t.find("/keep")->order, (std::vector<std::string>{"b2"}));
  // /a goes: /a/b lives on at its hard link, with its dataset and its link
  // up to /a - which keeps /a, there, still holding its name b (as HDF5 does).
  apply_op(t, unlink_op("/a"), "test");
  EXPECT_EQ(t.find("/a"), nullptr);
  ASSERT_NE(t.find("/keep/b2/d"), nullptr);
  EXPECT_EQ(t.dataset_paths.at(0), "/keep/b2/d");
  EXPECT_EQ(t.path_of_token(b), "/keep/b2");
  EXPECT_EQ(t.path_of_token(a), "/keep/b2/up");
  EXPECT_EQ(t.link_count(b), 2u);
  EXPECT_EQ(t.link_count(a), 1u);
  EXPECT_EQ(t.resolve("/keep/b2/up/b/d"), "/keep/b2/d");
  EXPECT_EQ(t.find("/keep/b2")->children, (std::set<std::string>{"d", "up"}));
  apply_op(t, unlink_op("/keep/b2/up"), "test");  // now the cycle's other side goes, and the link it held
  EXPECT_EQ(t.path_of_token(a), "");
  EXPECT_EQ(t.link_count(b), 1u);
  EXPECT_EQ(t.find("/keep")->order, (std::vector<std::string>{"b2"}));
  EXPECT_EQ(t.find("/")->order, (std::vector<std::string>{"keep"}));
  // Unlinking a hard link leaves the object.
  apply_op(t, hardlink_op("/d2", t.find("/keep/b2/d")->token), "test");
  apply_op(t, unlink_op("/d2"), "test");
  EXPECT_NE(t.find("/keep/b2/d"), nullptr);
  EXPECT_EQ(t.link_count(t.find("/keep/b2/d")->token), 1u);
  // A member carried out by one move can keep another: /x/g goes, /x/g/m
  // moves to /m1, whose hard link then keeps /x/g/n.
  apply_op(t, group_op("/x"), "test");
  apply_op(t, group_op("/x/g"), "test");
  apply_op(t, group_op("/x/g/m"), "test");
  apply_op(t, group_op("/x/g/n"), "test");
  apply_op(t, hardlink_op("/x/g/m/to_n", t.find("/x/g/n")->token), "test");
  apply_op(t, hardlink_op("/m1", t.find("/x/g/m")->token), "test");
  apply_op(t, unlink_op("/x/g"), "test");
  EXPECT_EQ(t.find("/x/g"), nullptr);
  ASSERT_NE(t.find("/m1/to_n"), nullptr);
  EXPECT_EQ(t.find("/m1/to_n")->kind, ObjectKind::Group);
  EXPECT_EQ(t.resolve("/m1/to_n"), "/m1/to_n");  // the object itself lives there now
  EXPECT_EQ(t.find("/x")->children, std::set<std::string>{});
  // Crafted: a hard link to no object, or at a taken path.
  EXPECT_THROW(apply_op(t, hardlink_op("/y", 999), "test"), CorruptionError);
  EXPECT_THROW(apply_op(t, hardlink_op("/m1", kRootToken), "test"), CorruptionError);
  EXPECT_THROW(apply_op(t, hardlink_op("/nowhere/y", kRootToken), "test"), CorruptionError);
}

// Version 8 also: external links (never followed), the user block size, and
// HDF5's creation order values kept per name.
TEST(LogMetadata, ExternalLinksUserBlockAndCreationOrderValues) {
  Tree t = with_root();
  apply_op(t, group_op("/g"), "test");
  apply_op(t, decode_round_trip(extlink_op("/g/ext", ExternalLink{"other.h5", "/data"})), "test");
  EXPECT_EQ(t.nodes.at("/g/ext").external, (ExternalLink{"other.h5", "/data"}));
  EXPECT_EQ(t.find("/g/ext"), nullptr);  // not followed
  EXPECT_EQ(t.resolve("/g/ext/inside"), "");
  apply_op(t, group_op("/g/a"), "test");
  apply_op(t, unlink_op("/g/ext"), "test");
  apply_op(t, group_op("/g/b"), "test");
  const Node& g = t.nodes.at("/g");
  EXPECT_EQ(g.creation_order.at("a"), 1);  // values are not reused
  EXPECT_EQ(g.creation_order.at("b"), 2);
  apply_op(t, unlink_op("/g/a"), "test");
  apply_op(t, unlink_op("/g/b"), "test");
  EXPECT_EQ(t.nodes.at("/g").next_creation_order, 0);  // the group is empty: from 0 again
  apply_op(t, decode_round_trip(userblock_op(4096)), "test");
  EXPECT_EQ(t.userblock, 4096u);
  EXPECT_THROW(apply_op(t, userblock_op(1000), "test"), CorruptionError);
  EXPECT_THROW(apply_op(t, extlink_op("/g/x", ExternalLink{"", "/data"}), "test"), CorruptionError);
  EXPECT_THROW(apply_op(t, extlink_op("/g/x", ExternalLink{"f.h5", "relative"}), "test"), CorruptionError);
}

TEST(LogMetadata, DecodingRefusesDeepNestingAndNonArrays) {
  Json deep = Json::array();
  for (int i = 0; i < 40; ++i) deep = Json::array({deep});
  auto cbor = encode_ops(deep);
  Json out;
  EXPECT_THROW(decode_ops(cbor.data(), cbor.size(), out), CorruptionError);

  Json shallow = Json::array({Json::array({Json::array()})});
  cbor = encode_ops(shallow);
  out = Json();
  EXPECT_TRUE(decode_ops(cbor.data(), cbor.size(), out));

  cbor = Json::to_cbor(Json{{"op", "group"}});  // a map, not an array of operations
  out = Json();
  EXPECT_FALSE(decode_ops(cbor.data(), cbor.size(), out));
}
