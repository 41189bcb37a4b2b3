// TSPLIB 95 reader: the specification lines, then the data sections, into a symmetric distance matrix.
#include "tsplib.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

namespace tsp {

namespace {

constexpr double kPi = 3.141592;  // TSPLIB's own value: the published GEO optima depend on it
constexpr double kEarthRadius = 6378.388;
constexpr int kMaxCities = 10000;       // the n × n matrix of ints is then 400 MB
constexpr double kMaxCoordinate = 1e8;  // so that every distance fits in an int

constexpr const char* kCoords = "NODE_COORD_SECTION";
constexpr const char* kWeights = "EDGE_WEIGHT_SECTION";

int nint(double x) { return static_cast<int>(x + 0.5); }

// DDD.MM to radians. Degrees by truncation, as TSPLIB's reference code (its text says nint): the
// published optima were computed so.
double geo_radians(double x) {
  const int deg = static_cast<int>(x);
  return kPi * (deg + 5.0 * (x - deg) / 3.0) / 180.0;
}

// The names of each enum's values, in order.
enum class Weights { euc_2d, ceil_2d, att, geo, explicit_matrix };
constexpr std::string_view kWeightTypes[] = {"EUC_2D", "CEIL_2D", "ATT", "GEO", "EXPLICIT"};
enum class Format { function, full_matrix, upper_row, lower_row, upper_diag_row, lower_diag_row };
constexpr std::string_view kFormats[] = {"FUNCTION",  "FULL_MATRIX",    "UPPER_ROW",
                                         "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW"};
constexpr std::string_view kCoordTypes[] = {"TWOD_COORDS", "NO_COORDS"};

// The columns [first, last) that row i of a weight format lists.
std::pair<int, int> row_columns(Format format, int n, int i) {
  switch (format) {
    case Format::upper_row: return {i + 1, n};
    case Format::lower_row: return {0, i};
    case Format::upper_diag_row: return {i, n};
    case Format::lower_diag_row: return {0, i + 1};
    default: return {0, n};
  }
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> tokens;
  for (s = trim(s); !s.empty(); s = trim(s)) {
    const auto end = std::min(s.find_first_of(" \t\r"), s.size());
    tokens.push_back(s.substr(0, end));
    s.remove_prefix(end);
  }
  return tokens;
}

// "KEYWORD : value", "KEYWORD: value", or a section's "KEYWORD" alone.
std::pair<std::string_view, std::string_view> keyword_value(std::string_view line) {
  line = trim(line);
  const auto end = std::min(line.find_first_of(": \t"), line.size());
  std::string_view value = trim(line.substr(end));
  if (value.starts_with(':')) value = trim(value.substr(1));
  return {line.substr(0, end), value};
}

// Data lines begin with a number; anything else is the next keyword.
bool is_data(std::string_view token) {
  const char c = token.front();
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
}

template <class T>
std::optional<T> number(std::string_view s) {
  T value{};
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// A value from the file, quoted and cut short: messages stay one short line.
std::string quote(std::string_view s) {
  constexpr std::size_t kShown = 40;
  std::string quoted = "'";  // built by append: GCC 12 warns falsely on "'" + std::string (-Wrestrict)
  return quoted.append(s.substr(0, kShown)).append(s.size() > kShown ? "...'" : "'");
}

class Parser {
 public:
  Parser(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}

  Instance parse() {
    bool more = next_line();
    while (more) {
      const std::string key(keyword_value(text_).first);  // a copy: a section reads on past this line
      if (key.empty()) {
        more = next_line();
      } else if (key == "EOF") {
        break;
      } else if (key.ends_with("_SECTION")) {
        more = section(key);
      } else {
        specification(key, keyword_value(text_).second);
        more = next_line();
      }
    }
    return finish();
  }

 private:
  [[noreturn]] void fail(std::string_view keyword, const std::string& why) const {
    throw FormatError(source_ + ":" + std::to_string(std::max(line_, 1)) + ": " + std::string(keyword) + ": " + why);
  }

  bool next_line() {
    if (!std::getline(in_, text_)) return false;
    ++line_;
    return true;
  }

  // The index of value among names.
  template <std::size_t N>
  std::size_t choose(std::string_view key, std::string_view value, const std::string_view (&names)[N]) const {
    for (std::size_t i = 0; i < N; ++i)
      if (names[i] == value) return i;
    std::string all;
    for (const std::string_view name : names) all.append(all.empty() ? "" : ", ").append(name);
    fail(key, quote(value) + " is not supported (" + all + ")");
  }

  void specification(const std::string& key, std::string_view value) {
    if (key == "NAME") {
      instance_.name = value;
    } else if (key == "COMMENT") {
      if (!instance_.comment.empty()) instance_.comment += ' ';
      instance_.comment += value;
    } else if (key == "TYPE") {
      if (value != "TSP") fail(key, quote(value) + " is not supported (TSP only: symmetric distances)");
    } else if (key == "DIMENSION") {
      dimension(key, value);
    } else if (key == "EDGE_WEIGHT_TYPE") {
      weights_ = static_cast<Weights>(choose(key, value, kWeightTypes));
    } else if (key == "EDGE_WEIGHT_FORMAT") {
      format_ = static_cast<Format>(choose(key, value, kFormats));
    } else if (key == "NODE_COORD_TYPE") {
      choose(key, value, kCoordTypes);
    } else if (key != "DISPLAY_DATA_TYPE") {  // where to draw the cities: not needed
      fail(key, "unknown keyword");
    }
  }

  void dimension(std::string_view key, std::string_view value) {
    const auto n = number<int>(value);
    if (!n) fail(key, quote(value) + " is not a number");
    if (n_ != 0) fail(key, "given twice");
    if (*n < 3) fail(key, "fewer than 3 cities (" + std::to_string(*n) + ")");
    if (*n > kMaxCities) fail(key, "more than " + std::to_string(kMaxCities) + " cities (" + std::to_string(*n) + ")");
    n_ = *n;
    distances_.assign(static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_), 0);
  }

  // Returns whether a line follows the section (in text_).
  bool section(const std::string& key) {
    if (key == "FIXED_EDGES_SECTION") fail(key, "fixed edges are not supported");
    if (key != kCoords && key != kWeights && key != "DISPLAY_DATA_SECTION") fail(key, "unknown keyword");
    if (n_ == 0) fail(key, "no DIMENSION before the section");
    if (key == kCoords) return node_coords();
    if (key == kWeights) return edge_weights();
    return each_data_line([](const auto&) {});  // display positions: not needed
  }

  // Calls f with the tokens of each line of a section, up to the next keyword (left in text_).
  template <class F>
  bool each_data_line(F f) {
    while (next_line()) {
      const auto tokens = split(text_);
      if (tokens.empty()) continue;
      if (!is_data(tokens.front())) return true;
      f(tokens);
    }
    return false;
  }

  bool node_coords() {
    x_.assign(static_cast<std::size_t>(n_), 0.0);
    y_ = x_;
    std::vector<int> given(static_cast<std::size_t>(n_), 0);  // the line of each city, 0 before it
    int count = 0;
    const bool more = each_data_line([&](const auto& t) {
      if (t.size() != 3) fail(kCoords, "expected 'index x y', got " + quote(trim(text_)));
      const auto index = number<int>(t[0]);
      if (!index || *index < 1 || *index > n_)
        fail(kCoords, "city " + quote(t[0]) + " is not in 1.." + std::to_string(n_));
      const auto i = static_cast<std::size_t>(*index - 1);
      if (given[i] != 0)
        fail(kCoords, "city " + std::to_string(*index) + " again (line " + std::to_string(given[i]) + ")");
      given[i] = line_;
      x_[i] = coordinate(t[1]);
      y_[i] = coordinate(t[2]);
      ++count;
    });
    if (count != n_)
      fail("DIMENSION", std::to_string(n_) + " but " + kCoords + " has " + std::to_string(count) + " cities");
    has_coords_ = true;
    return more;
  }

  double coordinate(std::string_view token) const {
    const auto v = number<double>(token);
    if (!v || !(std::abs(*v) <= kMaxCoordinate))
      fail(kCoords, quote(token) + " is not a coordinate (a number up to 1e8 in size)");
    return *v;
  }

  bool edge_weights() {
    if (weights_ != Weights::explicit_matrix) fail(kWeights, "EDGE_WEIGHT_TYPE must be EXPLICIT before it");
    if (!format_ || *format_ == Format::function)
      fail("EDGE_WEIGHT_FORMAT", "missing: EXPLICIT weights need a matrix format");
    const Format format = *format_;
    std::size_t needed = 0;
    for (int r = 0; r < n_; ++r) {
      const auto [first, last] = row_columns(format, n_, r);
      needed += static_cast<std::size_t>(last - first);
    }
    // (i, j) walks the format's rows in order; i starts before the first so that advance() finds it.
    int i = -1, j = 0, last = 0;
    const auto advance = [&] {
      ++j;
      while (j >= last && ++i < n_) std::tie(j, last) = row_columns(format, n_, i);
    };
    advance();
    std::size_t count = 0;
    const auto too_few = [&](const std::string& had) {
      return "DIMENSION " + std::to_string(n_) + " needs " + std::to_string(needed) + " weights, the section has " +
             had;
    };
    const bool more = each_data_line([&](const auto& tokens) {
      for (const std::string_view token : tokens) {
        if (count == needed) fail(kWeights, too_few("more"));
        const auto w = number<int>(token);
        if (!w) fail(kWeights, quote(token) + " is not an integer");
        if (*w < 0) fail(kWeights, "weight " + std::to_string(*w) + " is negative");
        store(format, i, j, *w);
        ++count;
        advance();
      }
    });
    if (count < needed) fail(kWeights, too_few(std::to_string(count)));
    has_weights_ = true;
    return more;
  }

  int& at(int i, int j) {
    return distances_[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j)];
  }

