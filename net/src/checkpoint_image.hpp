// A thread's checkpoint as bytes, for the node that holds it (backups.hpp).
//
//   std::string image = checkpoint_image(checkpoint);
//   std::shared_ptr<const detail::Checkpoint> again = load_checkpoint(runtime, image);  // throws WireError
#pragma once

#include "dps/kernel/recovery_log.hpp"
#include "dps/kernel/runtime.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace dps::net {

std::string checkpoint_image(const detail::Checkpoint& checkpoint);
// The graphs its kept objects name are the runtime's: an unknown one is a WireError.
std::shared_ptr<const detail::Checkpoint> load_checkpoint(const Runtime& runtime, std::string_view image);
// Its thread's uid and its epoch, read without loading the rest.
std::pair<std::uint64_t, std::uint32_t> checkpoint_header(std::string_view image);

}  // namespace dps::net
