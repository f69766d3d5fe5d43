// Conformance group "named_types": named (committed) datatypes - a datatype
// kept in the file under a name, with attributes, that links can delete and
// move and references can name (HDF5's H5Tcommit).
#include <cstddef>

#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(named_types, "named_types");

namespace {

struct Particle {
  double x;
  int32_t id;
};

Datatype particle_type() {
  return Datatype::compound({{"x", offsetof(Particle, x), Datatype::Float64}, {"id", offsetof(Particle, id), Datatype::Int32}},
                            sizeof(Particle));
}

}  // namespace

TEST_F(named_types, CommittedTypesKeepTheirTypeAndAttributesAfterReopen) {
  const auto path = file_path();
  const Datatype colour = Datatype::enumeration(Scalar::UInt8, {{"red", 0}, {"green", 1}, {"blue", 2}});
  {
    auto f = File::create(path, options());
    auto particle = f.commit_datatype("types/particle", particle_type());  // the parent group is created
    EXPECT_EQ(particle.path(), "/types/particle");
    EXPECT_EQ(particle.dtype(), particle_type());
    particle.set_attribute("units", AttributeValue(std::string("m")));
    f.group("types").commit_datatype("colour", colour);
    f.commit_datatype("/time", Datatype::Float64);
    f.commit_datatype("label", Datatype::string(12));
    // A dataset of the same type beside them: the named type is a description, not its storage.
    DatasetSpec spec;
    spec.dtype = particle_type();
    spec.shape = {4};
    auto ds = f.create_dataset("particles", spec);
    const std::vector<Particle> all{{1.5, 1}, {2.5, 2}, {3.5, 3}, {4.5, 4}};
    if (f.rank() == 0) ds.write_raw(Selection::all(), particle_type(), all.data(), all.size(), /*copy=*/true);
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.kind("types/particle"), ObjectKind::Datatype);
  EXPECT_EQ(f.kind("types/colour"), ObjectKind::Datatype);
  EXPECT_EQ(f.named_datatype("/types/particle").dtype(), particle_type());
  EXPECT_EQ(f.named_datatype("types/colour").dtype(), colour);
  EXPECT_EQ(f.named_datatype("time").dtype(), Datatype::Float64);
  EXPECT_EQ(f.named_datatype("label").dtype(), Datatype::string(12));
  EXPECT_EQ(f.named_datatype("types/particle").attribute("units").as_string(), "m");
  EXPECT_EQ(f.group("types").list(), (std::vector<std::string>{"colour", "particle"}));
  std::vector<std::pair<std::string, ObjectKind>> seen;
  f.visit([&](const std::string& p, ObjectKind k) { seen.emplace_back(p, k); });
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, ObjectKind>>{{"/label", ObjectKind::Datatype},
                                                                  {"/particles", ObjectKind::Dataset},
                                                                  {"/time", ObjectKind::Datatype},
                                                                  {"/types", ObjectKind::Group},
                                                                  {"/types/colour", ObjectKind::Datatype},
                                                                  {"/types/particle", ObjectKind::Datatype}}));
  std::vector<Particle> values(4);
  f.dataset("particles").read_raw(Selection::all(), particle_type(), values.data(), values.size());
  EXPECT_EQ(values[3].x, 4.5);
  EXPECT_EQ(values[3].id, 4);
}

// Datasets and attributes that share a named datatype (HDF5's committed
// datatype given to H5Dcreate/H5Acreate): they say which, and its reference
// count counts them while they exist.
TEST_F(named_types, DatasetsAndAttributesShareThem) {
  const auto path = file_path();
  const bool counts = [&] {
    auto f = File::create(path, options());
    f.commit_datatype("types/particle", particle_type());
    const bool counted = f.supports("hard_links");  // (else every object's count is 1)
    if (counted) EXPECT_EQ(f.link_count("types/particle"), 1u);
    DatasetSpec spec;
    spec.dtype = particle_type();
    spec.shape = {2};
    spec.named_type = "types/particle";  // relative to the root
    auto shared = f.create_dataset("shared", spec);
    EXPECT_EQ(shared.named_type(), "/types/particle");
    spec.named_type.clear();
    EXPECT_EQ(f.create_dataset("own", spec).named_type(), "");
    const Particle p{2.5, 7};
    f.set_attribute("origin", AttributeValue::from_raw(AttributeValue::Kind::Scalar, particle_type(), 1, &p)
                                  .set_named_type("/types/particle"));
    shared.set_attribute("first", AttributeValue::from_raw(AttributeValue::Kind::Scalar, particle_type(), 1, &p)
                                      .set_named_type("/types/particle"));
    if (counted) EXPECT_EQ(f.link_count("types/particle"), 4u);  // its name, a dataset, two attributes
    EXPECT_EQ(f.attribute("origin").named_type(), "/types/particle");
    // Misuse, refused on every rank: another type, no named datatype there, text.
    spec.named_type = "types/particle";
    spec.dtype = Datatype::Float64;
    EXPECT_THROW(f.create_dataset("wrong", spec), DatatypeError);
    spec.named_type = "shared";
    EXPECT_THROW(f.create_dataset("wrong", spec), NotFoundError);
    EXPECT_THROW(f.set_attribute("text", AttributeValue("x").set_named_type("/types/particle")), UsageError);
    EXPECT_FALSE(f.exists("wrong"));
    // A copy keeps the values and types, not the sharing (its named datatype need not be copied).
    copy_object(f, "shared", f, "copied");
    EXPECT_EQ(f.dataset("copied").named_type(), "");
    EXPECT_EQ(f.dataset("copied").attribute("first").named_type(), "");
    EXPECT_EQ(f.dataset("copied").attribute("first"), shared.attribute("first"));
    f.remove("copied");
    return counted;
  }();
  {
    auto f = File::open(path, Mode::ReadWrite, options());
    EXPECT_EQ(f.dataset("shared").named_type(), "/types/particle");
    EXPECT_EQ(f.dataset("own").named_type(), "");
    const AttributeValue origin = f.attribute("origin");
    EXPECT_EQ(origin.named_type(), "/types/particle");
    Particle back{};
    origin.copy_elements(&back);
    EXPECT_EQ(back.x, 2.5);
    EXPECT_EQ(back.id, 7);
    if (counts) EXPECT_EQ(f.link_count("types/particle"), 4u);
    // Users that go release it: a deleted attribute, a deleted dataset (with its attribute).
    f.remove_attribute("origin");
    if (counts) EXPECT_EQ(f.link_count("types/particle"), 3u);
    f.remove("shared");
    if (counts) EXPECT_EQ(f.link_count("types/particle"), 1u);
    // Rewriting an attribute without the named datatype shares it no more.
    const Particle p{1.0, 1};
    f.set_attribute("again", AttributeValue::from_raw(AttributeValue::Kind::Scalar, particle_type(), 1, &p)
                                 .set_named_type("types/particle"));
    if (counts) EXPECT_EQ(f.link_count("types/particle"), 2u);
    f.set_attribute("again", AttributeValue::from_raw(AttributeValue::Kind::Scalar, particle_type(), 1, &p));
    EXPECT_EQ(f.attribute("again").named_type(), "");
    if (counts) EXPECT_EQ(f.link_count("types/particle"), 1u);
  }
}

