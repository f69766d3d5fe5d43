// The C API of links: deleting, renaming, soft links, creation order.
#include <string>

#include "capi/capi_internal.hpp"

using namespace h5loom::capi;

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
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
        text(target, "target");
      },
      [&] { g->group->create_soft_link(path, target); });
}

loom_status loom_group_create_hard_link(loom_group* g, const char* path, const char* target) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
        text(target, "target");
      },
      [&] { g->group->create_hard_link(path, target); });
}

loom_status loom_group_link_count(loom_group* g, const char* path, uint64_t* count) {
  return guarded(__func__, [&] {
    auto& group = as_group(g, "g");
    need_out(count, "count");
    *count = group.link_count(text(path, "path"));
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
