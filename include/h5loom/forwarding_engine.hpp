// ForwardingEngine: the base of every wrapper engine (like an HDF5
// pass-through VOL connector). It owns an inner engine and forwards every
// operation to it, so a wrapper overrides only what it changes:
//
//  * around(file, call, run): every call on an open file passes through it
//    (run() makes the inner call) - the one place for what applies to all
//    calls (collcheck's agreement, trace's timing);
//  * any operation itself, calling the base's version to forward;
//  * make_file(): a wrapper's per-file state, derived from WrappedFile.
//
// A new operation added to Engine is forwarded here once, for every wrapper.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "h5loom/engine.hpp"

namespace h5loom::engine {

// A non-owning reference to a callable (no allocation per call): valid only
// while the callable it was made from lives, i.e. during the call it is passed to.
template <class Signature>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit, as std::function
      : object_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(object_, std::forward<Args>(a)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

// One call on an open file, as a wrapper sees it.
struct Call {
  const char* op;              // the Engine method: "create_dataset", "put", "flush", ...
  const std::string& object;   // the object's path; the file's location for open, flush, close, describe
  bool collective;             // every call is, except put
  // The arguments in words ("'/a', float64[4, 5] chunked"), built only when asked.
  FunctionRef<std::string()> arguments;
};

class ForwardingEngine : public Engine {
 public:
  // A wrapper's state of one open file: the inner engine's handle and what
  // the wrapper adds (derive, and return yours from make_file()).
  struct WrappedFile : FileHandle {
    std::unique_ptr<FileHandle> inner;
    std::string location;
    OpenMode mode = OpenMode::Read;
    MPI_Comm comm = MPI_COMM_NULL;
  };

  explicit ForwardingEngine(std::unique_ptr<Engine> inner);

  Engine& inner() const { return *inner_; }
  // The wrapper's own name ("collcheck"); name() is "<it>><inner's name>".
  virtual std::string wrapper_name() const = 0;

  std::string name() const override;
  std::vector<std::string> conformance_groups() const override;
  Claim probe(const std::string& location) const noexcept override;
  std::vector<StoragePiece> storage(const std::string& location) const override;
  void remove(const std::string& location) const override;
  std::optional<VerifyReport> verify(const std::string& location) const override;

  std::unique_ptr<FileHandle> open(const std::string& location, OpenMode mode, MPI_Comm comm) override;
  RequestPtr flush(FileHandle& f, FlushLevel level) override;
  void prepare_flush(FileHandle& f, FlushLevel level) override;
  RequestPtr flush_in_stages(FileHandle& f) override;
  void close(FileHandle& f) override;
  void begin_close(FileHandle& f) override;
  // The inner engine's properties, then ("wrapper", wrapper_name()).
  Properties describe(FileHandle& f) override;
  uint64_t userblock(FileHandle& f) override;
  ObjectKind kind(FileHandle& f, const std::string& path) override;
  void create_group(FileHandle& f, const std::string& path) override;
  std::vector<std::string> list(FileHandle& f, const std::string& group) override;
  void unlink(FileHandle& f, const std::string& path) override;
  void move(FileHandle& f, const std::string& from, const std::string& to) override;
  void create_soft_link(FileHandle& f, const std::string& path, const std::string& target) override;
  std::optional<std::string> soft_link(FileHandle& f, const std::string& path) override;
  void create_hard_link(FileHandle& f, const std::string& path, const std::string& target) override;
  uint64_t link_count(FileHandle& f, const std::string& path) override;
  uint64_t change_reference_count(FileHandle& f, const std::string& path, int delta) override;
  void create_external_link(FileHandle& f, const std::string& path, const ExternalLink& link) override;
  std::optional<ExternalLink> external_link(FileHandle& f, const std::string& path) override;
  void create_user_defined_link(FileHandle& f, const std::string& path, const UserDefinedLink& link) override;
  std::optional<UserDefinedLink> user_defined_link(FileHandle& f, const std::string& path) override;
  std::vector<std::string> list_in_creation_order(FileHandle& f, const std::string& group) override;
  int64_t creation_order(FileHandle& f, const std::string& path) override;
  int64_t next_creation_order(FileHandle& f, const std::string& group) override;
  uint64_t object_token(FileHandle& f, const std::string& path) override;
  std::string object_path(FileHandle& f, uint64_t token) override;
  void commit_datatype(FileHandle& f, const std::string& path, const Datatype& dtype) override;
  Datatype named_datatype(FileHandle& f, const std::string& path) override;
  void create_dataset(FileHandle& f, const std::string& path, const DatasetSpec& spec) override;
  DatasetInfo dataset_info(FileHandle& f, const std::string& path) override;
  void extend(FileHandle& f, const std::string& path, const Dims& new_shape) override;
  void put(FileHandle& f, Write write) override;
  RequestPtr read(FileHandle& f, const std::string& path, const Selection& sel, Datatype dtype, void* out) override;
  bool has_attribute(FileHandle& f, const std::string& object, const std::string& name) override;
  void write_attribute(FileHandle& f, const std::string& object, const std::string& name,
                       const AttributeValue& value) override;
  AttributeValue read_attribute(FileHandle& f, const std::string& object, const std::string& name) override;
  std::vector<std::string> list_attributes(FileHandle& f, const std::string& object) override;
  RequestPtr read_independent(FileHandle& f, const std::string& path, const Selection& sel, Datatype dtype,
                              void* out) override;
  void remove_attribute(FileHandle& f, const std::string& object, const std::string& name) override;
  void rename_attribute(FileHandle& f, const std::string& object, const std::string& from,
                        const std::string& to) override;
  std::vector<std::string> list_attributes_in_creation_order(FileHandle& f, const std::string& object) override;

 protected:
  virtual std::unique_ptr<WrappedFile> make_file() const { return std::make_unique<WrappedFile>(); }
  // Every call on an open file (open included, once the WrappedFile is made)
  // runs through here; run() makes the inner call. The default just runs it.
  virtual void around(WrappedFile& f, const Call& call, FunctionRef<void()> run) { run(); }
  static WrappedFile& wrapped(FileHandle& f) { return static_cast<WrappedFile&>(f); }

 private:
  std::unique_ptr<Engine> inner_;
};

// Words for arguments, shared by wrappers and messages: "float64[4, 5] max [inf, 5] chunked".
std::string describe_spec(const DatasetSpec& spec);
// "float64 2.5", "string 'kg'", "strings ['x', 'y']".
std::string describe_value(const AttributeValue& value);

}  // namespace h5loom::engine
