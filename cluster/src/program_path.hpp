// Where a job's program is: named without a folder (lu, lu-sim), the project's own, beside the running
// program once installed (every program goes to one bin/) or where the build tree made it; else
// PATH's. Both cluster drivers start jobs so.
#pragma once

#include <string>

namespace dps::cluster {

std::string program_path(const std::string& name);

}  // namespace dps::cluster
