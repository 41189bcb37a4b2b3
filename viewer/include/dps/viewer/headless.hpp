// Drawing without a display: call before constructing the Q(Gui)Application of a tool or test
// that only renders images. Picks Qt's offscreen platform unless one is chosen, and gives Qt a
// private runtime directory when XDG_RUNTIME_DIR is unset (as under CI), so it does not warn.
//
//   dps::viewer::headless();
//   QGuiApplication app(argc, argv);
#pragma once

namespace dps::viewer {

void headless();

}  // namespace dps::viewer
