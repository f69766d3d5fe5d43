// CRC32C (Castagnoli; iSCSI), computed by ISA-L: the checksum of the log
// engine's records and data, and of the Zarr engine's chunks (Zarr's crc32c codec).
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5loom {

// Initial value ~0, final xor ~0, as in RFC 3720. Chained calls continue a
// checksum: crc32c(b, m, crc32c(a, n)) is the CRC of a then b.
uint32_t crc32c(const void* data, std::size_t n, uint32_t crc = 0);

}  // namespace h5loom