// Types with parts of variable length (HDF5's H5T_VLEN; strings inside a
// compound): committed and read back; datasets of references inside one refused.
TEST_F(named_types, VariableLengthTypesAreCommitted) {
  const auto path = file_path();
  const auto hits = Datatype::sequence(Datatype::Int32);
  const auto row = Datatype::compound({{"name", 0, Datatype::varstring(Datatype::Charset::Utf8)},
                                       {"hits", 8, hits}, {"x", 24, Datatype::Float64}});
  {
    auto f = File::create(path, options());
    f.commit_datatype("hits", hits);
    f.commit_datatype("row", row);
    f.commit_datatype("ragged_rows", Datatype::sequence(row));
    DatasetSpec refs;  // (kept in attributes - netCDF's DIMENSION_LIST - not in datasets)
    refs.dtype = Datatype::sequence(Datatype::reference());
    refs.shape = {2};
    EXPECT_THROW(f.create_dataset("refs", refs), DatatypeError);
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.named_datatype("hits").dtype(), hits);
  EXPECT_EQ(f.named_datatype("row").dtype(), row);
  EXPECT_EQ(f.named_datatype("ragged_rows").dtype(), Datatype::sequence(row));
}

TEST_F(named_types, LinksAndReferencesReachNamedTypes) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    f.commit_datatype("a", Datatype::Int32);
    f.commit_datatype("gone", Datatype::Int64);
    if (f.supports("links")) {
      f.move("a", "g/b");
      f.remove("gone");
      f.create_soft_link("alias", "/g/b");
    }
    if (f.supports("references")) {
      const std::string named = f.supports("links") ? "g/b" : "a";
      f.set_attribute("type_ref", AttributeValue(f.reference(named)));
    }
  }
  auto f = File::open(path, Mode::Read, options());
  if (f.supports("links")) {
    EXPECT_EQ(f.kind("a"), ObjectKind::None);
    EXPECT_EQ(f.kind("gone"), ObjectKind::None);
    EXPECT_EQ(f.named_datatype("g/b").dtype(), Datatype::Int32);
    EXPECT_EQ(f.kind("alias"), ObjectKind::Datatype);  // soft links are followed
    EXPECT_EQ(f.named_datatype("alias").dtype(), Datatype::Int32);
  }
  if (f.supports("references"))
    EXPECT_EQ(f.dereference(f.attribute("type_ref").as_references().at(0)), f.supports("links") ? "/g/b" : "/a");
}

TEST_F(named_types, MisuseIsRefusedOnEveryRank) {
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    f.create_dataset<double>("d", {2});
    f.commit_datatype("t", Datatype::Float32);
    EXPECT_THROW(f.commit_datatype("t", Datatype::Int8), ExistsError);  // taken, by a named type
    EXPECT_THROW(f.commit_datatype("d", Datatype::Int8), ExistsError);  // taken, by a dataset
    EXPECT_THROW(f.commit_datatype("/", Datatype::Int8), ExistsError);
    EXPECT_THROW(f.commit_datatype("t/inner", Datatype::Int8), ExistsError);  // a named type is not a group
    EXPECT_THROW(f.named_datatype("d"), NotFoundError);      // a dataset, not a named type
    EXPECT_THROW(f.named_datatype("missing"), NotFoundError);
    EXPECT_THROW(f.dataset("t"), NotFoundError);             // a named type, not a dataset
    EXPECT_THROW(f.group("t"), NotFoundError);
    // Another rank's mistake is raised here too (the checks are agreed on).
    if (f.size() > 1) EXPECT_THROW(f.commit_datatype(f.rank() == 0 ? "/" : "fine", Datatype::Int8), ExistsError);
    EXPECT_EQ(f.kind("fine"), ObjectKind::None);
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_THROW(f.commit_datatype("new", Datatype::Int8), ReadOnlyError);
  EXPECT_EQ(f.named_datatype("t").dtype(), Datatype::Float32);
}
