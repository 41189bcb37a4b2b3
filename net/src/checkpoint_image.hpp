// A thread's checkpoint as bytes, for the node that holds it (backups.hpp).
//
//   std::string image = checkpoint_image(checkpoint);     // or write_checkpoint(writer, checkpoint)
//   std::shared_ptr<const detail::Checkpoint> again = load_checkpoint(runtime, image);  // throws WireError
//   write_moving_records(writer, records);  load_moving_records(runtime, image);       // a migration's
#pragma once

#include "dps/kernel/recovery_log.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/wire_archive.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace dps::net {

std::string checkpoint_image(const detail::Checkpoint& checkpoint);
// The same bytes written to `out`, whose large parts (the state) stay where they lie in `checkpoint`.
void write_checkpoint(WireWriter& out, const detail::Checkpoint& checkpoint);
// The graphs its kept objects name are the runtime's: an unknown one is a WireError.
std::shared_ptr<const detail::Checkpoint> load_checkpoint(const Runtime& runtime, std::string_view image);
// A migrating thread's records (Thread::records_to_move), written and loaded the same way.
void write_moving_records(WireWriter& out, const detail::MovingRecords& records);
detail::MovingRecords load_moving_records(const Runtime& runtime, std::string_view image);
// Its thread's uid and its epoch, read without loading the rest.
std::pair<std::uint64_t, std::uint32_t> checkpoint_header(std::string_view image);

}  // namespace dps::net
