// The C API of links: deleting, renaming, soft and hard links, creation
// order, and copying objects.
#include <string>

#include "capi/capi_internal.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom::capi;

namespace {

// A link `path` to the path `target` (soft or hard): the same checks, then `make`.
template <class Make>
loom_status make_link(const char* function, loom_group* g, const char* path, const char* target, Make make) {
  return collective(
      function, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
        text(target, "target");
      },
      [&] { make(*g->group, path, target); });
}

}  // namespace

extern "C" {

loom_status loom_group_remove(loom_group* g, const char* path) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
      },
      [&] { g->group->remove(path); });
}

loom_status loom_group_move(loom_group* g, const char* from, const char* to) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(from, "from");
        text(to, "to");
      },
      [&] { g->group->move(from, to); });
}

loom_status loom_group_create_soft_link(loom_group* g, const char* path, const char* target) {
  return make_link(__func__, g, path, target,
                   [](h5loom::Group& group, const char* p, const char* t) { group.create_soft_link(p, t); });
}

loom_status loom_group_create_hard_link(loom_group* g, const char* path, const char* target) {
  return make_link(__func__, g, path, target,
                   [](h5loom::Group& group, const char* p, const char* t) { group.create_hard_link(p, t); });
}

loom_status loom_group_link_count(loom_group* g, const char* path, uint64_t* count) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    need_out(count, "count");
    *count = group.link_count(text(path, "path"));
  });
}

loom_status loom_group_change_reference_count(loom_group* g, const char* path, int delta, uint64_t* count) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
      },
      [&] {
        const uint64_t after = g->group->change_reference_count(path, delta);
        if (count) *count = after;
      });
}

loom_status loom_group_create_external_link(loom_group* g, const char* path, const char* file, const char* target) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
        text(file, "file");
        text(target, "target");
      },
      [&] { g->group->create_external_link(path, file, target); });
}

loom_status loom_group_external_link(loom_group* g, const char* path, int* is_link, char* file, size_t file_size,
                                     size_t* file_needed, char* target, size_t target_size, size_t* target_needed) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    need_out(is_link, "is_link");
    check_string_out(file, file_size);
    check_string_out(target, target_size);
    auto link = group.external_link(text(path, "path"));
    *is_link = link ? 1 : 0;
    copy_out(link ? link->file : "", file, file_size, file_needed);
    copy_out(link ? link->path : "", target, target_size, target_needed);
  });
}

loom_status loom_file_copy_object(loom_file* from, const char* from_path, loom_file* to, const char* to_path,
                                  unsigned flags) {
  return collective(
      __func__, comm_of(from),
      [&] {
        need(from, "from", "file");
        need(to, "to", "file");
        text(from_path, "from_path");
        text(to_path, "to_path");
        if (flags & ~(LOOM_COPY_SHALLOW | LOOM_COPY_WITHOUT_ATTRS | LOOM_COPY_EXPAND_SOFT_LINKS))
          throw h5loom::UsageError(in_call("unknown flags " + std::to_string(flags)));
      },
      [&] {
        h5loom::CopyOptions options;
        options.shallow = flags & LOOM_COPY_SHALLOW;
        options.attributes = !(flags & LOOM_COPY_WITHOUT_ATTRS);
        options.expand_soft_links = flags & LOOM_COPY_EXPAND_SOFT_LINKS;
        h5loom::copy_object(from->file, from_path, to->file, to_path, options);
      });
}

loom_status loom_group_soft_link(loom_group* g, const char* path, int* is_link, char* buf, size_t bufsize,
                                 size_t* needed) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    need_out(is_link, "is_link");
    check_string_out(buf, bufsize);
    auto target = group.soft_link(text(path, "path"));
    *is_link = target ? 1 : 0;
    copy_out(target.value_or(""), buf, bufsize, needed);
  });
}

loom_status loom_group_member_count_created(loom_group* g, size_t* count) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    need_out(count, "count");
    g->members = group.list_in_creation_order();
    *count = g->members.size();
  });
}

}  // extern "C"
