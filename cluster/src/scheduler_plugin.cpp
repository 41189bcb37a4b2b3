#include "dps/cluster/scheduler_plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

namespace dps::cluster {

namespace {

// The library's scheduler, and the library: unloaded after the scheduler is gone (its code, its vtable).
class Loaded final : public Scheduler {
 public:
  Loaded(void* library, Scheduler* inner) : library_(library), inner_(inner) {}
  ~Loaded() override {
    inner_.reset();
    ::dlclose(library_);
  }
  std::string name() const override { return inner_->name(); }
  void schedule(Cluster& cluster) override { inner_->schedule(cluster); }
  std::size_t resize(Cluster& cluster, const Running& job, const ResizePoint& point) override {
    return inner_->resize(cluster, job, point);
  }
  void ended(Cluster& cluster, const Running& job) override { inner_->ended(cluster, job); }

 private:
  void* library_;
  std::unique_ptr<Scheduler> inner_;
};

}  // namespace

std::unique_ptr<Scheduler> load_scheduler(const std::string& path) {
  const std::string what = "--scheduler " + path;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) throw std::invalid_argument(what + ": no such file");
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) throw std::invalid_argument(what + ": cannot load it: " + ::dlerror());
  using Factory = Scheduler* (*)();
  const auto factory = reinterpret_cast<Factory>(::dlsym(library, "dps_cluster_scheduler"));
  if (!factory) {
    ::dlclose(library);
    throw std::invalid_argument(what + ": defines no scheduler (DPS_CLUSTER_SCHEDULER, dps/cluster/scheduler_plugin.hpp)");
  }
  Scheduler* made = nullptr;
  try {
    made = factory();
  } catch (const std::exception& e) {
    ::dlclose(library);
    throw std::invalid_argument(what + ": its scheduler failed to start: " + e.what());
  }
  if (!made) {
    ::dlclose(library);
    throw std::invalid_argument(what + ": its factory made no scheduler");
  }
  return std::make_unique<Loaded>(library, made);
}

}  // namespace dps::cluster
