#include "engines/log/scan.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engines/log/log_store.hpp"
#include "h5loom/errors.hpp"

namespace h5loom::logengine {

using namespace logfmt;

LogState scan_log(LogStore& store, const std::string& front) {
  LogState st;
  const std::string lp = log_path(front), cp = commits_path(front);
  auto log = store.open(lp, LogStore::Access::Read);
  if (!log.file) {
    if (log.error == ENOENT)
      throw NotFoundError("file '" + front + "' has no log (" + lp + " does not exist); is it a log-engine file?");
    throw IOError(with_reason("cannot open " + lp, log.error));
  }
  auto commits = store.open(cp, LogStore::Access::Read);
  if (!commits.file)
    throw CorruptionError(with_reason("log file '" + front + "' has no commit journal (" + cp + ")", commits.error));

  st.log_file_size = log.file->size();
  std::vector<unsigned char> head(kLogHeaderSize);
  if (st.log_file_size < 44) throw CorruptionError(lp + " is too short to be an h5loom log (" +
                                                   std::to_string(st.log_file_size) + " bytes)");
  log.file->read(head.data(), std::min<uint64_t>(kLogHeaderSize, st.log_file_size), 0, "reading " + lp);
  try {
    st.header = LogHeader::decode(head.data(), head.size(), lp);
  } catch (const IOError& e) {
    throw CorruptionError(e.what());
  }

  const uint64_t csize = commits.file->size();
  std::vector<unsigned char> journal(csize);
  if (csize) commits.file->read(journal.data(), csize, 0, "reading " + cp);
  if (csize < kCommitsHeaderSize || std::memcmp(journal.data(), kCommitsMagic, 8) != 0)
    throw CorruptionError(cp + " is not an h5loom commit journal");
  if (std::memcmp(journal.data() + 12, st.header.file_id, 16) != 0)
    throw CorruptionError(cp + " belongs to another log (file ids differ)");
  if (crc32c(journal.data(), 28) != Reader{journal.data(), csize, 28, cp}.u32())
    throw CorruptionError(cp + ": checksum mismatch in the journal header");

  // The commit records, up to the first that is not valid. A crash can leave
  // a short record, or a whole one of zeros (the size grew, the data did not
  // land); a record is 64-byte aligned, so no sector boundary tears it. So a
  // whole, non-zero record with a bad checksum is damage, not a crash: it is
  // reported and never cut away, and readers stop at the last intact epoch.
  auto damaged = [&](const std::string& why) {
    if (st.damage.empty()) st.damage = why;
  };
  uint64_t at = kCommitsHeaderSize;
  for (; at + kCommitRecordSize <= csize; at += kCommitRecordSize) {
    CommitRecord c;
    const unsigned char* rec = journal.data() + at;
    if (!CommitRecord::decode(rec, c)) {
      if (std::any_of(rec, rec + kCommitRecordSize, [](unsigned char b) { return b != 0; }))
        damaged(cp + ": commit record of epoch " + std::to_string(st.commits.size() + 1) + " (byte " +
                std::to_string(at) + ") is damaged: a whole record with a bad checksum, which a crash cannot leave");
      break;
    }
    if (c.epoch != st.commits.size() + 1) {
      damaged(cp + ": commit record " + std::to_string(st.commits.size() + 1) + " says epoch " +
              std::to_string(c.epoch));
      break;
    }
    st.commits.push_back(c);
  }
  // Only the last record may be missing or torn (a commit interrupted while being written).
  for (uint64_t later = at + kCommitRecordSize; later + kCommitRecordSize <= csize; later += kCommitRecordSize) {
    CommitRecord c;
    if (CommitRecord::decode(journal.data() + later, c))
      damaged(cp + ": commit record at byte " + std::to_string(at) + " is damaged but later ones are valid");
  }
  st.torn_commit_bytes = st.damage.empty() ? csize - at : 0;

  // The index records; a damaged or missing one ends the intact epochs.
  for (std::size_t i = 0; i < st.commits.size(); ++i) {
    const auto& c = st.commits[i];
    std::string what = lp + ": index record of epoch " + std::to_string(c.epoch);
    const bool inside = c.index_offset <= st.log_file_size && c.index_size <= st.log_file_size - c.index_offset &&
                        c.log_end <= st.log_file_size && c.index_size <= (uint64_t(1) << 34);
    if (!inside) {
      damaged(what + " lies beyond the end of the log (" + std::to_string(st.log_file_size) + " bytes; truncated?)");
    } else {
      std::vector<unsigned char> rec(c.index_size);
      log.file->read(rec.data(), rec.size(), c.index_offset, "reading " + what);
      if (crc32c(rec.data(), rec.size()) == c.index_crc) {
        st.index_records.push_back(std::move(rec));
        st.log_end = c.log_end;
        continue;
      }
      damaged("checksum mismatch in " + what);
    }
    st.commits.resize(i);
    break;
  }
  st.torn_log_bytes = st.log_file_size > st.log_end ? st.log_file_size - st.log_end : 0;
  return st;
}

}  // namespace h5loom::logengine
