// What the benchmarks share: the median of their repetitions (median.hpp, calibrate's too), and the application of
// the benchmarks that run between two node processes.
//
//   auto app = two_node_application(argc, argv);   // the second process serves inside this call
//   auto app = node_application(argc, argv, 4);    // and so do the other three
//   double m = median(times);
#pragma once

#include "median.hpp"

#include <dps/dps.hpp>

#include <memory>
#include <string>
#include <vector>

// `program --nodes N <its arguments>`: the other node processes run this program too, so the
// application comes before anything else the program does.
inline std::unique_ptr<dps::Application> node_application(int argc, char** argv, int nodes) {
  std::vector<std::string> words{argv[0], "--nodes", std::to_string(nodes)};
  for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
  std::vector<char*> args;
  for (auto& w : words) args.push_back(w.data());
  return std::make_unique<dps::Application>(static_cast<int>(args.size()), args.data());
}
inline std::unique_ptr<dps::Application> two_node_application(int argc, char** argv) {
  return node_application(argc, argv, 2);
}
