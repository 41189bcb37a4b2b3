// Extracts the C++ examples of Markdown files, one translation unit each, for the test that compiles
// them against the installed package (run.cmake). A ```cpp block is a whole translation unit, unless
// an HTML comment right before it says otherwise:
//
//   <!-- example: fragment -->       statements: compiled as a function's body, after <dps/dps.hpp>
//   <!-- example: fragment           and whatever C++ the comment holds after the word (what the
//   extern dps::Application& app;    fragment takes as given: includes, types, extern declarations);
//   -->
//   <!-- example: declarations ...   declarations (types, functions): compiled as they are, after
//   -->                              <dps/dps.hpp> and the comment's C++;
//   <!-- example: skip REASON -->    not compiled (pseudo code): the reason is required.
//
// Every unit carries #line directives, so a compiler's message names the Markdown file and its line.
//
//   extract OUT_DIR ROOT FILE.md...   writes OUT_DIR/example-N.cpp and OUT_DIR/examples.txt, a line
//                                     "N FILE:LINE" per example (FILE relative to ROOT)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Example {
  std::string where;  // FILE:LINE of its ```cpp line
  std::string unit;   // the translation unit
};

std::string trimmed_left(const std::string& line) { return line.substr(std::min(line.find_first_not_of(" \t"), line.size())); }

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::string line_directive(std::size_t line, const std::string& file) {
  return "#line " + std::to_string(line) + " \"" + file + "\"\n";
}

// A marker: `kind` fragment or skip, `text` what follows the kind (a fragment's C++, a skip's reason)
// with the line it starts on.
struct Marker {
  std::string kind, text;
  std::size_t text_line = 0;
};

class Reader {
 public:
  Reader(const fs::path& path, std::string name) : name_(std::move(name)) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path.string() + ": cannot read it");
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
  }

  void examples(std::vector<Example>& out, std::size_t& skipped) {
    std::optional<Marker> marker;
    std::size_t marker_line = 0;
    for (i_ = 0; i_ < lines_.size(); ++i_) {
      const std::string line = trimmed_left(lines_[i_]);
      if (starts_with(line, "<!-- example:")) {
        marker_line = i_ + 1;
        marker = read_marker();
        continue;
      }
      if (starts_with(line, "```cpp")) {
        const std::size_t fence = i_ + 1;
        const std::string body = read_block(lines_[i_].size() - line.size());
        if (!marker) {
          out.push_back({where(fence), line_directive(fence + 1, name_) + body});
        } else if (marker->kind == "skip") {
          ++skipped;
        } else {
          const bool statements = marker->kind == "fragment";
          out.push_back({where(fence), "#include <dps/dps.hpp>\n" + line_directive(marker->text_line, name_) + marker->text + "\n" +
                                           (statements ? "void documented_fragment() {\n" : "") +
                                           line_directive(fence + 1, name_) + body + (statements ? "}\n" : "")});
        }
        marker.reset();
        continue;
      }
      if (marker && !line.empty()) fail(marker_line, "an example marker must come right before a ```cpp block");
    }
    if (marker) fail(marker_line, "an example marker must come right before a ```cpp block");
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& why) const { throw std::runtime_error(where(line) + ": " + why); }
  std::string where(std::size_t line) const { return name_ + ":" + std::to_string(line); }

  // From the line at i_ (which opens the comment) to the one holding "-->"; leaves i_ there.
  Marker read_marker() {
    const std::size_t first = i_ + 1;
    std::string text = trimmed_left(lines_[i_]).substr(std::string("<!-- example:").size());
    std::size_t text_line = first;
    while (text.find("-->") == std::string::npos) {
      if (++i_ == lines_.size()) fail(first, "the example marker's comment does not end (-->)");
      text += "\n" + lines_[i_];
    }
    const std::size_t end = text.find("-->");
    if (!trimmed_left(text.substr(end + 3)).empty()) fail(i_ + 1, "nothing may follow an example marker's --> on its line");
    text.erase(end);
    text = trimmed_left(text);
    Marker m;
    m.kind = text.substr(0, text.find_first_of(" \t\n"));
    text.erase(0, m.kind.size());
    if (m.kind != "fragment" && m.kind != "declarations" && m.kind != "skip")
      fail(first, "an example marker is 'example: fragment', 'example: declarations' or 'example: skip REASON', not "
                  "'example: " + m.kind + "'");
    // The fragment's C++ starts on the marker's line if anything follows the word there, else on the next.
    const std::size_t newline = text.find('\n');
    if (trimmed_left(text.substr(0, newline)).empty() && newline != std::string::npos) {
      text.erase(0, newline + 1);
      text_line = first + 1;
    }
    if (m.kind == "skip" && trimmed_left(text).empty()) fail(first, "'example: skip' needs its reason");
    m.text = text;
    m.text_line = text_line;
    return m;
  }

  // The block's lines after the fence at i_, without the fence's indentation; leaves i_ on the closing fence.
  std::string read_block(std::size_t indent) {
    const std::size_t fence = i_ + 1;
    std::string body;
    while (true) {
      if (++i_ == lines_.size()) fail(fence, "this ```cpp block does not end");
      const std::string& line = lines_[i_];
      if (starts_with(trimmed_left(line), "```")) return body;
      body += (line.size() >= indent && trimmed_left(line.substr(0, indent)).empty() ? line.substr(indent) : line) + "\n";
    }
  }

  std::string name_;
  std::vector<std::string> lines_;
  std::size_t i_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: extract OUT_DIR ROOT FILE.md...\n");
    return 2;
  }
  try {
    const fs::path out = argv[1], root = argv[2];
    std::vector<Example> examples;
    std::size_t skipped = 0;
    for (int i = 3; i < argc; ++i) Reader(argv[i], fs::relative(argv[i], root).string()).examples(examples, skipped);
    fs::create_directories(out);
    std::ofstream list(out / "examples.txt");
    for (std::size_t n = 0; n < examples.size(); ++n) {
      std::ofstream(out / ("example-" + std::to_string(n) + ".cpp")) << examples[n].unit;
      list << n << ' ' << examples[n].where << '\n';
    }
    std::printf("%zu examples, %zu skipped\n", examples.size(), skipped);
    return list.flush() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "extract: %s\n", e.what());
    return 2;
  }
}
