// What the benchmarks share: the median of their repetitions, and the application of the
// benchmarks that run between two node processes.
//
//   auto app = two_node_application(argc, argv);   // the second process serves inside this call
//   double m = median(times);
#pragma once

#include <dps/dps.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// `program --nodes 2 <its arguments>`: the second node process runs this program too, so the
// application comes before anything else the program does.
inline std::unique_ptr<dps::Application> two_node_application(int argc, char** argv) {
  std::vector<std::string> words{argv[0], "--nodes", "2"};
  for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
  std::vector<char*> args;
  for (auto& w : words) args.push_back(w.data());
  return std::make_unique<dps::Application>(static_cast<int>(args.size()), args.data());
}
