// Cli: the command-line conventions of every DPS executable: --help, a one-line error and exit code 2
// on bad input, options given as `--name value`.
//
//   int main(int argc, char** argv) {
//     return dps::run_main("pi", [&] {
//       dps::Application app(argc, argv);              // takes --nodes and --workers
//       long n = 1000;
//       dps::Cli cli("pi", "Integrates 4/(1+x^2) on a flow graph.");
//       cli.option("--intervals", n, "number of intervals");
//       if (!cli.parse(app.args(), dps::Application::options_help())) return 0;   // --help printed
//       ...
//       return 0;
//     });
//   }
#pragma once

#include <cstddef>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace dps {

class Cli {
 public:
  Cli(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}

  Cli& option(std::string name, long& value, std::string help) { return add(std::move(name), &value, std::move(help)); }
  Cli& option(std::string name, double& value, std::string help) {
    return add(std::move(name), &value, std::move(help));
  }
  Cli& option(std::string name, std::string& value, std::string help) {
    return add(std::move(name), &value, std::move(help));
  }
  Cli& flag(std::string name, bool& value, std::string help) { return add(std::move(name), &value, std::move(help)); }

  // Reads `args`; prints the usage and returns false on --help; throws std::invalid_argument with a
  // one-line reason on anything it does not understand. `more` is appended to the usage.
  bool parse(const std::vector<std::string>& args, const std::string& more = "") const;
  bool parse(int argc, char** argv) const { return parse(std::vector<std::string>(argv + 1, argv + argc)); }
  std::string usage(const std::string& more = "") const;

 private:
  struct Option {
    std::string name, help;
    std::variant<long*, double*, std::string*, bool*> target;
  };
  template <class T>
  Cli& add(std::string name, T* target, std::string help) {
    options_.push_back({std::move(name), std::move(help), target});
    return *this;
  }
  std::string program_, summary_;
  std::vector<Option> options_;
};

// The value of a count option (--nodes 4): throws std::invalid_argument "OPTION expects a positive
// integer, got 'TEXT'" otherwise. For parsers that pick their options out of others' (the backends').
std::size_t positive_count(const std::string& option, const std::string& text);

// The value of a positive real option (--checkpoint-every 0.5): throws std::invalid_argument
// "OPTION expects a positive number, got 'TEXT'" otherwise.
double positive_number(const std::string& option, const std::string& text);

// A whole number (--speeds 3=2): throws std::invalid_argument "OPTION expects whole numbers, got 'TEXT'".
long whole_number(const std::string& option, const std::string& text);

// Resize points, "STEP:COUNT[,STEP:COUNT...]" (--resize 50:4,100:2: after step 50, 4 threads; after
// 100, 2): `form` names them in errors ("ITERATION:THREADS"). Throws std::invalid_argument.
std::map<long, long> resize_points(const std::string& option, const std::string& text, const std::string& form);

// The words after "--" in `args` (a program and its arguments, as `dps-submit --nodes 2 -- lu --n 512`
// gives them), taken out of `args` with the "--"; empty without one.
std::vector<std::string> words_after_dashes(std::vector<std::string>& args);

// Runs `body`; an exception becomes "program: reason" on stderr and exit code 2.
template <class F>
int run_main(const char* program, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
}

}  // namespace dps
