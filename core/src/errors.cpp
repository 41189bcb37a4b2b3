// Turning a caught exception into the reason an error reports.
#include "dps/errors.hpp"

namespace dps {

std::string describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace dps