  void store(Format format, int i, int j, int w) {
    if (i == j) return;  // the diagonal is 0 whatever the file puts there
    int& mirror = at(j, i);
    if (format == Format::full_matrix && j < i && mirror != w)
      fail(kWeights, "not symmetric: cities " + std::to_string(j + 1) + " and " + std::to_string(i + 1) + " are " +
                         std::to_string(mirror) + " apart one way, " + std::to_string(w) + " the other");
    at(i, j) = mirror = w;
  }

  Instance finish() {
    if (n_ == 0) fail("DIMENSION", "missing");
    if (!weights_) fail("EDGE_WEIGHT_TYPE", "missing");
    const bool explicit_matrix = *weights_ == Weights::explicit_matrix;
    if (explicit_matrix && !has_weights_)
      fail(kWeights, has_coords_ ? "missing: EDGE_WEIGHT_TYPE is EXPLICIT, so the coordinates do not give the distances"
                                 : "missing: the file gives no distances");
    if (!explicit_matrix && !has_coords_) fail(kCoords, "missing: the file gives no distances");
    if (!explicit_matrix) from_coordinates();
    Instance instance = Instance::from_matrix(std::move(instance_.name), n_, std::move(distances_));
    instance.comment = std::move(instance_.comment);
    return instance;
  }

