// Conformance group "series": steps, particles and block fields in both layouts
// (openPMD and H5Part), with zero-particle ranks, irregular boxes and halo reads.
#include <algorithm>
#include <numeric>

#include "conformance.hpp"
#include "h5loom/series.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(series, "series");

namespace {

const SeriesLayout kLayouts[] = {SeriesLayout::OpenPMD, SeriesLayout::H5Part};

SeriesOptions series_options(const h5loom::FileOptions& file, SeriesLayout layout) {
  SeriesOptions o;
  o.file = file;
  o.layout = layout;
  return o;
}

// Rank r holds r+3 particles on even ranks and none on odd ones.
uint64_t particles_of(int r) { return r % 2 == 0 ? uint64_t(r) + 3 : 0; }

double x_of(uint64_t id, uint64_t step) { return id * 0.5 + step; }

double field_value(uint64_t z, uint64_t y, uint64_t x, int c = 0) { return z * 10000.0 + y * 100.0 + x + c * 1e6; }

}  // namespace

TEST_F(series, ParticlesWithZeroParticleRanks) {
  for (auto layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    auto path = file_path(layout_name(layout));
    const uint64_t mine = particles_of(rank());
    uint64_t total = 0, offset = 0;
    for (int r = 0; r < nranks(); ++r) {
      if (r < rank()) offset += particles_of(r);
      total += particles_of(r);
    }
    {
      auto s = Series::create(path, series_options(options(), layout));
      EXPECT_EQ(s.layout(), layout);
      s.set_attribute("author", "conformance");
      for (uint64_t n = 0; n < 3; ++n) {
        auto st = s.write_step(n, 0.25 * n, 0.25);
        auto e = st.particles("electrons");
        e.set_local_count(mine);
        EXPECT_EQ(e.offset(), offset);
        EXPECT_EQ(e.global_count(), total);
        std::vector<int64_t> id(mine);
        std::iota(id.begin(), id.end(), int64_t(offset));
        std::vector<double> x(mine);
        std::vector<float> px(mine);
        for (uint64_t i = 0; i < mine; ++i) {
          x[i] = x_of(offset + i, n);
          px[i] = float(-1.0 * (offset + i));
        }
        e.write("x", x);
        e.write("px", px);
        e.write("id", id);
        st.close();  // the buffers above may go now
      }
      s.close();
    }
    auto s = Series::open(path, options());
    EXPECT_EQ(s.layout(), layout);
    EXPECT_EQ(s.steps(), (std::vector<uint64_t>{0, 1, 2}));
    EXPECT_EQ(s.attribute("author").as_string(), "conformance");
    for (uint64_t n : s.steps()) {
      auto st = s.step(n);
      EXPECT_DOUBLE_EQ(st.time(), 0.25 * n);
      EXPECT_DOUBLE_EQ(st.dt(), 0.25);
      ASSERT_EQ(st.particle_species().size(), 1u);
      auto e = st.particles(layout == SeriesLayout::OpenPMD ? "electrons" : st.particle_species()[0]);
      EXPECT_EQ(e.global_count(), total);
      auto names = e.arrays();
      std::sort(names.begin(), names.end());
      EXPECT_EQ(names, (std::vector<std::string>{"id", "px", "x"}));
      EXPECT_EQ(e.dtype("px"), Datatype::Float32);
      auto x = e.read<double>("x");
      auto id = e.read<int64_t>("id");
      ASSERT_EQ(x.size(), total);
      for (uint64_t i = 0; i < total; ++i) {
        EXPECT_EQ(id[i], int64_t(i));
        EXPECT_EQ(x[i], x_of(i, n));
      }
      if (total >= 3) {
        auto mid = e.read_range<float>("px", 1, 3);
        EXPECT_EQ(mid, (std::vector<float>{-1.0f, -2.0f}));
      }
      std::vector<uint64_t> picks = {total - 1, 0, total / 2, 0};
      auto picked = e.read_indices<double>("x", picks);
      for (std::size_t k = 0; k < picks.size(); ++k) EXPECT_EQ(picked[k], x_of(picks[k], n));
      auto [b, end] = e.my_share();
      auto share = e.read_my_share<int64_t>("id");
      ASSERT_EQ(share.size(), end - b);
      for (uint64_t i = 0; i < share.size(); ++i) EXPECT_EQ(share[i], int64_t(b + i));
      uint64_t covered = end - b, all_covered = 0;
      MPI_Allreduce(&covered, &all_covered, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(all_covered, total);
    }
  }
}

TEST_F(series, FieldsWithIrregularBoxesGhostsAndHalos) {
  // Rank r owns x in [r(r+1)/2, r(r+1)/2 + r+1): adjacent boxes differ in size.
  const uint64_t nz = 4, ny = 3, nx = uint64_t(nranks()) * (nranks() + 1) / 2;
  const uint64_t x0 = uint64_t(rank()) * (rank() + 1) / 2, w = rank() + 1, g = 1;
  for (auto layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    auto path = file_path(layout_name(layout));
    {
      auto s = Series::create(path, series_options(options(), layout));
      auto st = s.write_step(0, 0.0);
      FieldSpec spec;
      spec.global_shape = {nz, ny, nx};
      spec.origin = {-1.0, 0.5, 2.0};
      spec.spacing = {0.1, 0.2, 0.3};
      auto rho = st.field("rho", spec);
      spec.components = 3;
      auto E = st.field("E", spec);
      FieldSpec line;
      line.global_shape = {nx};
      line.dtype = Datatype::Int32;
      auto l = st.field("line", line);
      // local arrays with one ghost cell on every side; ghosts hold garbage
      Dims local{nz + 2 * g, ny + 2 * g, w + 2 * g};
      for (int c = 0; c < 3; ++c) {
        std::vector<double> buf(product(local), -99.0);
        for (uint64_t z = 0; z < nz; ++z)
          for (uint64_t y = 0; y < ny; ++y)
            for (uint64_t x = 0; x < w; ++x)
              buf[((z + g) * local[1] + y + g) * local[2] + x + g] = field_value(z, y, x0 + x, c);
        E.write(buf.data(), local, {0, 0, x0}, g, c);
        if (c == 0) rho.write(buf.data(), local, {0, 0, x0}, g);
      }
      std::vector<int32_t> lbuf(w);
      std::iota(lbuf.begin(), lbuf.end(), int32_t(x0));
      l.write(lbuf.data(), {w}, {x0});
      s.close();  // the step ends here: the field buffers were copied, so they could go earlier
    }
    auto s = Series::open(path, options());
    auto st = s.step(0);
    auto names = st.fields();
    EXPECT_EQ(names, (std::vector<std::string>{"E", "line", "rho"}));
    auto rho = st.field("rho");
    EXPECT_EQ(rho.global_shape(), (Dims{nz, ny, nx}));
    EXPECT_EQ(rho.components(), 1);
    EXPECT_EQ(rho.origin(), (std::vector<double>{-1.0, 0.5, 2.0}));
    EXPECT_EQ(rho.spacing(), (std::vector<double>{0.1, 0.2, 0.3}));
    EXPECT_EQ(st.field("E").components(), 3);
    // halo read of this rank's box: neighbours' cells inside the domain, -7 outside
    const uint64_t h = 1;
    for (int c = 0; c < 3; ++c) {
      auto got = st.field(c == 0 ? "rho" : "E").read<double>({0, 0, x0}, {nz, ny, w}, h, -7.0, c == 0 ? 0 : c);
      Dims padded{nz + 2 * h, ny + 2 * h, w + 2 * h};
      ASSERT_EQ(got.size(), product(padded));
      for (uint64_t z = 0; z < padded[0]; ++z)
        for (uint64_t y = 0; y < padded[1]; ++y)
          for (uint64_t x = 0; x < padded[2]; ++x) {
            int64_t gz = int64_t(z) - h, gy = int64_t(y) - h, gx = int64_t(x0 + x) - h;
            bool inside = gz >= 0 && gz < int64_t(nz) && gy >= 0 && gy < int64_t(ny) && gx >= 0 && gx < int64_t(nx);
            double want = inside ? field_value(gz, gy, gx, c) : -7.0;
            ASSERT_EQ(got[(z * padded[1] + y) * padded[2] + x], want) << "c " << c << " at " << z << "," << y << "," << x;
          }
    }
    // every rank reads the whole line; odd ranks read nothing of rho
    auto line = st.field("line").read<int32_t>({0}, {nx});
    for (uint64_t i = 0; i < nx; ++i) EXPECT_EQ(line[i], int32_t(i));
    auto none = rank() % 2 ? rho.read<double>({0, 0, 0}, {0, 0, 0}) : rho.read<double>({0, 0, 0}, {1, 1, 1}, 2, 5.0);
    EXPECT_EQ(none.size(), rank() % 2 ? 0u : 125u);
  }
}

TEST_F(series, AppendingStepsAndStepOrder) {
  for (auto layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    auto path = file_path(layout_name(layout));
    {
      auto s = Series::create(path, series_options(options(), layout));
      for (uint64_t n = 0; n < 2; ++n) {
        auto st = s.write_step(n, double(n));
        st.set_attribute("note", "first run");
        auto p = st.particles("ions");
        p.set_local_count(1);
        std::vector<uint32_t> q{uint32_t(rank() + 10 * n)};
        p.write("charge", q);
        st.close();
      }
    }
    {
      auto s = Series::append(path, options());
      EXPECT_EQ(s.layout(), layout);
      EXPECT_THROW(s.write_step(layout == SeriesLayout::H5Part ? 5 : 1, 5.0), UsageError);
      auto st = s.write_step(2, 2.0);
      auto p = st.particles("ions");
      p.set_local_count(1);
      std::vector<uint32_t> q{uint32_t(rank() + 20)};
      p.write("charge", q);
      s.close();
    }
    auto s = Series::open(path, options());
    EXPECT_EQ(s.steps(), (std::vector<uint64_t>{0, 1, 2}));
    EXPECT_EQ(s.step(1).attribute("note").as_string(), "first run");
    EXPECT_EQ(s.step(1).attribute_names(), std::vector<std::string>{"note"});
    for (uint64_t n = 0; n < 3; ++n) {
      auto st = s.step(n);
      auto q = st.particles(st.particle_species().at(0)).read<uint32_t>("charge");
      for (int r = 0; r < nranks(); ++r) EXPECT_EQ(q[r], uint32_t(r + 10 * n));
    }
    EXPECT_THROW(s.step(7), NotFoundError);
    EXPECT_THROW(s.write_step(3, 3.0), ReadOnlyError);
  }
}

TEST_F(series, LayoutConventionsInTheFile) {
  auto opmd = file_path("openpmd");
  auto h5p = file_path("h5part");
  for (auto [path, layout] : {std::pair{opmd, SeriesLayout::OpenPMD}, std::pair{h5p, SeriesLayout::H5Part}}) {
    auto s = Series::create(path, series_options(options(), layout));
    auto st = s.write_step(0, 1.5, 0.5);
    FieldSpec spec;
    spec.global_shape = {2, 3, 4};
    spec.origin = {1, 2, 3};
    spec.spacing = {0.5, 0.25, 0.125};
    st.field("rho", spec);
    auto e = st.particles("electrons");
    e.set_local_count(0);
    e.write<double>("x", nullptr);
    s.close();
  }
  auto f = File::open(opmd, Mode::Read, options());
  EXPECT_EQ(f.attribute("openPMD").as_string(), "1.1.0");
  EXPECT_EQ(f.attribute("openPMDextension").dtype(), Datatype::UInt32);
  EXPECT_EQ(f.attribute("basePath").as_string(), "/data/%T/");
  EXPECT_EQ(f.attribute("meshesPath").as_string(), "meshes/");
  EXPECT_EQ(f.attribute("particlesPath").as_string(), "particles/");
  EXPECT_EQ(f.attribute("iterationEncoding").as_string(), "groupBased");
  EXPECT_EQ(f.attribute("iterationFormat").as_string(), "/data/%T/");
  auto it = f.group("/data/0");
  EXPECT_EQ(it.attribute("time").as<double>(), 1.5);
  EXPECT_EQ(it.attribute("dt").as<double>(), 0.5);
  EXPECT_EQ(it.attribute("timeUnitSI").as<double>(), 1.0);
  auto rho = f.dataset("/data/0/meshes/rho");
  EXPECT_EQ(rho.attribute("geometry").as_string(), "cartesian");
  EXPECT_EQ(rho.attribute("dataOrder").as_string(), "C");
  EXPECT_EQ(rho.attribute("axisLabels").as_strings(), (std::vector<std::string>{"z", "y", "x"}));
  EXPECT_EQ(rho.attribute("gridSpacing").as_vector<double>(), (std::vector<double>{0.5, 0.25, 0.125}));
  EXPECT_EQ(rho.attribute("gridGlobalOffset").as_vector<double>(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(rho.attribute("unitDimension").size(), 7u);
  EXPECT_TRUE(rho.has_attribute("timeOffset") && rho.has_attribute("unitSI") && rho.has_attribute("position") &&
              rho.has_attribute("gridUnitSI"));
  auto x = f.dataset("/data/0/particles/electrons/position/x");
  EXPECT_EQ(x.shape(), Dims{0});
  EXPECT_TRUE(x.has_attribute("unitSI"));
  EXPECT_EQ(f.group("/data/0/particles/electrons/position").attribute("unitDimension").as_vector<double>()[0], 1.0);
  EXPECT_EQ(f.group("/data/0/particles/electrons/positionOffset/x").attribute("shape").as_vector<uint64_t>(),
            std::vector<uint64_t>{0});

  auto g = File::open(h5p, Mode::Read, options());
  EXPECT_EQ(g.group("Step#0").attribute("TimeValue").as<double>(), 1.5);
  EXPECT_EQ(g.dataset("Step#0/Block/rho/0").shape(), (Dims{2, 3, 4}));
  EXPECT_EQ(g.group("Step#0/Block/rho").attribute("__Origin__").as_vector<double>(), (std::vector<double>{3, 2, 1}));
  EXPECT_EQ(g.group("Step#0/Block/rho").attribute("__Spacing__").as_vector<double>(),
            (std::vector<double>{0.125, 0.25, 0.5}));
  EXPECT_EQ(g.dataset("Step#0/x").shape(), Dims{0});
}

TEST_F(series, MisuseIsReported) {
  for (auto layout : kLayouts) {
    SCOPED_TRACE(layout_name(layout));
    auto path = file_path(layout_name(layout));
    auto s = Series::create(path, series_options(options(), layout));
    auto st = s.write_step(0, 0.0);
    auto p = st.particles("a");
    std::vector<double> v(2, 1.0);
    EXPECT_THROW(p.write("x", v), UsageError);  // no count yet
    p.set_local_count(3);
    EXPECT_THROW(p.write("x", v), SelectionError);  // 2 values for a count of 3
    if (layout == SeriesLayout::H5Part) EXPECT_THROW(st.particles("b"), UsageError);
    FieldSpec spec;
    spec.global_shape = {4, 4};
    auto f = st.field("f", spec);
    std::vector<double> box(9, 0.0);
    EXPECT_THROW(f.write(box.data(), {3, 3}, {2, 2}), SelectionError);  // leaves the grid
    EXPECT_THROW(f.write(box.data(), {3, 3}, {~uint64_t(0), 0}), SelectionError);  // offset + size would wrap
    EXPECT_THROW(f.read<double>({~uint64_t(0) - 1, 0}, {2, 2}), SelectionError);  // lo + count would wrap
    if (nranks() > 1) {  // counts whose sum passes 2^64 - 1: refused on every rank, not wrapped
      EXPECT_THROW(p.set_local_count(uint64_t(1) << 63), SelectionError);
    }
    std::vector<float> wrong(4, 0.f);
    EXPECT_THROW(f.write(wrong.data(), {2, 2}, {0, 0}), DatatypeError);
    spec.global_shape = {1, 2, 3, 4};
    EXPECT_THROW(st.field("g", spec), SelectionError);
    EXPECT_THROW(st.field("missing"), NotFoundError);
    EXPECT_THROW(st.set_attribute(layout == SeriesLayout::H5Part ? "TimeValue" : "time", 1.0), UsageError);
    s.close();
    EXPECT_THROW(Series::open(file_path("not-a-series-" + layout_name(layout)), options()), NotFoundError);
  }
  auto plain = file_path("plain");
  { File::create(plain, options()).create_group("g"); }
  EXPECT_THROW(Series::open(plain, options()), UsageError);
  EXPECT_THROW(layout_from_name("adios"), ConfigError);
}
