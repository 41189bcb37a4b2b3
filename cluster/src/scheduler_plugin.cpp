#include "dps/cluster/scheduler_plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <utility>

namespace dps::cluster {

namespace {

using Library = std::unique_ptr<void, int (*)(void*)>;  // a dlopen handle, dlclosed

// The library's scheduler, and the library: unloaded after the scheduler is gone (its code, its
// vtable): members go in reverse order.
class Loaded final : public Scheduler {
 public:
  Loaded(Library library, Scheduler* inner) : library_(std::move(library)), inner_(inner) {}
  std::string name() const override { return inner_->name(); }
  void schedule(Cluster& cluster) override { inner_->schedule(cluster); }
  std::size_t resize(Cluster& cluster, const Running& job, const ResizePoint& point) override {
    return inner_->resize(cluster, job, point);
  }
  void ended(Cluster& cluster, const Running& job) override { inner_->ended(cluster, job); }

 private:
  Library library_;
  std::unique_ptr<Scheduler> inner_;
};

}  // namespace

std::unique_ptr<Scheduler> load_scheduler(const std::string& path) {
  const std::string what = "--scheduler " + path;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) throw std::invalid_argument(what + ": no such file");
  Library library(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL), ::dlclose);
  if (!library) throw std::invalid_argument(what + ": cannot load it: " + ::dlerror());
  using Factory = Scheduler* (*)();
  const auto factory = reinterpret_cast<Factory>(::dlsym(library.get(), "dps_cluster_scheduler"));
  if (!factory)
    throw std::invalid_argument(what +
                                ": defines no scheduler (DPS_CLUSTER_SCHEDULER, dps/cluster/scheduler_plugin.hpp)");
  Scheduler* made = nullptr;
  try {
    made = factory();
  } catch (const std::exception& e) {
    throw std::invalid_argument(what + ": its scheduler failed to start: " + e.what());
  }
  if (!made) throw std::invalid_argument(what + ": its factory made no scheduler");
  return std::make_unique<Loaded>(std::move(library), made);
}

}  // namespace dps::cluster