  void from_coordinates() {
    constexpr int (*kDistance[])(double, double, double, double) = {euc_2d, ceil_2d, att, geo};  // as Weights
    const auto distance = kDistance[static_cast<std::size_t>(*weights_)];
    for (int i = 0; i < n_; ++i) {
      const auto a = static_cast<std::size_t>(i);
      for (int j = i + 1; j < n_; ++j) {
        const auto b = static_cast<std::size_t>(j);
        at(i, j) = at(j, i) = distance(x_[a], y_[a], x_[b], y_[b]);  // GEO: x is the latitude
      }
    }
  }

  std::istream& in_;
  std::string source_, text_;
  int line_ = 0;
  Instance instance_;  // name and comment until finish()
  int n_ = 0;
  std::optional<Weights> weights_;
  std::optional<Format> format_;
  std::vector<double> x_, y_;
  std::vector<int> distances_;
  bool has_coords_ = false, has_weights_ = false;
};

}  // namespace

Instance Instance::from_matrix(std::string name, int n, std::vector<int> distances) {
  if (n < 3) throw std::invalid_argument("an instance needs at least 3 cities, not " + std::to_string(n));
  const auto size = static_cast<std::size_t>(n);
  if (distances.size() != size * size)
    throw std::invalid_argument(std::to_string(n) + " cities need " + std::to_string(size * size) + " distances, not " +
                                std::to_string(distances.size()));
  for (std::size_t i = 0; i < size; ++i) {
    if (distances[i * size + i] != 0)
      throw std::invalid_argument("the distance from city " + std::to_string(i) + " to itself is not 0");
    for (std::size_t j = 0; j < i; ++j)
      if (distances[i * size + j] != distances[j * size + i])
        throw std::invalid_argument("the distances between cities " + std::to_string(j) + " and " + std::to_string(i) +
                                    " differ by direction");
  }
  Instance instance;
  instance.name = std::move(name);
  instance.n = n;
  instance.distances = std::move(distances);
  return instance;
}

Instance parse_tsplib(std::istream& in, const std::string& source) { return Parser(in, source).parse(); }

Instance read_tsplib(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FormatError(path + ": cannot open");
  return parse_tsplib(in, std::filesystem::path(path).filename().string());
}

int euc_2d(double xi, double yi, double xj, double yj) {
  const double xd = xi - xj, yd = yi - yj;
  return nint(std::sqrt(xd * xd + yd * yd));
}

int ceil_2d(double xi, double yi, double xj, double yj) {
  const double xd = xi - xj, yd = yi - yj;
  return static_cast<int>(std::ceil(std::sqrt(xd * xd + yd * yd)));
}

int att(double xi, double yi, double xj, double yj) {
  const double xd = xi - xj, yd = yi - yj;
  const double r = std::sqrt((xd * xd + yd * yd) / 10.0);
  const int t = nint(r);
  return t < r ? t + 1 : t;
}

int geo(double lat_i, double lon_i, double lat_j, double lon_j) {
  const double q1 = std::cos(geo_radians(lon_i) - geo_radians(lon_j));
  const double q2 = std::cos(geo_radians(lat_i) - geo_radians(lat_j));
  const double q3 = std::cos(geo_radians(lat_i) + geo_radians(lat_j));
  // Rounding can take the cosine just past ±1 for near cities, where acos would give NaN.
  const double c = std::clamp(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0);
  return static_cast<int>(kEarthRadius * std::acos(c) + 1.0);
}

std::map<std::string, long> optima_beside(const std::string& tsp_file) {
  std::map<std::string, long> known;
  std::ifstream in(std::filesystem::path(tsp_file).parent_path() / "OPTIMA.txt");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    long length = 0;
    if (!line.starts_with("#") && words >> name >> length) known[name] = length;
  }
  return known;
}

}  // namespace tsp
