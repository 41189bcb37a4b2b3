// headless(): the environment Qt reads at startup.
#include "dps/viewer/headless.hpp"

#include <QByteArray>
#include <QtGlobal>

#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace dps::viewer {

void headless() {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  if (!qEnvironmentVariableIsSet("XDG_RUNTIME_DIR")) {
    const std::string dir = "/tmp/dps-runtime-" + std::to_string(::getuid());
    ::mkdir(dir.c_str(), 0700);  // Qt accepts it if it is ours and private; otherwise it says so
    qputenv("XDG_RUNTIME_DIR", QByteArray::fromStdString(dir));
  }
}

}  // namespace dps::viewer
